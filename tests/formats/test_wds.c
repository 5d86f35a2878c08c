/* WebDataset tar shards and ImageFolder directories read in place, on
 * fixtures made by the real writers (foreign/make_wds.py with
 * /usr/bin/python3: webdataset's ShardWriter and TarWriter, Python's
 * tarfile for GNU long names and pax headers, plain file copies for the
 * folder): pixels and labels against what the writer stored, through the
 * dataset API and the loader on every io backend; shard lists, brace
 * patterns, targets; damaged shards named with their offset; the command
 * line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../support/dataset_checks.h"
#include "../support/test_dir.h"
#include "../tools/cli_run.h"
#include "formats/core/source.h"
#include "sluice.h"

#ifndef SLUICE_TEST_PYTHON
#define SLUICE_TEST_PYTHON "/usr/bin/python3"
#endif

static char g_dir[512];

static void path_in(char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/%s", g_dir, name);
}

static int setup(void **state) {
  (void)state;
  if (sl_test_make_dir(g_dir, sizeof g_dir, "wds") != 0)
    return -1;
  char arg[600];
  snprintf(arg, sizeof arg, "'%s' >/dev/null", g_dir);
  return sl_test_make_fixtures("test_wds", SLUICE_TEST_PYTHON, SLUICE_WDS_PY,
                               arg,
                               "python3-numpy, python3-pil and webdataset "
                               "(scripts/test-requirements.txt)");
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

/* ---- references ---------------------------------------------------------- */

/* Opens path through the dataset API and checks every sample. */
static void check_dataset(const char *path, const char *refname,
                          const char *format, const char *const *kv) {
  size_t n;
  sl_test_ref *r = sl_test_load_refs(g_dir, refname, &n);
  sl_dataset *ds = sl_test_open_kv(NULL, path, kv);
  sl_test_expect_refs(ds, format, r, n, path);
  sl_dataset_close(ds);
  free(r);
}

/* The loader's batches (crop none, 16x16 u8 HWC) against the references,
 * with loader.io = io; returns the log's lines joined (for the fallback's
 * reason). */
static char g_log[4096];
static void log_line(void *user, sl_log_level level, const char *msg) {
  (void)user;
  (void)level;
  size_t l = strlen(g_log);
  snprintf(g_log + l, sizeof g_log - l, "%s\n", msg);
}

static void check_loader(const char *path, const char *refname, const char *io,
                         const char *order) {
  size_t n;
  sl_test_ref *r = sl_test_load_refs(g_dir, refname, &n);
  const char *kv[] = {"dataset.path", path, "loader.quasi_window", "1", NULL};
  sl_config *cfg = sl_test_config_kv(kv);
  sl_test_set_native_batches(cfg, "2", order, io, "16");
  g_log[0] = '\0';
  sl_config_set_log(cfg, log_line, NULL);
  sl_loader *ld;
  sl_status st = sl_loader_open(&ld, cfg);
  if (st != SL_OK)
    fail_msg("%s (io %s): %s", path, io, sl_loader_errmsg(ld));
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch b;
  uint64_t seen = 0, *order_seen = calloc(n, sizeof *order_seen);
  assert_non_null(order_seen);
  while ((st = sl_loader_next(ld, &b)) == SL_OK) {
    assert_int_equal(b.n, 1);
    uint64_t i = b.indices[0];
    assert_true(i < n);
    sl_test_expect_ref_pixels(b.data, &r[i], path, i);
    assert_int_equal(b.labels[0], r[i].label);
    order_seen[seen++] = i;
    assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  }
  if (st != SL_END)
    fail_msg("%s (io %s): %s", path, io, sl_loader_errmsg(ld));
  assert_int_equal(seen, n);
  sl_loader_close(ld);
  sl_config_destroy(cfg);
  free(order_seen);
  free(r);
}

/* ---- WebDataset ---------------------------------------------------------- */

