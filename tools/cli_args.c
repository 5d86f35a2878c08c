/* Number arguments of the `sluice` subcommands, and sizes they print: see
 * tools/cli.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

/* Whether s, after the blanks strtol skips, starts with a minus sign. */
static int negative(const char *s) {
  return s[strspn(s, " \t\n\v\f\r")] == '-';
}

int sl_cli_parse_int(const char *s, long long lo, long long hi,
                     long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi || (lo >= 0 && negative(s)))
    return 0;
  *out = v;
  return 1;
}

int sl_cli_parse_u64(const char *s, unsigned long long *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  /* strtoull accepts "-1" as ULLONG_MAX: refuse any minus sign. */
  if (errno || end == s || *end || negative(s))
    return 0;
  *out = v;
  return 1;
}
