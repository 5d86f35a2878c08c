/* `sluice pack --coco` and `--voc` on fixtures written in their real
 * formats by tests/tools/detect/make_detect.py (COCO JSON by Python's json
 * module, VOC XML by xml.etree, JPEGs by PIL): names, classes, the id
 * mapping, crowd/difficult flags and box values (against the values the
 * script computed), --split, --max-side scaling, EXIF-rotated files kept as
 * stored, a size that disagrees with the annotation skipped, damaged JSON
 * and XML named by file and line, unknown images and categories named,
 * `pack --from` keeping the boxes; then `info`, `extract` and `verify` on
 * the packed file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice.h"
#include "tests/support/test_dir.h"
#include "tests/tools/cli_run.h"

static char g_dir[400];
static char g_out[65536];

static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(g_dir, sizeof g_dir, "%s/cli-pack-detect-%ld", tmp ? tmp : "/tmp",
           (long)getpid());
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", g_dir);
  if (system(cmd) != 0)
    return -1;
  char args[600];
  snprintf(args, sizeof args, "'%s'", g_dir);
  return sl_test_make_fixtures("test_cli_pack_detect", SLUICE_TEST_PYTHON,
                               SLUICE_DETECT_PY, args, "python3-pil");
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...) {
  char args[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  return cli_run(args, g_out, sizeof g_out);
}

static void want_out(const char *s) {
  if (!strstr(g_out, s))
    fail_msg("no '%s' in:\n%s", s, g_out);
}

/* Compares the packed file with expected-NAME.txt (make_detect.py): each
 * sample's name, size and boxes, bit for bit when scale is 1, else the
 * expected boxes scaled by the stored over the expected size. */
static void compare_expected(const char *path, const char *expected,
                             bool scaled) {
  char ep[600];
  snprintf(ep, sizeof ep, "%s/%s", g_dir, expected);
  FILE *f = fopen(ep, "r");
  assert_non_null(f);
  sl_dataset *ds;
  if (sl_dataset_open_file(&ds, path) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  char name[600];
  unsigned w, h, n;
  uint64_t i = 0;
  while (fscanf(f, "%599s %u %u %u", name, &w, &h, &n) == 4) {
    sl_sample_meta m;
    char got_name[600];
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(sl_dataset_name(ds, i, got_name, sizeof got_name), SL_OK);
    assert_string_equal(got_name, name);
    assert_int_equal(m.label, -1);
    if (!scaled) {
      assert_int_equal(m.width, w);
      assert_int_equal(m.height, h);
    }
    const sl_box *b;
    uint32_t got_n;
    assert_int_equal(sl_dataset_boxes(ds, i, &b, &got_n), SL_OK);
    assert_int_equal(got_n, n);
    assert_int_equal(m.box_count, n);
    double sx = (double)m.width / w, sy = (double)m.height / h;
    for (unsigned k = 0; k < n; k++) {
      double v[4];
      int label;
      unsigned flags;
      assert_int_equal(fscanf(f, "%lf %lf %lf %lf %d %u", &v[0], &v[1], &v[2],
                              &v[3], &label, &flags),
                       6);
      const float got[4] = {b[k].x0, b[k].y0, b[k].x1, b[k].y1};
      for (int c = 0; c < 4; c++) {
        double want = scaled ? (float)(v[c] * (c % 2 ? sy : sx)) : v[c];
        if (scaled ? fabs(got[c] - want) > 1e-4 : got[c] != (float)want)
          fail_msg("%s sample %" PRIu64 " box %u coordinate %d: %.9g, want "
                   "%.9g",
                   path, i, k, c, (double)got[c], want);
      }
      assert_int_equal(b[k].label, label);
      assert_int_equal(b[k].flags, flags);
    }
    i++;
  }
  fclose(f);
  assert_int_equal(sl_dataset_count(ds), i);
  sl_dataset_close(ds);
}

static void test_coco(void **state) {
  (void)state;
  const char *ext[] = {"lmdb", "h5"};
  for (int f = 0; f < 2; f++) {
    char out[600];
    snprintf(out, sizeof out, "%s/coco.%s", g_dir, ext[f]);
    if (run("pack --quiet --threads 2 --coco '%s/coco/instances.json' "
            "'%s/coco/images' '%s'",
            g_dir, g_dir, out) != 0)
      fail_msg("%s", g_out);
    want_out("boxes: 5 stored");
    compare_expected(out, "expected-coco.txt", false);
    sl_dataset *ds;
    assert_int_equal(sl_dataset_open_file(&ds, out), SL_OK);
    assert_int_equal(sl_dataset_layout_version(ds), f ? 4 : 5);
    /* Category ids 1, 3, 90 become labels 0, 1, 2 in id order. */
    assert_int_equal(sl_dataset_class_count(ds), 3);
    assert_string_equal(sl_dataset_class_name(ds, 0), "person");
    assert_string_equal(sl_dataset_class_name(ds, 1), "car");
    assert_string_equal(sl_dataset_class_name(ds, 2), "toothbrush");
    if (!strstr(sl_dataset_writer_settings(ds), "input=coco coco_ids=1,3,90"))
      fail_msg("%s", sl_dataset_writer_settings(ds));
    /* The EXIF-rotated file (orientation 6) is stored as its pixels are:
     * 60 wide, 40 high, as COCO's annotation says. */
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, 3, &m), SL_OK);
    assert_int_equal(m.width, 60);
    assert_int_equal(m.height, 40);
    sl_dataset_close(ds);
  }
  /* h5py (a real client) reads the HDF5 box datasets as plain arrays. */
  char cmd[2000];
  snprintf(cmd, sizeof cmd,
           "'%s' -c \"import h5py, sys; g = h5py.File(sys.argv[1])['samples'];"
           " assert g.attrs['sluice_layout'] == 4;"
           " assert list(g['box_count'][:]) == [3, 1, 0, 1];"
           " assert g['boxes'].shape == (5, 4);"
           " assert list(g['boxes'][0]) == [10.5, 12.25, 20.0, 30.0];"
           " assert list(g['box_label'][:]) == [0, 2, 1, 1, 1];"
           " assert list(g['box_flags'][:]) == [0, 1, 0, 0, 0]\" '%s/coco.h5'",
           SLUICE_TEST_PYTHON, g_dir);
  if (system(cmd) != 0)
    fail_msg("h5py does not read the box datasets as expected: %s", cmd);
  /* pack --from carries the boxes over (LMDB to HDF5). */
  char from[600], to[600];
  snprintf(from, sizeof from, "%s/coco.lmdb", g_dir);
  snprintf(to, sizeof to, "%s/coco-from.h5", g_dir);
  if (run("pack --from '%s' '%s'", from, to) != 0)
    fail_msg("%s", g_out);
  compare_expected(to, "expected-coco.txt", false);
}