static void test_wds_pattern(void **state) {
  (void)state;
  char p[700];
  path_in(p, sizeof p, "train-{000000..000003}.tar");
  check_dataset(p, "train", "webdataset", NULL);
  for (int q = 0; q < SL_TEST_IO_COUNT; q++) {
    const char *io = sl_test_io_backends[q];
    check_loader(p, "train", io, "random");
    /* each io names the backend it read with; uring may be refused by the
     * kernel (then pread, said) */
    if (!strstr(g_log, q == 0   ? "reading with mmap"
                       : q == 1 ? "reading with pread"
                                : "reading with "))
      fail_msg("io %s: %s", io, g_log);
    print_message("%s", strstr(g_log, "reading with"));
    assert_non_null(strstr(g_log, "`sluice pack` decode JPEG crops faster"));
    assert_non_null(strstr(g_log, "--speed` measures by how much"));
    check_loader(p, "train", io, "quasi_random");
  }
}

static void test_wds_list_and_format(void **state) {
  (void)state;
  char p[700];
  path_in(p, sizeof p, "lists/shards.txt");
  check_dataset(p, "train", "webdataset", NULL);
  /* a list whose first line names no .tar is not detected: forced */
  char q[700];
  path_in(q, sizeof q, "lists/other.list");
  FILE *f = fopen(q, "w");
  assert_non_null(f);
  fputs("../train-{000000..000001}.tar\n../train-{000002..000003}.tar\n", f);
  fclose(f);
  const char *kv[] = {"dataset.format", "webdataset", NULL};
  /* .list is not a list's name: forced, a list is still only .txt/.shards;
   * the path itself is then a shard (and not a tar) */
  sl_dataset *ds;
  assert_int_equal(sl_test_try_open_kv(&ds, NULL, q, kv), SL_EFORMAT);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "other.list"));
  sl_dataset_close(ds);
  path_in(q, sizeof q, "lists/two.shards");
  f = fopen(q, "w");
  assert_non_null(f);
  fputs("../train-{000000..000001}.tar\n../train-{000002..000003}.tar\n", f);
  fclose(f);
  check_dataset(q, "train", "webdataset", NULL);
}

static void test_wds_long_names(void **state) {
  (void)state;
  char p[700];
  path_in(p, sizeof p, "long-gnu.tar");
  check_dataset(p, "long-gnu", "webdataset", NULL);
  path_in(p, sizeof p, "long-pax.tar");
  check_dataset(p, "long-pax", "webdataset", NULL);
  check_loader(p, "long-pax", "mmap", "sequential");
}

static void test_wds_targets(void **state) {
  (void)state;
  char p[700], t[700];
  path_in(p, sizeof p, "tgt-000000.tar");
  const char *kv[] = {"dataset.targets_ext", "npy", NULL};
  check_dataset(p, "tgt", "webdataset", kv);
  path_in(t, sizeof t, "tgt.f32");
  FILE *f = fopen(t, "rb");
  assert_non_null(f);
  float want[15];
  assert_int_equal(fread(want, sizeof want, 1, f), 1);
  fclose(f);
  const char *path_kv[] = {"dataset.path", p, kv[0], kv[1], NULL};
  sl_config *cfg = sl_test_config_kv(path_kv);
  sl_dataset *ds;
  if (sl_dataset_open(&ds, cfg) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  assert_int_equal(sl_dataset_target_width(ds), 3);
  for (uint64_t i = 0; i < 5; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.target_width, 3);
    for (int k = 0; k < 3; k++)
      assert_true(m.targets[k] == want[i * 3 + k]);
  }
  sl_dataset_close(ds);
  /* targets_ext other than npy is refused */
  assert_int_equal(sl_config_set(cfg, "dataset.targets_ext", "pth"), SL_OK);
  assert_int_equal(sl_dataset_open(&ds, cfg), SL_ECONFIG);
  sl_dataset_close(ds);
  sl_config_destroy(cfg);
}

static void test_wds_damaged(void **state) {
  (void)state;
  char p[700];
  path_in(p, sizeof p, "damaged.txt");
  FILE *f = fopen(p, "r");
  assert_non_null(f);
  char name[128];
  long off;
  int cases = 0;
  while (fscanf(f, "%127s %ld", name, &off) == 2) {
    char q[700], want[64];
    path_in(q, sizeof q, name);
    sl_dataset *ds;
    assert_int_equal(sl_dataset_open_file(&ds, q), SL_EFORMAT);
    const char *msg = sl_dataset_errmsg(ds);
    snprintf(want, sizeof want, "offset %ld", off);
    if (!strstr(msg, name) || !strstr(msg, want))
      fail_msg("%s: '%s' names no shard or offset %ld", name, msg, off);
    sl_dataset_close(ds);
    cases++;
  }
  fclose(f);
  assert_int_equal(cases, 3);
  /* a damaged shard among good ones in a pattern names that shard */
  char q[700];
  path_in(q, sizeof q, "{train-000000,truncated,train-000001}.tar");
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, q), SL_EFORMAT);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "truncated.tar"));
  sl_dataset_close(ds);
  /* a missing shard names itself */
  path_in(q, sizeof q, "train-{000000..000009}.tar");
  assert_int_equal(sl_dataset_open_file(&ds, q), SL_EIO);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "train-000004.tar"));
  sl_dataset_close(ds);
}

