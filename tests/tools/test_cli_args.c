/* sl_cli_parse_int and sl_cli_parse_u64: what a number argument accepts;
 * sl_cli_parse: options from a table into their places, the return codes
 * (-1 go on, 0 after --help, 2 for a usage error) and the help. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

static void test_parse_int(void **state) {
  (void)state;
  long long v = 42;
  assert_int_equal(sl_cli_parse_int("7", 1, 10, &v), 1);
  assert_int_equal(v, 7);
  assert_int_equal(sl_cli_parse_int("-3", -5, 5, &v), 1);
  assert_int_equal(v, -3);
  assert_int_equal(sl_cli_parse_int("10", 1, 10, &v), 1);
  assert_int_equal(sl_cli_parse_int("1", 1, 10, &v), 1);
  static const char *const bad[] = {
      "", "0", "11", "2x", "x2", " ", "-0", "+-1", "1 ", "9223372036854775808"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    v = 42;
    if (sl_cli_parse_int(bad[i], 1, 10, &v) != 0 || v != 42)
      fail_msg("'%s' accepted", bad[i]);
  }
  /* A sign is refused when negatives are out of range anyway. */
  assert_int_equal(sl_cli_parse_int("-0", 0, 10, &v), 0);
  assert_int_equal(sl_cli_parse_int(" -0", 0, 10, &v), 0);
  assert_int_equal(sl_cli_parse_int("\t-0", 0, 10, &v), 0);
  assert_int_equal(sl_cli_parse_int("0", 0, 10, &v), 1);
  assert_int_equal(sl_cli_parse_int("9223372036854775807", 0, LLONG_MAX, &v),
                   1);
  assert_true(v == LLONG_MAX);
}

static void test_parse_u64(void **state) {
  (void)state;
  unsigned long long v = 42;
  assert_int_equal(sl_cli_parse_u64("18446744073709551615", &v), 1);
  assert_true(v == ULLONG_MAX);
  assert_int_equal(sl_cli_parse_u64("0", &v), 1);
  assert_true(v == 0);
  static const char *const bad[] = {
      "", "-1", " -1", "\n-1", "18446744073709551616", "1x", "x", "1 "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    v = 42;
    if (sl_cli_parse_u64(bad[i], &v) != 0 || v != 42)
      fail_msg("'%s' accepted", bad[i]);
  }
}

static int parse_even(const char *arg, void *dst) {
  long long v;
  if (!strcmp(arg, "odd"))
    return -1; /* as if it had printed its own message */
  if (!sl_cli_parse_int(arg, 0, 100, &v) || v % 2)
    return 0;
  *(long long *)dst = v;
  return 1;
}

typedef struct parsed {
  bool flag;
  long long n, even;
  unsigned long long big;
  const char *out, *pos[2];
  int mode, npos;
} parsed;

static int run(parsed *p, const char *const *args) {
  static const char *const modes[] = {"fast", "slow", NULL};
  memset(p, 0, sizeof *p);
  p->mode = -1;
  const sl_cli_opt opts[] = {
      {.name = "--flag",
       .short_name = 'f',
       .kind = SL_CLI_FLAG,
       .help = "a flag",
       .dst = &p->flag},
      {.name = "--n",
       .kind = SL_CLI_INT,
       .value = "N",
       .lo = 1,
       .hi = 9,
       .help = "a number\non two lines",
       .dst = &p->n},
      {.name = "--big",
       .kind = SL_CLI_U64,
       .value = "B",
       .needs = "a u64",
       .dst = &p->big},
      {.name = "--out",
       .kind = SL_CLI_STRING,
       .value = "FILE",
       .needs = "a file",
       .dst = &p->out},
      {.name = "--mode",
       .kind = SL_CLI_ENUM,
       .value = "M",
       .choices = modes,
       .dst = &p->mode},
      {.name = "--even",
       .kind = SL_CLI_CUSTOM,
       .value = "E",
       .needs = "an even number",
       .dst = &p->even,
       .parse = parse_even},
  };
  const sl_cli_spec spec = {.cmd = "t",
                            .head = "usage: t IN [IN]\n",
                            .column = 8,
                            .opts = opts,
                            .nopts = sizeof opts / sizeof opts[0],
                            .pos = p->pos,
                            .min_pos = 1,
                            .max_pos = 2,
                            .too_many = "two INs at most"};
  static char store[16][32]; /* argv is mutable; pos points into it */
  char *argv[16];
  int argc = 0;
  for (const char *a = "t"; a && argc < 16; a = args[argc - 1]) {
    snprintf(store[argc], sizeof store[argc], "%s", a);
    argv[argc] = store[argc];
    argc++;
  }
  return sl_cli_parse(&spec, argc, argv, &p->npos);
}

