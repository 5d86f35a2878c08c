/* `sluice pack` records each sample's source path and, from a --list with
 * numeric columns after the label, its float targets; a list line with
 * another number of targets is an error naming file:line. Checked through
 * the public dataset API. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice.h"
#include "tests/support/synth_jpeg.h"
#include "tests/support/test_dir.h"
#include "tests/tools/cli_run.h"
#include "tools/synth.h"

static char g_dir[400];
static char g_out[16384];

static int setup(void **state) {
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(g_dir, sizeof g_dir, "%s/cli-pack-list-%ld", tmp ? tmp : "/tmp",
           (long)getpid());
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/img/a' '%s/img/b b'", g_dir, g_dir);
  if (system(cmd) != 0)
    return -1;
  /* Four JPEGs, one in a folder whose name has a space. */
  const char *names[] = {"a/0.jpg", "a/1.jpg", "b b/2.jpg", "b b/3.jpg"};
  for (int i = 0; i < 4; i++) {
    sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
    uint8_t *buf;
    size_t n;
    sl_synth_err err;
    if (sl_synth_jpeg((uint64_t)i, 40 + i, 30, &o, &buf, &n, &err) != SL_OK)
      return -1;
    char p[700];
    snprintf(p, sizeof p, "%s/img/%s", g_dir, names[i]);
    FILE *f = fopen(p, "wb");
    if (!f)
      return -1;
    fwrite(buf, 1, n, f);
    fclose(f);
    free(buf);
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

static void write_text(const char *name, const char *text) {
  char p[700];
  snprintf(p, sizeof p, "%s/%s", g_dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int pack(const char *args) {
  char cmd[2200];
  snprintf(cmd, sizeof cmd, "pack --quiet --threads 2 %s", args);
  return cli_run(cmd, g_out, sizeof g_out);
}

/* A list with two targets a sample: names and targets arrive in the file,
 * in list order, for both formats. */
static void test_list_targets(void **state) {
  write_text("list.txt", "# path label t1 t2\n"
                         "a/0.jpg 1 0.5 -2\n"
                         "b b/3.jpg\t0 1e-3 4\n"
                         "a/1.jpg 2 7 8.25  \n"
                         "b b/2.jpg 0 0 0\n");
  const char *ext[] = {"lmdb", "h5"};
  const char *names[] = {"a/0.jpg", "b b/3.jpg", "a/1.jpg", "b b/2.jpg"};
  const int32_t labels[] = {1, 0, 2, 0};
  const float targets[][2] = {{0.5f, -2}, {1e-3f, 4}, {7, 8.25f}, {0, 0}};
  for (int f = 0; f < 2; f++) {
    char args[2048], path[700];
    snprintf(path, sizeof path, "%s/list.%s", g_dir, ext[f]);
    snprintf(args, sizeof args, "--list '%s/list.txt' '%s/img' '%s'", g_dir,
             g_dir, path);
    if (pack(args) != 0)
      fail_msg("%s", g_out);
    sl_dataset *ds;
    if (sl_dataset_open_file(&ds, path) != SL_OK)
      fail_msg("%s", sl_dataset_errmsg(ds));
    assert_int_equal(sl_dataset_count(ds), 4);
    assert_int_equal(sl_dataset_target_width(ds), 2);
    assert_int_equal(sl_dataset_class_count(ds), 3);
    for (uint64_t i = 0; i < 4; i++) {
      sl_sample_meta m;
      char name[64];
      assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
      assert_int_equal(sl_dataset_name(ds, i, name, sizeof name), SL_OK);
      assert_string_equal(name, names[i]);
      assert_int_equal(m.label, labels[i]);
      assert_memory_equal(m.targets, targets[i], sizeof targets[i]);
    }
    sl_dataset_close(ds);
  }
}

/* Folders: names are the paths below SRC; no targets. */
static void test_folder_names(void **state) {
  char args[2048], path[700];
  snprintf(path, sizeof path, "%s/folders.lmdb", g_dir);
  snprintf(args, sizeof args, "'%s/img' '%s'", g_dir, path);
  if (pack(args) != 0)
    fail_msg("%s", g_out);
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, path), SL_OK);
  assert_int_equal(sl_dataset_target_width(ds), 0);
  const char *names[] = {"a/0.jpg", "a/1.jpg", "b b/2.jpg", "b b/3.jpg"};
  for (uint64_t i = 0; i < 4; i++) {
    char name[64];
    assert_int_equal(sl_dataset_name(ds, i, name, sizeof name), SL_OK);
    assert_string_equal(name, names[i]);
  }
  assert_string_equal(sl_dataset_class_name(ds, 1), "b b");
  sl_dataset_close(ds);
}

/* Lines whose number of targets differs, bad labels, non-numbers: the
 * error names file:line and nothing is written. */
static void test_list_errors(void **state) {
  struct {
    const char *text, *want;
  } cases[] = {
      {"a/0.jpg 1 0.5 2\na/1.jpg 1 0.5\n",
       "bad.txt:2: 1 targets after the label, but the first line has 2"},
      {"a/0.jpg 1\n\n# c\na/1.jpg 1 3\n",
       "bad.txt:4: 1 targets after the label, but the first line has 0"},
      {"a/0.jpg 1.5 2\n", "bad.txt:1: expected 'relative/path LABEL"},
      {"a/0.jpg -1\n", "bad.txt:1: expected"},
      {"a/0.jpg\n", "bad.txt:1: expected"},
      {"a/0.jpg 1 nan\n", "bad.txt:1: expected"},
      {"a/0.jpg 1 2 1e39\n", "bad.txt:1: expected"}, /* not a float32 */
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    write_text("bad.txt", cases[k].text);
    char args[2048], path[700];
    snprintf(path, sizeof path, "%s/bad.lmdb", g_dir);
    snprintf(args, sizeof args, "--list '%s/bad.txt' '%s/img' '%s'", g_dir,
             g_dir, path);
    assert_int_equal(pack(args), 1);
    if (!strstr(g_out, cases[k].want))
      fail_msg("case %zu: '%s' lacks '%s'", k, g_out, cases[k].want);
    assert_int_not_equal(access(path, F_OK), 0);
  }
}

static void read_text(const char *name, char *buf, size_t cap) {
  char p[700];
  snprintf(p, sizeof p, "%s/%s", g_dir, name);
  FILE *f = fopen(p, "r");
  if (!f)
    fail_msg("no %s", p);
  size_t n = fread(buf, 1, cap - 1, f);
  buf[n] = 0;
  fclose(f);
}

/* A folder with a symlink loop (c/loop -> ..), a symlinked folder that
 * shows c's photo under a second label (d/alias -> ../c), an image
 * directly in SRC and an empty class folder: the loop is skipped and
 * listed, the photo packed twice is named, the stray image is listed as
 * skipped, the empty class is said in the summary, and the pack is made. */
/* `pack --levels 1/2`: images large enough get a level record, the small
 * ones stay JPEGs; labels, names and order are those of a pack without
 * levels; `info` shows the levels and their share; bad --levels values and
 * --levels with --keep-jpeg are usage errors. */
static void test_pack_levels(void **state) {
  char cmd[1800], p[700];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/big/a' '%s/big/b'", g_dir, g_dir);
  assert_int_equal(system(cmd), 0);
  const char *names[] = {"a/0.jpg", "a/1.jpg", "b/2.jpg"};
  const int sizes[3][2] = {{200, 160}, {90, 70}, {300, 200}};
  for (int i = 0; i < 3; i++) {
    sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
    uint8_t *buf;
    size_t n;
    sl_synth_err err;
    assert_int_equal(sl_synth_jpeg((uint64_t)i + 7, sizes[i][0], sizes[i][1],
                                   &o, &buf, &n, &err),
                     SL_OK);
    snprintf(p, sizeof p, "%s/big/%s", g_dir, names[i]);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fwrite(buf, 1, n, f);
    fclose(f);
    free(buf);
  }
  snprintf(cmd, sizeof cmd, "'%s/big' '%s/lv.lmdb' --levels 1/2", g_dir, g_dir);
  assert_int_equal(pack(cmd), 0);
  snprintf(cmd, sizeof cmd, "'%s/big' '%s/plain.h5'", g_dir, g_dir);
  assert_int_equal(pack(cmd), 0);
  char a[700], b[700];
  snprintf(a, sizeof a, "%s/lv.lmdb", g_dir);
  snprintf(b, sizeof b, "%s/plain.h5", g_dir);
  sl_dataset *lv, *pl;
  assert_int_equal(sl_dataset_open_file(&lv, a), SL_OK);
  assert_int_equal(sl_dataset_open_file(&pl, b), SL_OK);
  assert_int_equal(sl_dataset_count(lv), 3);
  assert_int_equal(sl_dataset_levels(lv, NULL, NULL), 2);
  assert_int_equal(sl_dataset_levels(pl, NULL, NULL), 0);
  static const sl_image_codec want[3] = {SL_IMAGE_JPEG_LEVELS, SL_IMAGE_JPEG,
                                         SL_IMAGE_JPEG_LEVELS};
  for (uint64_t i = 0; i < 3; i++) {
    sl_sample_meta m, n;
    char na[64], nb[64];
    assert_int_equal(sl_dataset_info(lv, i, &m), SL_OK);
    assert_int_equal(sl_dataset_info(pl, i, &n), SL_OK);
    assert_int_equal(m.label, n.label);
    assert_int_equal(m.codec, want[i]);
    assert_int_equal(n.codec, SL_IMAGE_JPEG);
    assert_int_equal(sl_dataset_name(lv, i, na, sizeof na), SL_OK);
    assert_int_equal(sl_dataset_name(pl, i, nb, sizeof nb), SL_OK);
    assert_string_equal(na, nb);
  }
  assert_non_null(strstr(sl_dataset_writer_settings(lv), "levels=4/8"));
  sl_dataset_close(lv);
  sl_dataset_close(pl);
  snprintf(cmd, sizeof cmd, "info '%s'", a);
  assert_int_equal(cli_run(cmd, g_out, sizeof g_out), 0);
  if (!strstr(g_out, "layout version 4") ||
      !strstr(g_out, "level 1: 2 images") || !strstr(g_out, "of payloads"))
    fail_msg("info says:\n%s", g_out);
  const char *bad[] = {"--levels 1/3", "--levels 2/2", "--levels 1/2,1/2x",
                       "--levels 1/2 --keep-jpeg"};
  for (int i = 0; i < 4; i++) {
    snprintf(cmd, sizeof cmd, "'%s/big' '%s/bad.lmdb' %s", g_dir, g_dir,
             bad[i]);
    assert_int_equal(pack(cmd), 2);
  }
}

/* A folder link loop and a second link to a class folder are skipped,
 * listed (each folder is walked once); a file reached under two names is
 * packed under both, with a warning; an image beside the class folders is
 * skipped. */
static void test_folder_links_and_strays(void **state) {
  (void)state;
  char cmd[2000];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && rm -rf L && mkdir -p L/c L/d L/empty && "
           "cp img/a/0.jpg L/c/x.jpg && cp img/a/1.jpg L/top.jpg && "
           "ln -s .. L/c/loop && ln -s ../c L/d/alias && "
           "ln -s ../c/x.jpg L/d/alias.jpg",
           g_dir);
  assert_int_equal(system(cmd), 0);
  char args[2048], path[700];
  snprintf(path, sizeof path, "%s/L.lmdb", g_dir);
  snprintf(args, sizeof args, "'%s/L' '%s'", g_dir, path);
  if (pack(args) != 0)
    fail_msg("%s", g_out);
  if (!strstr(g_out, "d/alias.jpg") || !strstr(g_out, "c/x.jpg") ||
      !strstr(g_out, "same file"))
    fail_msg("no word of the photo packed twice: %s", g_out);
  if (!strstr(g_out, "empty"))
    fail_msg("no word of the empty class folder: %s", g_out);
  char report[4096];
  read_text("L.lmdb.skipped.txt", report, sizeof report);
  if (!strstr(report, "L/c/loop\t") || !strstr(report, "loop") ||
      !strstr(report, "L/top.jpg\t") || !strstr(report, "L/d/alias\t") ||
      !strstr(report, "walked once"))
    fail_msg("report lacks the loop, the stray image or the folder walked "
             "once: %s",
             report);
  sl_dataset *ds;
  if (sl_dataset_open_file(&ds, path) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  assert_int_equal(sl_dataset_count(ds), 2);
  assert_int_equal(sl_dataset_class_count(ds), 3);
  sl_dataset_close(ds);
}

/* --progress lines: machine-readable "progress DONE TOTAL BYTES" lines, the
 * last one for every image; a bad mode is a usage error. */
static void test_progress_lines(void **state) {
  (void)state;
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "pack --progress lines --threads 1 '%s/img' "
           "'%s/progress.lmdb'",
           g_dir, g_dir);
  if (cli_run(cmd, g_out, sizeof g_out) != 0)
    fail_msg("%s", g_out);
  unsigned long long done = 0, total = 0, bytes = 0, last_done = 0;
  int lines = 0;
  for (const char *p = g_out; (p = strstr(p, "progress ")) != NULL; p++) {
    if (p != g_out && p[-1] != '\n')
      continue;
    assert_int_equal(
        sscanf(p, "progress %llu %llu %llu", &done, &total, &bytes), 3);
    assert_true(done >= last_done && done <= 4 && total == 4);
    last_done = done;
    lines++;
  }
  assert_true(lines >= 1);
  assert_true(done == 4 && bytes > 0);
  snprintf(cmd, sizeof cmd, "pack --progress fancy '%s/img' '%s/p2.lmdb'",
           g_dir, g_dir);
  assert_int_equal(cli_run(cmd, g_out, sizeof g_out), 2);
  assert_non_null(strstr(g_out, "--progress: 'fancy'"));
}