/* --max-side scales the boxes with the image; --shuffle keeps each
 * image's boxes with it (names checked against the expected file's). */
static void test_coco_max_side(void **state) {
  (void)state;
  char out[600];
  snprintf(out, sizeof out, "%s/coco-small.lmdb", g_dir);
  if (run("pack --quiet --max-side 32 --coco '%s/coco/instances.json' "
          "'%s/coco/images' '%s'",
          g_dir, g_dir, out) != 0)
    fail_msg("%s", g_out);
  want_out("scaled with --max-side");
  compare_expected(out, "expected-coco.txt", true);
}

static void test_coco_errors(void **state) {
  (void)state;
  char out[600], line[32] = "";
  snprintf(out, sizeof out, "%s/bad.lmdb", g_dir);
  char lp[600];
  snprintf(lp, sizeof lp, "%s/coco/cut-line.txt", g_dir);
  FILE *f = fopen(lp, "r");
  assert_non_null(f);
  assert_non_null(fgets(line, sizeof line, f));
  fclose(f);
  line[strcspn(line, "\n")] = '\0';
  char want[700];
  snprintf(want, sizeof want, "cut.json:%s: not valid JSON", line);
  assert_int_not_equal(run("pack --quiet --coco '%s/coco/cut.json' "
                           "'%s/coco/images' '%s'",
                           g_dir, g_dir, out),
                       0);
  want_out(want);
  assert_int_not_equal(run("pack --quiet --coco '%s/coco/unknown-image.json' "
                           "'%s/coco/images' '%s'",
                           g_dir, g_dir, out),
                       0);
  want_out("annotations[2] (id 1003) names image_id 4242");
  assert_int_not_equal(
      run("pack --quiet --coco '%s/coco/unknown-category.json' "
          "'%s/coco/images' '%s'",
          g_dir, g_dir, out),
      0);
  want_out("annotations[3] (id 1004) names category_id 77");
  assert_int_not_equal(run("pack --quiet --coco '%s/coco/missing.json' "
                           "'%s/coco/images' '%s'",
                           g_dir, g_dir, out),
                       0);
  want_out("missing.json");
  assert_int_not_equal(access(out, F_OK), 0);
  /* A size that disagrees with the image: skipped (boxes would not fit),
   * listed in the skip report; --strict fails. */
  assert_int_equal(run("pack --quiet --coco '%s/coco/wrong-size.json' "
                       "'%s/coco/images' '%s'",
                       g_dir, g_dir, out),
                   0);
  want_out("3 of 4 images");
  char rp[700];
  snprintf(rp, sizeof rp, "%s.skipped.txt", out);
  f = fopen(rp, "r");
  assert_non_null(f);
  char buf[2048] = "";
  size_t nr = fread(buf, 1, sizeof buf - 1, f);
  buf[nr] = '\0';
  fclose(f);
  if (!strstr(buf, "000000000007.jpg\tthe annotation says 57x40 but the "
                   "image is 56x40"))
    fail_msg("%s", buf);
  assert_int_not_equal(run("pack --quiet --strict --force --coco "
                           "'%s/coco/wrong-size.json' '%s/coco/images' '%s'",
                           g_dir, g_dir, out),
                       0);
  want_out("57x40");
}

