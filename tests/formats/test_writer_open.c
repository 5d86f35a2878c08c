/* sl_fwriter_open's early failures must not touch descriptors it does not
 * own (a path too long for the temporary name once closed fd 0). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "formats/core/writer.h"

static void test_long_path_keeps_fd0(void **state) {
  (void)state;
  /* Make sure fd 0 is open, whatever ctest gave us. */
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  assert_true(devnull >= 0);
  if (devnull != 0) {
    assert_int_equal(dup2(devnull, 0), 0);
    close(devnull);
  }
  /* Fits PATH_MAX itself, but not with ".NAME.sluice-tmp.PID" added. */
  static char path[PATH_MAX];
  memset(path, 'a', PATH_MAX - 8);
  path[0] = '/';
  path[1] = 't';
  path[2] = '/';
  path[PATH_MAX - 8] = '\0';
  memcpy(path + PATH_MAX - 14, ".lmdb", 5);
  sl_err err = {0};
  sl_fwriter *w = (sl_fwriter *)1;
  assert_int_equal(sl_fwriter_open(&w, path, SL_FORMAT_LMDB, &err), SL_EINVAL);
  assert_null(w);
  assert_int_not_equal(fcntl(0, F_GETFD), -1); /* fd 0 still open */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_long_path_keeps_fd0),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
