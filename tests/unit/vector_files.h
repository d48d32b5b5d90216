/* The shared vectors' files: every *.json file of a folder, as malloc'd
 * paths sorted by name (the vectors' numbers order them). For the unit tests
 * that run a folder of tests/vectors/ (watcher, drive). */
#ifndef TELESCOPE_TEST_VECTOR_FILES_H
#define TELESCOPE_TEST_VECTOR_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int vector_files_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Fills paths with at most max files of dir; returns how many (0: no folder). */
static int vector_files_list(const char *dir, char **paths, int max) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < max) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
    size_t size = strlen(dir) + len + 2;
    char *p = malloc(size);
    if (!p) break;
    snprintf(p, size, "%s/%s", dir, e->d_name);
    paths[n++] = p;
  }
  closedir(d);
  qsort(paths, (size_t)n, sizeof *paths, vector_files_cmp);
  return n;
}

#endif
