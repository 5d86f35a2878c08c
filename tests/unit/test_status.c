#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "sluice.h"

static void test_names_and_strings(void **state) {
  (void)state;
  assert_string_equal(sl_status_name(SL_OK), "SL_OK");
  assert_string_equal(sl_status_name(SL_ECONFIG), "SL_ECONFIG");
  assert_string_equal(sl_strerror(SL_ECONFIG), "invalid configuration");
  assert_string_equal(sl_status_name((sl_status)999), "SL_UNKNOWN");
  assert_string_equal(sl_strerror((sl_status)999), "unknown status");
  /* Every code of the table has a distinct name and a sentence. */
#define CHECK_(name, value, desc)                                              \
  assert_int_equal(SL_##name, value);                                          \
  assert_string_equal(sl_status_name(SL_##name), "SL_" #name);                 \
  assert_string_equal(sl_strerror(SL_##name), desc);
  SL_STATUS_MAP(CHECK_)
#undef CHECK_
}

static void test_version(void **state) {
  (void)state;
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", SLUICE_VERSION_MAJOR,
           SLUICE_VERSION_MINOR, SLUICE_VERSION_PATCH);
  assert_string_equal(sl_version_string(), want);
  assert_int_equal(sl_version_number(), SLUICE_VERSION_NUMBER);
}

static void test_err_helpers(void **state) {
  (void)state;
  sl_err e;
  sl_err_clear(&e);
  assert_int_equal(sl_err_set(&e, SL_EIO, "read %s", "x.lmdb"), SL_EIO);
  assert_string_equal(e.msg, "read x.lmdb");
  sl_err_prefix(&e, "%s: ", "pack");
  assert_string_equal(e.msg, "pack: read x.lmdb");
  assert_int_equal(sl_err_errno(&e, SL_EIO, 2, "open %s", "f"), SL_EIO);
  assert_string_equal(e.msg, "open f: No such file or directory");
  /* A message longer than the buffer is truncated, not overflowed. */
  char big[2000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  sl_err_set(&e, SL_EINVAL, "%s", big);
  assert_int_equal(strlen(e.msg), SL_ERRMSG_MAX - 1);
  assert_int_equal(sl_err_set(NULL, SL_EIO, "x"), SL_EIO);
}

/* Sizes as messages print them, and a short buffer stays terminated. */
static void test_format_bytes(void **state) {
  (void)state;
  char b[32];
  assert_string_equal(sl_format_bytes(0, b, sizeof b), "0 B");
  assert_string_equal(sl_format_bytes(1023, b, sizeof b), "1023 B");
  assert_string_equal(sl_format_bytes(1024, b, sizeof b), "1.0 KiB");
  assert_string_equal(sl_format_bytes(1536ull << 10, b, sizeof b), "1.5 MiB");
  assert_string_equal(sl_format_bytes(3ull << 30, b, sizeof b), "3.0 GiB");
  assert_string_equal(sl_format_bytes(5ull << 50, b, sizeof b), "5120.0 TiB");
  char small[4];
  assert_string_equal(sl_format_bytes(1ull << 20, small, sizeof small), "1.0");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_format_bytes),
      cmocka_unit_test(test_names_and_strings),
      cmocka_unit_test(test_version),
      cmocka_unit_test(test_err_helpers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
