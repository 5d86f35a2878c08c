/* sl_cli_parse_int and sl_cli_parse_u64: what a number argument accepts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_int),
      cmocka_unit_test(test_parse_u64),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
