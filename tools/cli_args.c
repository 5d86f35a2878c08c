/* Arguments of the `sluice` subcommands: numbers, and the table-driven
 * option parser with the help it prints (tools/cli.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
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

int sl_cli_usage_error(const char *cmd, const char *fmt, ...) {
  fprintf(stderr, "sluice %s: ", cmd);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  return 2;
}

/* The row spelled a ("--name" or "-s"), or NULL. A valued option may
 * carry its value as "--name=VALUE" (getopt_long's form, which `pack`
 * took): *inline_value points past the '=' then, else it is NULL. */
static const sl_cli_opt *find_opt(const sl_cli_spec *spec, const char *a,
                                  const char **inline_value) {
  *inline_value = NULL;
  const char *eq = a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL;
  for (int i = 0; i < spec->nopts; i++) {
    const sl_cli_opt *o = &spec->opts[i];
    if (!strcmp(a, o->name) ||
        (o->short_name && a[0] == '-' && a[1] == o->short_name && !a[2]))
      return o;
    if (eq && o->kind != SL_CLI_FLAG &&
        !strncmp(a, o->name, (size_t)(eq - a)) && o->name[eq - a] == '\0') {
      *inline_value = eq + 1;
      return o;
    }
  }
  return NULL;
}

/* v into o's dst; 0 when o refuses it. */
static int set_value(const sl_cli_opt *o, const char *v) {
  switch (o->kind) {
  case SL_CLI_INT:
    return sl_cli_parse_int(v, o->lo, o->hi, o->dst);
  case SL_CLI_U64:
    return sl_cli_parse_u64(v, o->dst);
  case SL_CLI_STRING:
    *(const char **)o->dst = v;
    return 1;
  case SL_CLI_ENUM:
    for (int k = 0; o->choices[k]; k++)
      if (!strcmp(o->choices[k], v)) {
        *(int *)o->dst = k;
        return 1;
      }
    return 0;
  case SL_CLI_CUSTOM:
    return o->parse(v, o->dst);
  default: /* SL_CLI_FLAG */
    *(bool *)o->dst = true;
    return 1;
  }
}

/* The usage error for o's value v (NULL: missing), naming what o takes
 * and, when given, the value refused. */
static int refuse(const sl_cli_spec *spec, const sl_cli_opt *o, const char *v) {
  char needs[320];
  if (o->kind == SL_CLI_INT) {
    snprintf(needs, sizeof needs, "%s %lld..%lld",
             o->needs ? o->needs : "a number", o->lo, o->hi);
  } else if (o->kind == SL_CLI_ENUM) {
    size_t at = (size_t)snprintf(needs, sizeof needs, "one of ");
    for (int k = 0; o->choices[k] && at < sizeof needs; k++)
      at += (size_t)snprintf(needs + at, sizeof needs - at, "%s%s",
                             k ? ", " : "", o->choices[k]);
  } else {
    snprintf(needs, sizeof needs, "%s", o->needs ? o->needs : "a value");
  }
  if (v)
    return sl_cli_usage_error(spec->cmd, "%s: '%s' (%s)", o->name, v, needs);
  return sl_cli_usage_error(spec->cmd, "%s needs %s", o->name, needs);
}

int sl_cli_parse(const sl_cli_spec *spec, int argc, char **argv, int *npos) {
  int n = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      sl_cli_usage(spec, stdout);
      return 0;
    }
    const char *v;
    const sl_cli_opt *o = find_opt(spec, a, &v);
    if (o && o->kind == SL_CLI_FLAG) {
      set_value(o, NULL);
    } else if (o) {
      if (!v)
        v = ++i < argc ? argv[i] : NULL;
      int ok = v ? set_value(o, v) : 0;
      if (ok < 0) /* a CUSTOM row said why itself */
        return 2;
      if (!ok)
        return refuse(spec, o, v);
    } else if (a[0] == '-') {
      return sl_cli_usage_error(spec->cmd, "unknown option '%s'", a);
    } else if (n < spec->max_pos) {
      spec->pos[n++] = a;
    } else {
      return sl_cli_usage_error(spec->cmd, "%s", spec->too_many);
    }
  }
  if (n < spec->min_pos) {
    sl_cli_usage(spec, stderr);
    return 2;
  }
  if (npos)
    *npos = n;
  return -1;
}

void sl_cli_usage(const sl_cli_spec *spec, FILE *f) {
  fputs(spec->head, f);
  for (int i = 0; i < spec->nopts; i++) {
    const sl_cli_opt *o = &spec->opts[i];
    char left[64];
    snprintf(left, sizeof left, "%s%s%s", o->name, o->value ? " " : "",
             o->value ? o->value : "");
    fprintf(f, "  %-*s", spec->column, left);
    if ((int)strlen(left) >= spec->column)
      fprintf(f, "\n  %-*s", spec->column, "");
    for (const char *h = o->help ? o->help : ""; *h;) {
      size_t len = strcspn(h, "\n");
      fprintf(f, "%.*s\n", (int)len, h);
      h += len;
      if (*h == '\n' && *++h)
        fprintf(f, "  %-*s", spec->column, "");
    }
    if (!o->help || !*o->help)
      fputc('\n', f);
  }
  if (spec->tail)
    fputs(spec->tail, f);
}
