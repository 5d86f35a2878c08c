/* See proc.h. */
#include "support/proc.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long sl_test_status_kib(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  size_t n = strlen(field);
  char line[256];
  long v = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0 && line[n] == ':') {
      if (sscanf(line + n + 1, "%ld", &v) != 1)
        v = -1;
      break;
    }
  fclose(f);
  return v;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* valgrind preloads its vgpreload_*.so into the program it runs. */
static int under_valgrind(void) {
  const char *vg = getenv("SLUICE_TEST_VALGRIND");
  if (vg && *vg && strcmp(vg, "0") != 0)
    return 1;
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f)
    return 0;
  char line[512];
  int found = 0;
  while (!found && fgets(line, sizeof line, f))
    found = strstr(line, "/vgpreload_") != NULL;
  fclose(f);
  return found;
}

int sl_test_rss_is_meaningful(void) {
  return !SANITIZED && !under_valgrind();
}

int sl_test_count_dir(const char *path) {
  DIR *d = opendir(path);
  if (!d)
    return -1;
  int n = 0;
  while (readdir(d))
    n++;
  closedir(d);
  return n;
}

int sl_test_tasks_settled(int want) {
  int n = sl_test_count_dir("/proc/self/task");
  for (int i = 0; i < 10000 && n > want; i++) {
    usleep(1000);
    n = sl_test_count_dir("/proc/self/task");
  }
  return n;
}