static void test_parse_table(void **state) {
  (void)state;
  parsed p;
  const char *all[] = {
      "a",     "-f",    "--n",    "9",    "--big",  "18446744073709551615",
      "--out", "o.png", "--mode", "slow", "--even", "4",
      "b",     NULL};
  assert_int_equal(run(&p, all), -1);
  assert_true(p.flag);
  assert_int_equal(p.n, 9);
  assert_true(p.big == ULLONG_MAX);
  assert_string_equal(p.out, "o.png");
  assert_int_equal(p.mode, 1);
  assert_int_equal(p.even, 4);
  assert_int_equal(p.npos, 2);
  assert_string_equal(p.pos[0], "a");
  assert_string_equal(p.pos[1], "b");
  static const char *const bad[][4] = {
      {"a", "--n", "10", NULL},
      {"a", "--n", NULL},
      {"a", "--big", "-1", NULL},
      {"a", "--out", NULL},
      {"a", "--mode", "x", NULL},
      {"a", "--even", "3", NULL},
      {"a", "--even", "odd", NULL},
      {"a", "--nope", NULL},
      {"a", "b", "c", NULL},
      {"-", NULL},
      {NULL},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (run(&p, bad[i]) != 2)
      fail_msg("case %zu not a usage error", i);
  /* A value may join its option after '=' (getopt_long's form). */
  const char *joined[] = {
      "a", "--n=3", "--out=x=y.png", "--mode=fast", "--even=", "8", NULL};
  assert_int_equal(run(&p, joined), 2); /* "--even=": an empty value */
  joined[4] = "--even=8";
  joined[5] = NULL;
  assert_int_equal(run(&p, joined), -1);
  assert_int_equal(p.n, 3);
  assert_string_equal(p.out, "x=y.png");
  assert_int_equal(p.mode, 0);
  assert_int_equal(p.even, 8);
  assert_int_equal(p.npos, 1);
  static const char *const bad_joined[][3] = {
      {"a", "--flag=1", NULL}, /* a flag takes none */
      {"a", "--n=10", NULL},
      {"a", "--no=3", NULL},
      {"a", "--n3=3", NULL},
  };
  for (size_t i = 0; i < sizeof bad_joined / sizeof bad_joined[0]; i++)
    if (run(&p, bad_joined[i]) != 2)
      fail_msg("joined case %zu not a usage error", i);
  const char *help[] = {"--n", "10", "-h", NULL}; /* the error comes first */
  assert_int_equal(run(&p, help), 2);
  const char *help2[] = {"-h", "--n", "10", NULL};
  assert_int_equal(run(&p, help2), 0);
}

static void test_usage_text(void **state) {
  (void)state;
  static const char *const modes[] = {"a", NULL};
  int mode = 0;
  long long n = 0;
  const sl_cli_opt opts[] = {
      {.name = "--n",
       .kind = SL_CLI_INT,
       .value = "N",
       .lo = 1,
       .hi = 9,
       .help = "a number\non two lines",
       .dst = &n},
      {.name = "--long-name",
       .kind = SL_CLI_ENUM,
       .value = "MODE",
       .choices = modes,
       .help = "wraps",
       .dst = &mode},
  };
  const sl_cli_spec spec = {.cmd = "t",
                            .head = "usage: t\n",
                            .tail = "end\n",
                            .column = 8,
                            .opts = opts,
                            .nopts = 2};
  char buf[512] = {0};
  FILE *f = fmemopen(buf, sizeof buf - 1, "w");
  assert_non_null(f);
  sl_cli_usage(&spec, f);
  fclose(f);
  assert_string_equal(buf, "usage: t\n"
                           "  --n N   a number\n"
                           "          on two lines\n"
                           "  --long-name MODE\n"
                           "          wraps\n"
                           "end\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_int),
      cmocka_unit_test(test_parse_u64),
      cmocka_unit_test(test_parse_table),
      cmocka_unit_test(test_usage_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