static int g_bad;
static void on_bad(void *user, uint64_t i, const char *reason) {
  (void)user;
  assert_int_equal(i, 1);
  assert_non_null(strstr(reason, "key b1"));
  g_bad++;
}

/* A bad sample (a .cls that is no number): the open fails naming shard and
 * key; verify reports it and opens the rest. */
static void test_wds_bad_sample(void **state) {
  (void)state;
  char p[700];
  path_in(p, sizeof p, "badlabel.tar");
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_EFORMAT);
  const char *msg = sl_dataset_errmsg(ds);
  if (!strstr(msg, "badlabel.tar") || !strstr(msg, "key b1") ||
      !strstr(msg, ".cls"))
    fail_msg("%s", msg);
  sl_dataset_close(ds);
  g_bad = 0;
  assert_int_equal(sl_dataset_open_verify(&ds, p, on_bad, NULL), SL_OK);
  assert_int_equal(g_bad, 1);
  assert_int_equal(sl_dataset_count(ds), 3);
  sl_sample_meta m;
  assert_int_equal(sl_dataset_info(ds, 2, &m), SL_OK);
  assert_int_equal(m.label, 2);
  sl_dataset_close(ds);
}

/* Many shards need many descriptors: the soft limit is raised to the hard
 * one; a hard limit below the count fails naming it (in a child: a lowered
 * hard limit cannot be raised again). */
static void test_wds_fd_limit(void **state) {
  (void)state;
  char p[700], link[700];
  path_in(p, sizeof p, "many");
  assert_int_equal(mkdir(p, 0755), 0);
  for (int k = 0; k < 200; k++) {
    char tgt[700];
    path_in(tgt, sizeof tgt, "train-000001.tar");
    snprintf(link, sizeof link, "%s/many/s-%03d.tar", g_dir, k);
    assert_int_equal(symlink(tgt, link), 0);
  }
  snprintf(link, sizeof link, "%s/many/s-{000..199}.tar", g_dir);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct rlimit rl = {.rlim_cur = 100, .rlim_max = 400};
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
      _exit(2);
    sl_dataset *ds;
    if (sl_dataset_open_file(&ds, link) != SL_OK || sl_dataset_count(ds) != 800)
      _exit(3);
    sl_dataset_close(ds);
    rl = (struct rlimit){.rlim_cur = 100, .rlim_max = 150};
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
      _exit(4);
    if (sl_dataset_open_file(&ds, link) != SL_EIO ||
        !strstr(sl_dataset_errmsg(ds), "200 files must stay open") ||
        !strstr(sl_dataset_errmsg(ds), "150"))
      _exit(5);
    sl_dataset_close(ds);
    _exit(0);
  }
  int ws = 0;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  assert_true(WIFEXITED(ws));
  assert_int_equal(WEXITSTATUS(ws), 0);
}

/* The source itself in both modes (the dataset API and the loader use
 * pread): mapped, every shard at its base in one reservation, reads point
 * into the map without a buffer and give the bytes pread gives. */
static void test_source_modes(void **state) {
  (void)state;
  char p[700];
  path_in(p, sizeof p, "train-{000000..000003}.tar");
  sl_source *mm, *pr;
  sl_err err;
  if (sl_source_open(&mm, p, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err) != SL_OK)
    fail_msg("%s", err.msg);
  assert_int_equal(
      sl_source_open(&pr, p, SL_FORMAT_WEBDATASET, SL_SOURCE_PREAD, &err),
      SL_OK);
  assert_int_equal(sl_source_fd(mm), -1);
  const sl_file_set *fs = sl_source_files(mm);
  assert_non_null(fs);
  assert_int_equal(fs->n, 4);
  assert_int_equal(sl_source_file_count(mm), 4);
  assert_int_equal(sl_source_file_first(mm, 3), 12);
  uint8_t *buf = malloc(sl_source_max_length(pr));
  assert_non_null(buf);
  for (uint64_t i = 0; i < sl_source_count(mm); i++) {
    const uint8_t *a, *b;
    size_t la, lb;
    assert_int_equal(sl_source_read(mm, i, NULL, 0, &a, &la, &err), SL_OK);
    assert_int_equal(
        sl_source_read(pr, i, buf, sl_source_max_length(pr), &b, &lb, &err),
        SL_OK);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    const sl_sample_info *e = sl_source_info(mm, i);
    assert_true(sl_file_set_find(fs, e->offset, e->length) >= 0);
  }
  free(buf);
  sl_source_close(mm);
  sl_source_close(pr);
}

