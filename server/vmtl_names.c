#include "vmtl_names.h"

#include <stdint.h>
#include <string.h>

/* Length of the well-formed UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  uint32_t min, cp;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF)
    len = 2, min = 0x80, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF)
    len = 3, min = 0x800, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4)
    len = 4, min = 0x10000, cp = c & 0x07;
  else
    return 0;
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

/* Copies at most VMTL_NAME_MAX - 1 bytes of s, whole UTF-8 sequences only; an invalid byte
 * becomes '?' and an embedded NUL ends the name, so the copy is always valid C and UTF-8. */
void vmtl_copy_name(char *out, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t o = 0, i = 0;
  while (i < n && u[i] != 0) {
    size_t len = utf8_seq(u + i, n - i);
    if (o + (len ? len : 1) > VMTL_NAME_MAX - 1) break;
    if (len == 0) {
      out[o++] = '?';
      i++;
    } else {
      memcpy(out + o, u + i, len);
      o += len;
      i += len;
    }
  }
  out[o] = '\0';
}

/* ---- thread classes ----------------------------------------------------------- */

static int ends_with(const char *s, size_t n, const char *suffix) {
  size_t k = strlen(suffix);
  if (n == k) return memcmp(s, suffix, k) == 0;
  return n > k && s[n - k - 1] == '.' && memcmp(s + n - k, suffix, k) == 0;
}

vmtl_cls_t vmtl_thread_class(const char *s, size_t n) {
  /* The VM decorates every name as "<name> (<tid>)"; strip that one suffix. */
  if (n >= 4 && s[n - 1] == ')') {
    size_t i = n - 1;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') i--;
    if (i < n - 1 && i > 0 && s[i - 1] == '-') i--;
    if (i >= 2 && i < n - 1 && s[i - 1] == '(' && s[i - 2] == ' ') n = i - 2;
  }
  if (n == 0) return VMTL_CLS_UNKNOWN;
  if (ends_with(s, n, "ui")) return VMTL_CLS_UI;
  if (ends_with(s, n, "raster") || ends_with(s, n, "gpu")) return VMTL_CLS_RASTER;
  if (ends_with(s, n, "platform")) return VMTL_CLS_PLATFORM;
  return VMTL_CLS_OTHER;
}

vmtl_thread_t vmtl_thread_public(vmtl_cls_t c) {
  switch (c) {
    case VMTL_CLS_UI:
    case VMTL_CLS_PLATFORM:
      return VMTL_THREAD_UI;
    case VMTL_CLS_RASTER:
      return VMTL_THREAD_RASTER;
    case VMTL_CLS_OTHER:
      return VMTL_THREAD_OTHER;
    default:
      return VMTL_THREAD_UNKNOWN;
  }
}

vmtl_thread_t vmtl_thread_classify(const char *name) {
  return name ? vmtl_thread_public(vmtl_thread_class(name, strlen(name))) : VMTL_THREAD_UNKNOWN;
}