static void test_voc(void **state) {
  (void)state;
  char out[600];
  snprintf(out, sizeof out, "%s/voc.lmdb", g_dir);
  if (run("pack --quiet --voc '%s/voc/VOCdevkit/VOC2007' '%s'", g_dir, out) !=
      0)
    fail_msg("%s", g_out);
  compare_expected(out, "expected-voc-all.txt", false);
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, out), SL_OK);
  /* Every name is one of VOC's 20: the standard 20 classes, so splits
   * packed apart share labels. */
  assert_int_equal(sl_dataset_class_count(ds), 20);
  assert_string_equal(sl_dataset_class_name(ds, 0), "aeroplane");
  assert_string_equal(sl_dataset_class_name(ds, 14), "person");
  assert_string_equal(sl_dataset_class_name(ds, 19), "tvmonitor");
  sl_dataset_close(ds);
  snprintf(out, sizeof out, "%s/voc-train.h5", g_dir);
  if (run("pack --quiet --voc --split train '%s/voc/VOCdevkit/VOC2007' '%s'",
          g_dir, out) != 0)
    fail_msg("%s", g_out);
  compare_expected(out, "expected-voc-train.txt", false);
}

static void test_voc_errors(void **state) {
  (void)state;
  char out[600], line[32] = "", lp[600], want[700];
  snprintf(out, sizeof out, "%s/vbad.lmdb", g_dir);
  snprintf(lp, sizeof lp, "%s/voc-bad-line.txt", g_dir);
  FILE *f = fopen(lp, "r");
  assert_non_null(f);
  assert_non_null(fgets(line, sizeof line, f));
  fclose(f);
  line[strcspn(line, "\n")] = '\0';
  assert_int_not_equal(
      run("pack --quiet --voc '%s/voc-bad/VOC2007' '%s'", g_dir, out), 0);
  snprintf(want, sizeof want, "Annotations/000001.xml:%s: not valid XML", line);
  want_out(want);
  assert_int_not_equal(
      run("pack --quiet --voc '%s/voc-nobox/VOC2007' '%s'", g_dir, out), 0);
  want_out("000001.xml:1: an <object> without a <name> or a complete "
           "<bndbox>");
  assert_int_not_equal(
      run("pack --quiet --voc --split nosuch '%s/voc/VOCdevkit/VOC2007' '%s'",
          g_dir, out),
      0);
  want_out("ImageSets/Main/nosuch.txt");
  assert_int_not_equal(
      run("pack --quiet --split train '%s/voc' '%s'", g_dir, out),
      2 - 2); /* --split without --voc: a usage error */
  want_out("--split is for --voc");
  assert_int_not_equal(access(out, F_OK), 0);
}

/* info's histogram, extract's NAME.boxes.json, verify's edge warning. */
static void test_info_extract_verify(void **state) {
  (void)state;
  char out[600];
  snprintf(out, sizeof out, "%s/cli.lmdb", g_dir);
  if (run("pack --quiet --coco '%s/coco/instances.json' '%s/coco/images' "
          "'%s'",
          g_dir, g_dir, out) != 0)
    fail_msg("%s", g_out);
  assert_int_equal(run("info '%s'", out), 0);
  want_out("boxes:       5 in all, 1.25 a sample, at most 3 (crowd 1, "
           "difficult 0)");
  want_out("boxes a sample:");
  want_out("  2-3                  1");
  want_out("coco_ids=1,3,90");
  char ex[600];
  snprintf(ex, sizeof ex, "%s/ex", g_dir);
  assert_int_equal(run("extract '%s' 0-2 --out '%s'", out, ex), 0);
  want_out("3 boxes: ");
  char bp[700];
  snprintf(bp, sizeof bp, "%s/0.boxes.json", ex);
  FILE *f = fopen(bp, "r");
  assert_non_null(f);
  char buf[4096] = "";
  size_t nr = fread(buf, 1, sizeof buf - 1, f);
  buf[nr] = '\0';
  fclose(f);
  if (!strstr(buf, "\"xyxy\": [10.5, 12.25, 20, 30], \"label\": 0, \"class\": "
                   "\"person\", \"crowd\": false") ||
      !strstr(buf, "\"class\": \"toothbrush\", \"crowd\": true"))
    fail_msg("%s", buf);
  /* A sample without boxes still gets its (empty) list. */
  snprintf(bp, sizeof bp, "%s/2.boxes.json", ex);
  f = fopen(bp, "r");
  assert_non_null(f);
  nr = fread(buf, 1, sizeof buf - 1, f);
  buf[nr] = '\0';
  fclose(f);
  assert_non_null(strstr(buf, "\"boxes\": []"));
  /* The toothbrush box reaches past the right edge: a warning, status 0. */
  assert_int_equal(run("verify '%s'", out), 0);
  want_out("sample 0: box 1 (40, 20, 65.5, 30) reaches past the edge of its "
           "64x48 image");
  want_out("5 boxes, 1 reaching past and 0 outside");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_coco),
      cmocka_unit_test(test_coco_max_side),
      cmocka_unit_test(test_coco_errors),
      cmocka_unit_test(test_voc),
      cmocka_unit_test(test_voc_errors),
      cmocka_unit_test(test_info_extract_verify),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