/* A photo without its quantization tables after a complete one, on one
 * thread: skipped as it would be alone, whether rewritten or re-encoded,
 * not packed with the previous photo's tables. */
static void test_tables_do_not_carry_over(void **state) {
  (void)state;
  char cmd[2400], p[700];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/abbr/c'", g_dir);
  assert_int_equal(system(cmd), 0);
  sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
  blob good;
  sl_synth_err err;
  assert_int_equal(sl_synth_jpeg(7, 64, 48, &o, &good.p, &good.n, &err), SL_OK);
  blob bare = sl_test_jpeg_without(&good, 0xDB);
  const blob *files[2] = {&good, &bare};
  for (int i = 0; i < 2; i++) {
    snprintf(p, sizeof p, "%s/abbr/c/%c.jpg", g_dir, 'a' + i);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(files[i]->p, 1, files[i]->n, f), files[i]->n);
    fclose(f);
  }
  free(good.p);
  free(bare.p);
  const char *modes[] = {"", "--reencode", "--keep-jpeg"};
  for (int m = 0; m < 3; m++) {
    snprintf(cmd, sizeof cmd,
             "pack --quiet --force --threads 1 %s '%s/abbr' "
             "'%s/abbr.lmdb'",
             modes[m], g_dir, g_dir);
    if (cli_run(cmd, g_out, sizeof g_out) != 0)
      fail_msg("%s: %s", modes[m], g_out);
    if (!strstr(g_out, "packed 1 of 2"))
      fail_msg("%s: %s", modes[m], g_out);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_folder_links_and_strays),
      cmocka_unit_test(test_list_targets),
      cmocka_unit_test(test_folder_names),
      cmocka_unit_test(test_list_errors),
      cmocka_unit_test(test_progress_lines),
      cmocka_unit_test(test_tables_do_not_carry_over),
      cmocka_unit_test(test_pack_levels),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
