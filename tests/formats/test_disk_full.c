/* Disk full under the writer: a 1 MiB tmpfs (root: CI is; skipped, saying
 * why, elsewhere) fills while samples are added. The writer gives a clear
 * error naming the file and the cause, refuses further work, and leaves
 * nothing in the directory (no file at the path, no temporary file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice.h"

/* Files left in dir (not . and ..). */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      n++;
  closedir(d);
  return n;
}

static void fill(const char *dir, const char *file) {
  char path[600];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  sl_writer_options o = {0};
  sl_writer *w = NULL;
  assert_int_equal(sl_writer_create(&w, path, &o), SL_OK);
  enum { H = 64, W = 64, C = 3 };
  uint8_t *px = malloc(H * W * C);
  assert_non_null(px);
  uint64_t x = 88172645463325252ull;
  sl_status st = SL_OK;
  int added = 0;
  for (; added < 2000 && st == SL_OK; added++) {
    for (size_t k = 0; k < H * W * C; k++) { /* incompressible */
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      px[k] = (uint8_t)x;
    }
    st = sl_writer_add_pixels(w, px, H, W, C, 0, NULL, NULL);
  }
  if (st == SL_OK) /* every add fit in memory: commit meets the full disk */
    st = sl_writer_commit(w);
  else /* broken: nothing more is taken, commit included */
    assert_int_not_equal(sl_writer_add_pixels(w, px, H, W, C, 0, NULL, NULL),
                         SL_OK);
  assert_int_not_equal(st, SL_OK);
  const char *msg = sl_writer_errmsg(w);
  fprintf(stderr, "%s after %d samples: %s: %s\n", file, added,
          sl_status_name(st), msg);
  assert_non_null(strstr(msg, file)); /* the path, or its temporary */
  assert_non_null(strstr(msg, dir));
  assert_non_null(strstr(msg, strerror(ENOSPC)));
  assert_int_not_equal(sl_writer_commit(w), SL_OK);
  sl_writer_destroy(w);
  free(px);
  struct stat sb;
  assert_int_not_equal(stat(path, &sb), 0);
  assert_int_equal(entries(dir), 0); /* the temporary file is gone too */
}

static void writer_on_full_disk(void **state) {
  (void)state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  char dir[512];
  snprintf(dir, sizeof dir, "%s/full_%ld", tmp ? tmp : "/tmp", (long)getpid());
  assert_int_equal(mkdir(dir, 0700), 0);
  if (mount("tmpfs", dir, "tmpfs", 0, "size=1M") != 0) {
    fprintf(stderr, "cannot mount a small tmpfs (%s; needs root): skipped\n",
            strerror(errno));
    rmdir(dir);
    skip();
  }
  fill(dir, "full.lmdb");
  fill(dir, "full.h5");
  assert_int_equal(umount2(dir, MNT_DETACH), 0);
  assert_int_equal(rmdir(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(writer_on_full_disk),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
