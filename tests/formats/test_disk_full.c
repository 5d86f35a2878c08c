/* Disk full under the writer and under `sluice pack`: a 1 MiB tmpfs (root:
 * CI is; elsewhere skipped, saying why, exit 77 so ctest shows it) fills
 * while samples are added. The writer gives a clear error naming the file
 * and the cause, refuses further work, and leaves nothing in the directory
 * (no file at the path, no temporary file); pack exits 1 saying so. */
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
#include <sys/wait.h>
#include <unistd.h>

#include "sluice.h"
#include "tests/support/test_dir.h"

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

static int g_skipped; /* ctest shows the test as skipped (exit 77) */

/* A 1 MiB tmpfs at a fresh folder; 0 when it cannot be mounted (skip). */
static int mount_small(char *dir, size_t cap, const char *stem) {
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(dir, cap, "%s/%s_%ld", tmp ? tmp : "/tmp", stem, (long)getpid());
  assert_int_equal(mkdir(dir, 0700), 0);
  if (mount("tmpfs", dir, "tmpfs", 0, "size=1M") != 0) {
    fprintf(stderr, "cannot mount a small tmpfs (%s; needs root): skipped\n",
            strerror(errno));
    rmdir(dir);
    g_skipped = 1;
    return 0;
  }
  return 1;
}

static void unmount_small(const char *dir) {
  assert_int_equal(umount2(dir, MNT_DETACH), 0);
  assert_int_equal(rmdir(dir), 0);
}

static void writer_on_full_disk(void **state) {
  (void)state;
  char dir[512];
  if (!mount_small(dir, sizeof dir, "full"))
    skip();
  fill(dir, "full.lmdb");
  fill(dir, "full.h5");
  unmount_small(dir);
}

/* `sluice pack` of ~1.8 MB of photos onto the 1 MiB tmpfs, for both
 * formats: exit 1 with a message naming the output (or its temporary) and
 * ENOSPC, and nothing left on the tmpfs. */
static void pack_on_full_disk(void **state) {
  (void)state;
  const char *bin = getenv("SLUICE_BIN");
  assert_non_null(bin);
  char dir[512], src[600], cmd[2048];
  if (!mount_small(dir, sizeof dir, "fullpack"))
    skip();
  snprintf(src, sizeof src, "%s.photos", dir);
  snprintf(cmd, sizeof cmd,
           "'%s' synth '%s' --imagenet --count 20 --classes 2 >/dev/null", bin,
           src);
  assert_int_equal(system(cmd), 0);
  const char *ext[] = {"lmdb", "h5"};
  for (int f = 0; f < 2; f++) {
    snprintf(cmd, sizeof cmd,
             "'%s' pack --quiet --threads 2 '%s' '%s/set.%s' 2>&1", bin, src,
             dir, ext[f]);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char out[8192];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    fprintf(stderr, "pack .%s onto 1 MiB: %s", ext[f], out);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    assert_non_null(strstr(out, dir));
    assert_non_null(strstr(out, strerror(ENOSPC)));
    assert_int_equal(entries(dir), 0); /* no output, no temporary file */
  }
  assert_int_equal(sl_test_remove_dir(src), 0);
  unmount_small(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(writer_on_full_disk),
      cmocka_unit_test(pack_on_full_disk),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  return rc == 0 && g_skipped ? 77 : rc;
}
