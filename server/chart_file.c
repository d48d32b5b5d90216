/* realpath is XSI: POSIX.1-2008 with the X/Open System Interfaces. */
#define _XOPEN_SOURCE 700

#include "chart_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the file ---------------------------------------------------------- */

/* mkdir -p: every missing component of dir, in order. */
static int mkdir_parents(const char *dir, char *err, size_t errlen) {
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
    snprintf(err, errlen, "chart directory path too long");
    return -1;
  }
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char keep = *p;
      *p = '\0';
      if (mkdir(buf, 0777) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create directory %s: %s", buf, strerror(errno));
        return -1;
      }
      *p = keep;
      if (!keep) break;
    }
  }
  struct stat st;
  if (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "%s is not a directory", buf);
    return -1;
  }
  return 0;
}

int chart_file_write(const char *dir, const char *name, const char *text, char *path,
                     size_t pathlen, char *err, size_t errlen) {
  char abs[4096], tmp[4096 + 64];
  const char *d = dir && *dir ? dir : ".";
  if (mkdir_parents(d, err, errlen) < 0) return -1;
  if (!realpath(d, abs)) {
    snprintf(err, errlen, "cannot resolve %s: %s", d, strerror(errno));
    return -1;
  }
  const char *dot = strrchr(name, '.');
  int stem = dot ? (int)(dot - name) : (int)strlen(name);
  const char *ext = dot ? dot : "";
  int found = 0;
  for (int k = 1; k <= 100 && !found; k++) {
    int w = k == 1 ? snprintf(path, pathlen, "%s/%s", abs, name)
                   : snprintf(path, pathlen, "%s/%.*s-%d%s", abs, stem, name, k, ext);
    if (w < 0 || (size_t)w >= pathlen) {
      snprintf(err, errlen, "chart path too long");
      return -1;
    }
    if (access(path, F_OK) < 0 && errno == ENOENT) found = 1;
  }
  if (!found) {
    snprintf(err, errlen, "%s and 99 numbered variants exist already", name);
    return -1;
  }
  snprintf(tmp, sizeof tmp, "%s/.%.*s.tmp-XXXXXX", abs, stem > 200 ? 200 : stem, name);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    snprintf(err, errlen, "cannot create a file in %s: %s", abs, strerror(errno));
    return -1;
  }
  size_t len = strlen(text), off = 0;
  while (off < len) {
    ssize_t w = write(fd, text + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      snprintf(err, errlen, "cannot write %s: %s", tmp, w < 0 ? strerror(errno) : "short write");
      goto fail;
    }
    off += (size_t)w;
  }
  /* mkstemp makes the file private; a chart is meant to be opened by people. */
  if (fchmod(fd, 0644) < 0 || close(fd) < 0) {
    fd = -1;
    snprintf(err, errlen, "cannot finish %s: %s", tmp, strerror(errno));
    goto fail;
  }
  fd = -1;
  if (rename(tmp, path) < 0) {
    snprintf(err, errlen, "cannot rename to %s: %s", path, strerror(errno));
    goto fail;
  }
  return 0;

fail:
  if (fd >= 0) close(fd);
  unlink(tmp);
  return -1;
}

int chart_file_uri(const char *abs_path, char *uri, size_t len) {
  static const char hex[] = "0123456789ABCDEF";
  size_t o = 0;
  const char *scheme = "file://";
  for (const char *p = scheme; *p; p++) {
    if (o + 1 >= len) return -1;
    uri[o++] = *p;
  }
  for (const unsigned char *p = (const unsigned char *)abs_path; *p; p++) {
    int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                strchr("-._~/", *p);
    if (o + (plain ? 1 : 3) >= len) return -1;
    if (plain) {
      uri[o++] = (char)*p;
    } else {
      uri[o++] = '%';
      uri[o++] = hex[*p >> 4];
      uri[o++] = hex[*p & 15];
    }
  }
  uri[o] = '\0';
  return 0;
}
