#define _POSIX_C_SOURCE 200809L /* popen */
#include "cli_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

int cli_run(const char *args, char *out, size_t cap) {
  const char *bin = getenv("SLUICE_BIN");
  if (!bin)
    return -1;
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", bin, args);
  FILE *p = popen(cmd, "r");
  if (!p)
    return -1;
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = '\0';
  while (fgetc(p) != EOF) /* drain the rest so the child is not blocked */
    ;
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