/* ---- the image folder ---------------------------------------------------- */

static void test_folder(void **state) {
  (void)state;
  char p[700];
  path_in(p, sizeof p, "folder");
  check_dataset(p, "folder", "folder", NULL);
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
  assert_int_equal(sl_dataset_class_count(ds), 5);
  assert_string_equal(sl_dataset_class_name(ds, 3), "c3");
  assert_int_equal(sl_dataset_skipped_entries(ds), 1); /* notes.bmp */
  char name[256];
  assert_int_equal(sl_dataset_name(ds, 0, name, sizeof name), SL_OK);
  assert_string_equal(name, "c0/img0000.png");
  sl_dataset_close(ds);
  for (int q = 0; q < SL_TEST_IO_COUNT; q++) {
    const char *io = sl_test_io_backends[q];
    check_loader(p, "folder", io, "random");
    /* mmap cannot map files opened per read: pread, said; uring opens
     * each in its reader thread (or is refused by the kernel: said) */
    if (q == 0 && !strstr(g_log, "falling back to pread"))
      fail_msg("loader.io = mmap on a folder: no fallback said: %s", g_log);
    print_message("folder: %s", strstr(g_log, "reading with"));
  }
}

/* ---- the command line ---------------------------------------------------- */

static void test_cli(void **state) {
  (void)state;
  static char out[1 << 16];
  char args[2048], out_lmdb[700];
  snprintf(args, sizeof args, "info '%s/train-{000000..000003}.tar'", g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s", out);
  assert_non_null(strstr(out, "format:      webdataset"));
  assert_non_null(strstr(out, "samples:     14"));
  assert_non_null(strstr(out, "sluice pack"));
  snprintf(args, sizeof args, "info '%s/folder'", g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s", out);
  assert_non_null(strstr(out, "format:      folder"));
  assert_non_null(strstr(out, "c0/img0000.png"));
  snprintf(args, sizeof args, "verify --decode '%s/lists/shards.txt'", g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s", out);
  snprintf(args, sizeof args, "verify --decode '%s/folder'", g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s", out);
  snprintf(args, sizeof args, "extract '%s/train-000001.tar' 2 --out '%s/x'",
           g_dir, g_dir);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s", out);
  path_in(out_lmdb, sizeof out_lmdb, "packed.lmdb");
  snprintf(args, sizeof args,
           "pack --from '%s/train-{000000..000003}.tar' '%s'", g_dir, out_lmdb);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s", out);
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, out_lmdb), SL_OK);
  assert_int_equal(sl_dataset_count(ds), 14);
  sl_dataset_close(ds);
  path_in(out_lmdb, sizeof out_lmdb, "folder.lmdb");
  snprintf(args, sizeof args, "pack --from '%s/folder' '%s'", g_dir, out_lmdb);
  if (cli_run(args, out, sizeof out) != 0)
    fail_msg("%s", out);
  assert_int_equal(sl_dataset_open_file(&ds, out_lmdb), SL_OK);
  assert_int_equal(sl_dataset_count(ds), 9);
  assert_int_equal(sl_dataset_class_count(ds), 5);
  sl_dataset_close(ds);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wds_pattern),
      cmocka_unit_test(test_wds_list_and_format),
      cmocka_unit_test(test_wds_long_names),
      cmocka_unit_test(test_wds_targets),
      cmocka_unit_test(test_wds_damaged),
      cmocka_unit_test(test_wds_bad_sample),
      cmocka_unit_test(test_wds_fd_limit),
      cmocka_unit_test(test_source_modes),
      cmocka_unit_test(test_folder),
      cmocka_unit_test(test_cli),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
