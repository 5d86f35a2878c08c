/* `sluice pack` with its kth allocation failing, for every k: the command
 * built again with every allocation of its own code and of the library's
 * routed through tests/support/alloc_fail.c (sluice_alloc_fail, env
 * SLUICE_ALLOC_FAIL_AT=k), packing four photos into LMDB and HDF5, and a
 * COCO and a VOC set with boxes (tests/tools/detect/make_detect.py's; the
 * JSON and XML libraries' own allocations are not routed), until a
 * run reaches no kth allocation. Each failing run must exit 1 saying it ran
 * out of memory, with nothing in the output folder (no partial file, no
 * temporary file) and, in an ASan build, no sanitizer report (a leak makes
 * LeakSanitizer fail the run). The counts are printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sluice.h"
#include "tests/support/alloc_fail.h"
#include "tests/support/test_dir.h"
#include "tests/tools/cli_run.h"
#include "tools/synth.h"

static char g_dir[400];
static char g_out[65536];

static int setup(void **state) {
  (void)state;
  const char *bin = getenv("SLUICE_ALLOC_FAIL_BIN");
  if (!bin)
    return -1;
  if (setenv("SLUICE_BIN", bin, 1) != 0)
    return -1;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(g_dir, sizeof g_dir, "%s/cli-alloc-%ld", tmp ? tmp : "/tmp",
           (long)getpid());
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/img/a' '%s/img/b' '%s/out'", g_dir,
           g_dir, g_dir);
  if (system(cmd) != 0)
    return -1;
  char args[600];
  snprintf(args, sizeof args, "'%s/detect'", g_dir);
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/detect'", g_dir);
  if (system(cmd) != 0 ||
      sl_test_make_fixtures("test_cli_alloc_fail", SLUICE_TEST_PYTHON,
                            SLUICE_DETECT_PY, args, "python3-pil") != 0)
    return -1;
  const char *names[] = {"a/0.jpg", "a/1.jpg", "b/2.jpg", "b/3.jpg"};
  for (int i = 0; i < 4; i++) {
    sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
    uint8_t *buf;
    size_t n;
    sl_synth_err err;
    if (sl_synth_jpeg((uint64_t)i, 40 + 8 * i, 32, &o, &buf, &n, &err) != SL_OK)
      return -1;
    char p[700];
    snprintf(p, sizeof p, "%s/img/%s", g_dir, names[i]);
    FILE *f = fopen(p, "wb");
    if (!f)
      return -1;
    size_t w = fwrite(buf, 1, n, f);
    free(buf);
    if (fclose(f) != 0 || w != n)
      return -1;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

/* Names in the output folder, for the message; 0 when it is empty. */
static size_t out_entries(char *names, size_t cap) {
  char p[512];
  snprintf(p, sizeof p, "%s/out", g_dir);
  DIR *d = opendir(p);
  assert_non_null(d);
  size_t n = 0, used = 0;
  names[0] = '\0';
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      n++;
      int w = snprintf(names + used, cap - used, "%s ", e->d_name);
      if (w > 0 && (size_t)w < cap - used)
        used += (size_t)w;
    }
  closedir(d);
  return n;
}

static int mentions_memory(const char *s) {
  for (; *s; s++)
    if (strncasecmp(s, "memory", 6) == 0)
      return 1;
  return 0;
}

/* A pack that exited 0 is whole: every photo in it, nothing skipped (a
 * photo skipped for want of memory would be lost quietly). Removes it. */
static void check_whole(const char *out, const char *ext, long k,
                        uint64_t want) {
  sl_dataset *ds = NULL;
  if (sl_dataset_open_file(&ds, out) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  if (sl_dataset_count(ds) != want)
    fail_msg("pack .%s, allocation %ld: %llu of %llu photos packed: %s", ext, k,
             (unsigned long long)sl_dataset_count(ds), (unsigned long long)want,
             g_out);
  sl_dataset_close(ds);
  assert_int_equal(unlink(out), 0);
  char lock[700];
  snprintf(lock, sizeof lock, "%s-lock", out);
  unlink(lock); /* LMDB's lock file, where one was made */
  char names[1024];
  if (out_entries(names, sizeof names) != 0)
    fail_msg("pack .%s, allocation %ld: left %s(%s)", ext, k, names, g_out);
}

/* in: what pack reads (arguments before OUT); want: the photos it must
 * hold. */
static void pack_every_k_of(const char *ext, const char *in, uint64_t want) {
  char out[600], args[2600];
  snprintf(out, sizeof out, "%s/out/set.%s", g_dir, ext);
  snprintf(args, sizeof args, "pack --quiet --threads 1 %s '%s'", in, out);
  long failed = 0, absorbed = 0;
  for (long k = 1;; k++) {
    char at[32];
    snprintf(at, sizeof at, "%ld", k);
    assert_int_equal(setenv("SLUICE_ALLOC_FAIL_AT", at, 1), 0);
    int rc = cli_run(args, g_out, sizeof g_out);
    assert_int_equal(unsetenv("SLUICE_ALLOC_FAIL_AT"), 0);
    if (strstr(g_out, "Sanitizer"))
      fail_msg("pack .%s, allocation %ld: %s", ext, k, g_out);
    int hit = strstr(g_out, SL_ALLOC_FAIL_MARK) != NULL;
    if (rc == 0) { /* no kth allocation, or its failure was absorbed */
      check_whole(out, ext, k, want);
      if (hit) {
        absorbed++;
        continue;
      }
      fprintf(stderr,
              "sluice pack .%s: %ld allocation points injected (%ld exit 1 "
              "naming memory with nothing left in the output folder, %ld "
              "absorbed with the pack whole)\n",
              ext, failed + absorbed, failed, absorbed);
      assert_true(failed > 0);
      return;
    }
    if (!hit || rc != 1 || !mentions_memory(g_out))
      fail_msg("pack .%s, allocation %ld: exit %d: %s", ext, k, rc, g_out);
    char names[1024];
    if (out_entries(names, sizeof names) != 0)
      fail_msg("pack .%s, allocation %ld: left %s(%s)", ext, k, names, g_out);
    failed++;
  }
}

static void pack_every_k(const char *ext) {
  char in[600];
  snprintf(in, sizeof in, "'%s/img'", g_dir);
  pack_every_k_of(ext, in, 4);
}

static void pack_lmdb(void **state) {
  (void)state;
  pack_every_k("lmdb");
}

static void pack_hdf5(void **state) {
  (void)state;
  pack_every_k("h5");
}

/* The COCO and VOC readers' allocations too (their boxes travel to the
 * writer's). */
static void pack_coco_lmdb(void **state) {
  (void)state;
  char in[1400];
  snprintf(in, sizeof in,
           "--coco '%s/detect/coco/instances.json' '%s/detect/coco/images'",
           g_dir, g_dir);
  pack_every_k_of("lmdb", in, 4);
}

static void pack_voc_hdf5(void **state) {
  (void)state;
  char in[700];
  snprintf(in, sizeof in, "--voc '%s/detect/voc/VOCdevkit/VOC2007'", g_dir);
  pack_every_k_of("h5", in, 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pack_lmdb),
      cmocka_unit_test(pack_hdf5),
      cmocka_unit_test(pack_coco_lmdb),
      cmocka_unit_test(pack_voc_hdf5),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
