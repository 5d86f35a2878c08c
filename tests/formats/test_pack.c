/* `sluice pack`, `info` and `verify`, run as the built CLI ($SLUICE_BIN):
 * round trips in both formats, folder and list inputs, skipped inputs,
 * --strict, --force, determinism, SIGINT/SIGKILL atomicity, the standard
 * tools (mdb_stat, h5dump, h5ls), verify's reports on damaged files, and
 * the JPEG restart layout (lossless rewrite; --keep-jpeg keeps bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <turbojpeg.h>
#include <unistd.h>

#include "codecs/codec.h"
#include "codecs/jpeg_layout.h"
#include "formats/core/source.h"
#include "formats/core/writer.h"
#include "test_images.h"
#include "tests/support/test_dir.h"

static char g_dir[512];
static const char *g_bin;

static void pathf(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pathf(char *buf, size_t cap, const char *fmt, ...) {
  int n = snprintf(buf, cap, "%s/", g_dir);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, cap - (size_t)n, fmt, ap);
  va_end(ap);
}

/* Runs the CLI with args (NULL-terminated); stdout and stderr go to
 * g_dir/out.txt and g_dir/err.txt. Returns the exit status, or 128 + signal. */
static int cli(const char *first, ...) {
  const char *argv[32] = {g_bin};
  int n = 1;
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a && n < 31; a = va_arg(ap, const char *))
    argv[n++] = a;
  va_end(ap);
  argv[n] = NULL;
  char out[600], err[600];
  pathf(out, sizeof out, "out.txt");
  pathf(err, sizeof err, "err.txt");
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    execv(g_bin, (char *const *)(uintptr_t)argv);
    _exit(127);
  }
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Whether g_dir/name (out.txt or err.txt) contains s. */
static int output_has(const char *name, const char *s) {
  char p[600];
  pathf(p, sizeof p, "%s", name);
  size_t len;
  uint8_t *b = ti_read(p, &len);
  if (!b)
    return 0;
  char *t = realloc(b, len + 1);
  t[len] = '\0';
  int found = strstr(t, s) != NULL;
  if (!found)
    fprintf(stderr, "[%s] lacks '%s':\n%s\n", name, s, t);
  free(t);
  return found;
}

/* Whether g_dir/name has no line containing s. */
static int output_lacks(const char *name, const char *s) {
  char p[600];
  pathf(p, sizeof p, "%s", name);
  size_t len;
  uint8_t *b = ti_read(p, &len);
  if (!b)
    return 1;
  char *t = realloc(b, len + 1);
  t[len] = '\0';
  int lacks = strstr(t, s) == NULL;
  if (!lacks)
    fprintf(stderr, "[%s] has '%s':\n%s\n", name, s, t);
  free(t);
  return lacks;
}

/* Whether g_dir/name has a line that contains s and ends with end. */
static int line_has(const char *name, const char *s, const char *end) {
  char p[600];
  pathf(p, sizeof p, "%s", name);
  size_t len;
  uint8_t *b = ti_read(p, &len);
  if (!b)
    return 0;
  char *t = realloc(b, len + 1);
  t[len] = '\0';
  int found = 0;
  for (char *line = t, *nl; !found && *line; line = nl + 1) {
    nl = strchr(line, '\n');
    if (!nl)
      nl = line + strlen(line) - 1;
    size_t n = (size_t)(nl - line) + (*nl != '\n');
    char *l = strndup(line, n);
    size_t el = strlen(end);
    found = strstr(l, s) && n >= el && !strcmp(l + n - el, end);
    free(l);
  }
  if (!found)
    fprintf(stderr, "[%s] has no line with '%s' ending '%s':\n%s\n", name, s,
            end, t);
  free(t);
  return found;
}

static int exists(const char *path) {
  struct stat sb;
  return lstat(path, &sb) == 0;
}

/* Number of entries in dir whose name contains s. */
static int count_names(const char *dir, const char *s) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    n += strstr(e->d_name, s) != NULL;
  if (d)
    closedir(d);
  return n;
}

static void mk(const char *rel) {
  char p[600];
  pathf(p, sizeof p, "%s", rel);
  mkdir(p, 0755);
}

/* The source tree:
 *   src/a/     1.jpg 64x48 rgb, 2.jpg 32x24 gray, 3.png 60x40 rgb,
 *              4.jpg broken (truncated), notes.txt (not an image)
 *   src/b b/   1.jpg EXIF orientation 6: stored 20x40, upright 40x20
 *              2.jpg CMYK 24x24, 3.png 30x30 gray+alpha, 4.png garbage
 *   src/c/     1.jpg 48x48 rgb, x/2.jpg 16x16 rgb (nested) */
static int setup(void **state) {
  const char *tmp = getenv("SLUICE_TEST_TMP");
  g_bin = getenv("SLUICE_BIN");
  if (!g_bin)
    return -1;
  snprintf(g_dir, sizeof g_dir, "%s/formats-pack-%ld", tmp ? tmp : "/tmp",
           (long)getpid());
  mkdir(g_dir, 0755);
  mk("src");
  mk("src/a");
  mk("src/b b");
  mk("src/c");
  mk("src/c/x");
  char p[600];
  int rc = 0;
  pathf(p, sizeof p, "src/a/1.jpg");
  rc |= ti_jpeg(p, 64, 48, 0, 90);
  pathf(p, sizeof p, "src/a/2.jpg");
  rc |= ti_jpeg(p, 32, 24, 1, 90);
  pathf(p, sizeof p, "src/a/3.png");
  rc |= ti_png(p, 60, 40, 0, 0);
  pathf(p, sizeof p, "src/a/1.jpg");
  size_t len;
  uint8_t *b = ti_read(p, &len);
  pathf(p, sizeof p, "src/a/4.jpg");
  rc |= ti_write(p, b, len - 30); /* headers intact, scan cut short */
  free(b);
  pathf(p, sizeof p, "src/a/notes.txt");
  rc |= ti_write(p, "hello", 5);
  pathf(p, sizeof p, "src/b b/1.jpg");
  rc |= ti_jpeg_exif(p, 40, 20, 6);
  pathf(p, sizeof p, "src/b b/2.jpg");
  rc |= ti_jpeg_cmyk(p, 24, 24);
  pathf(p, sizeof p, "src/b b/3.png");
  rc |= ti_png(p, 30, 30, 1, 1);
  pathf(p, sizeof p, "src/b b/4.png");
  rc |= ti_write(p, "\x89PNG\r\n\x1a\nbroken", 14);
  pathf(p, sizeof p, "src/c/1.jpg");
  rc |= ti_jpeg(p, 48, 48, 0, 90);
  pathf(p, sizeof p, "src/c/x/2.jpg");
  rc |= ti_jpeg(p, 16, 16, 0, 90);
  return rc;
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

static sl_source *open_src(const char *path) {
  sl_err err = {0};
  sl_source *src = NULL;
  if (sl_source_open(&src, path, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err) != SL_OK)
    fail_msg("%s", err.msg);
  return src;
}

/* Decodes sample i; returns the RGB (or gray) pixels, w, h, channels. */
static uint8_t *decode(sl_source *src, uint64_t i, int *w, int *h, int *ch) {
  const uint8_t *d;
  size_t len;
  sl_err err = {0};
  assert_int_equal(sl_source_read(src, i, NULL, 0, &d, &len, &err), SL_OK);
  tjhandle t = tjInitDecompress();
  int ss, cs;
  assert_int_equal(
      tjDecompressHeader3(t, d, (unsigned long)len, w, h, &ss, &cs), 0);
  *ch = cs == TJCS_GRAY ? 1 : 3;
  uint8_t *pix = malloc((size_t)*w * *h * *ch);
  assert_int_equal(tjDecompress2(t, d, (unsigned long)len, pix, *w, 0, *h,
                                 *ch == 1 ? TJPF_GRAY : TJPF_RGB, 0),
                   0);
  tjDestroy(t);
  return pix;
}

static void near_rgb(const uint8_t *px, const uint8_t *want) {
  for (int c = 0; c < 3; c++)
    if (abs((int)px[c] - (int)want[c]) > 40)
      fail_msg("pixel %d,%d,%d != %d,%d,%d", px[0], px[1], px[2], want[0],
               want[1], want[2]);
}

/* Asserts that a stored JPEG is in the restart layout: sequential (SOF0 or
 * SOF1) and a DRI of sl_jpeg_restart_mcus for its frame (a marker walk up
 * to the first SOS). */
static void assert_layout(const uint8_t *p, size_t n) {
  int sof = 0, dri = -1, w = 0, ncomp = 0, max_h = 0;
  size_t at = 2;
  assert_true(n > 4 && p[0] == 0xFF && p[1] == 0xD8);
  while (at + 4 <= n && p[at] == 0xFF && p[at + 1] != 0xDA) {
    int m = p[at + 1], seg = p[at + 2] << 8 | p[at + 3];
    const uint8_t *s = p + at + 4;
    assert_true(seg >= 2 && at + 2 + (size_t)seg <= n);
    if (m == 0xDD)
      dri = s[0] << 8 | s[1];
    if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
      sof = m;
      w = s[3] << 8 | s[4];
      ncomp = s[5];
      for (int c = 0; c < ncomp; c++)
        if (s[6 + 3 * c + 1] >> 4 > max_h)
          max_h = s[6 + 3 * c + 1] >> 4;
    }
    at += 2 + (size_t)seg;
  }
  assert_true(at + 2 <= n && p[at + 1] == 0xDA); /* reached the scan */
  if (sof != 0xC0 && sof != 0xC1)
    fail_msg("SOF marker 0x%02X: not sequential Huffman", sof);
  int mcu_w = ncomp == 1 ? 8 : 8 * max_h;
  int want = sl_jpeg_restart_mcus((w + mcu_w - 1) / mcu_w, mcu_w);
  if (dri != want)
    fail_msg("restart interval %d, the layout's is %d", dri, want);
}

/* Full-size decode of a JPEG's bytes (RGB or gray as it is stored). */
static uint8_t *decode_bytes(const uint8_t *d, size_t len, int *w, int *h,
                             int *ch) {
  tjhandle t = tjInitDecompress();
  int ss, cs;
  assert_int_equal(
      tjDecompressHeader3(t, d, (unsigned long)len, w, h, &ss, &cs), 0);
  *ch = cs == TJCS_GRAY ? 1 : 3;
  uint8_t *pix = malloc((size_t)*w * *h * *ch);
  assert_int_equal(tjDecompress2(t, d, (unsigned long)len, pix, *w, 0, *h,
                                 *ch == 1 ? TJPF_GRAY : TJPF_RGB,
                                 TJFLAG_STOPONWARNING),
                   0);
  tjDestroy(t);
  return pix;
}

/* Sample i of s holds the same pixels as the JPEG file (lossless). */
static void assert_same_pixels(sl_source *s, uint64_t i, const char *file) {
  size_t len;
  uint8_t *orig = ti_read(file, &len);
  assert_non_null(orig);
  const uint8_t *d;
  size_t dl;
  sl_err err = {0};
  assert_int_equal(sl_source_read(s, i, NULL, 0, &d, &dl, &err), SL_OK);
  int w0, h0, c0, w1, h1, c1;
  uint8_t *p0 = decode_bytes(orig, len, &w0, &h0, &c0);
  uint8_t *p1 = decode_bytes(d, dl, &w1, &h1, &c1);
  assert_int_equal(w0, w1);
  assert_int_equal(h0, h1);
  assert_int_equal(c0, c1);
  assert_memory_equal(p0, p1, (size_t)w0 * h0 * c0);
  free(p0);
  free(p1);
  free(orig);
}

/* Sample i of s is byte for byte the file. */
static void assert_same_bytes(sl_source *s, uint64_t i, const char *file) {
  size_t len;
  uint8_t *orig = ti_read(file, &len);
  assert_non_null(orig);
  const uint8_t *d;
  size_t dl;
  sl_err err = {0};
  assert_int_equal(sl_source_read(s, i, NULL, 0, &d, &dl, &err), SL_OK);
  assert_int_equal(dl, len);
  assert_memory_equal(d, orig, len);
  free(orig);
}

/* The JPEGs of the source tree that need no change at --max-side 48, and
 * their sample index. */
static const struct {
  int i;
  const char *file;
} g_unchanged[3] = {
    {1, "src/a/2.jpg"}, {6, "src/c/1.jpg"}, {7, "src/c/x/2.jpg"}};

static void check_folder_pack(const char *name) {
  char out[600], src[600];
  pathf(src, sizeof src, "src");
  pathf(out, sizeof out, "%s", name);
  int rc = cli("pack", src, out, "--max-side", "48", "--threads", "2", NULL);
  assert_int_equal(rc, 0);
  assert_true(output_has("out.txt", "packed 8 of 10 images"));
  assert_true(output_has("out.txt", "2 skipped"));
  char report[700];
  snprintf(report, sizeof report, "%s.skipped.txt", out);
  assert_true(exists(report));
  char rel[700];
  snprintf(rel, sizeof rel, "%s.skipped.txt", name);
  assert_true(output_has(rel, "src/a/4.jpg\tcorrupt JPEG: Premature end"));
  assert_true(output_has(rel, "src/b b/4.png\tbad PNG"));

  sl_source *s = open_src(out);
  assert_int_equal(sl_source_count(s), 8);
  assert_int_equal(sl_source_class_count(s), 3);
  assert_string_equal(sl_source_class_name(s, 0), "a");
  assert_string_equal(sl_source_class_name(s, 1), "b b");
  assert_string_equal(sl_source_class_name(s, 2), "c");
  static const int labels[8] = {0, 0, 0, 1, 1, 1, 2, 2};
  /* Expected stored sizes (w, h, channels). */
  static const int sizes[8][3] = {{48, 36, 3}, {32, 24, 1}, {48, 32, 3},
                                  {40, 20, 3}, {24, 24, 3}, {30, 30, 1},
                                  {48, 48, 3}, {16, 16, 3}};
  for (uint64_t i = 0; i < 8; i++) {
    const sl_sample_info *e = sl_source_info(s, i);
    assert_int_equal(e->label, labels[i]);
    assert_int_equal(e->codec, SL_IMAGE_JPEG);
    int w, h, ch;
    uint8_t *pix = decode(s, i, &w, &h, &ch);
    if (w != sizes[i][0] || h != sizes[i][1] || ch != sizes[i][2])
      fail_msg("sample %d: %dx%dx%d", (int)i, w, h, ch);
    assert_int_equal(e->width, w);
    assert_int_equal(e->height, h);
    assert_int_equal(e->channels, ch);
    const uint8_t *d;
    size_t dl;
    sl_err err = {0};
    assert_int_equal(sl_source_read(s, i, NULL, 0, &d, &dl, &err), SL_OK);
    assert_layout(d, dl); /* re-encoded and rewritten alike */
    if (i == 3) { /* EXIF 6: stored 20x40, upright 40x20 with the pattern */
      uint8_t want[3];
      ti_pattern(2, 2, 40, 20, want);
      near_rgb(pix + (2 * 40 + 2) * 3, want);
      ti_pattern(37, 2, 40, 20, want);
      near_rgb(pix + (2 * 40 + 37) * 3, want);
      ti_pattern(2, 17, 40, 20, want);
      near_rgb(pix + (17 * 40 + 2) * 3, want);
    }
    if (i == 4) { /* CMYK (200,100,50,255) inverted → RGB ~ (200,100,50) */
      static const uint8_t want[3] = {200, 100, 50};
      near_rgb(pix + (12 * 24 + 12) * 3, want);
    }
    free(pix);
  }
  /* JPEGs that need no change were rewritten losslessly: a/2.jpg, c/1.jpg
   * and c/x/2.jpg decode to their originals' pixels. */
  for (size_t k = 0; k < 3; k++) {
    char p[600];
    pathf(p, sizeof p, "%s", g_unchanged[k].file);
    assert_same_pixels(s, (uint64_t)g_unchanged[k].i, p);
  }
  assert_true(output_has("out.txt", "0 kept as is, 3 rewritten, 5 re-encoded"));
  assert_non_null(strstr(sl_source_writer_settings(s), "max_side=48"));
  assert_non_null(strstr(sl_source_writer_settings(s), "keep_jpeg=0"));
  sl_source_close(s);
  assert_int_equal(count_names(g_dir, "sluice-tmp"), 0);

  /* info and verify on the good file. */
  assert_int_equal(cli("info", out, NULL), 0);
  assert_true(output_has("out.txt", "samples:     8"));
  assert_true(output_has("out.txt", "classes:     3: a, b b, c\n"
                                    "targets:     none\n"
                                    "names:       recorded (e.g. sample 0: "
                                    "a/1.jpg)\n"));
  assert_true(output_has("out.txt", "jpeg 8"));
  assert_true(output_has("out.txt", "rgb 6, gray 2"));
  assert_true(output_has("out.txt", "<= 64"));
  /* --classes: exactly the label-to-name lines, nothing else */
  assert_int_equal(cli("info", "--classes", out, NULL), 0);
  char txt[600];
  pathf(txt, sizeof txt, "out.txt");
  size_t tlen;
  uint8_t *t = ti_read(txt, &tlen);
  assert_non_null(t);
  static const char k_want[] = "0\ta\n1\tb b\n2\tc\n";
  assert_int_equal(tlen, sizeof k_want - 1);
  assert_memory_equal(t, k_want, tlen);
  free(t);
  assert_int_equal(cli("info", out, "--nope", NULL), 2);
  assert_int_equal(cli("info", out, out, NULL), 2);
  assert_int_equal(cli("verify", out, "--decode", "--quiet", NULL), 0);
  assert_true(output_has("out.txt", "8 samples, all records in bounds, all "
                                    "images decode"));
}

static void test_folder_lmdb(void **state) {
  check_folder_pack("f.lmdb");
}
static void test_folder_hdf5(void **state) {
  check_folder_pack("f.h5");
}

static void test_list_mode(void **state) {
  char list[600], src[600], out[600];
  pathf(list, sizeof list, "list.txt");
  pathf(src, sizeof src, "src");
  const char *text = "# comment\n"
                     "c/1.jpg 4\n"
                     "\n"
                     "a/2.jpg\t0\n"
                     "b b/1.jpg 2\n"
                     "a/missing.jpg 1\n";
  assert_int_equal(ti_write(list, text, strlen(text)), 0);
  pathf(out, sizeof out, "list.h5");
  assert_int_equal(cli("pack", src, out, "--list", list, "--quiet", NULL), 0);
  assert_true(output_has("out.txt", "packed 3 of 4 images"));
  char rel[64] = "list.h5.skipped.txt";
  assert_true(output_has(rel, "a/missing.jpg\tcannot open"));
  sl_source *s = open_src(out);
  assert_int_equal(sl_source_count(s), 3);
  assert_int_equal(sl_source_class_count(s), 5);
  assert_string_equal(sl_source_class_name(s, 4), "4");
  assert_int_equal(sl_source_info(s, 0)->label, 4);
  assert_int_equal(sl_source_info(s, 1)->label, 0);
  assert_int_equal(sl_source_info(s, 2)->label, 2);
  assert_int_equal(sl_source_info(s, 2)->width, 40); /* EXIF applied */
  assert_int_equal(sl_source_info(s, 2)->height, 20);
  sl_source_close(s);
  /* A bad line is an error naming file and line. */
  const char *bad = "a/2.jpg 0\na/1.jpg x\n";
  assert_int_equal(ti_write(list, bad, strlen(bad)), 0);
  pathf(out, sizeof out, "list2.h5");
  assert_int_equal(cli("pack", src, out, "--list", list, NULL), 1);
  assert_true(output_has("err.txt", "list.txt:2:"));
  assert_false(exists(out));
}

static void test_strict_and_force(void **state) {
  char src[600], out[600];
  pathf(src, sizeof src, "src");
  pathf(out, sizeof out, "strict.lmdb");
  assert_int_equal(cli("pack", src, out, "--strict", "--threads", "1", NULL),
                   1);
  assert_true(output_has("err.txt", "--strict"));
  assert_false(exists(out));
  assert_int_equal(count_names(g_dir, "sluice-tmp"), 0);
  /* An existing OUT is kept unless --force. */
  assert_int_equal(ti_write(out, "precious", 8), 0);
  assert_int_equal(cli("pack", src, out, "--quiet", NULL), 1);
  assert_true(output_has("err.txt", "exists (use --force"));
  size_t len;
  uint8_t *b = ti_read(out, &len);
  assert_int_equal(len, 8);
  free(b);
  assert_int_equal(cli("pack", src, out, "--quiet", "--force", NULL), 0);
  sl_source *s = open_src(out);
  assert_int_equal(sl_source_count(s), 8);
  sl_source_close(s);
  /* Usage errors. */
  assert_int_equal(cli("pack", src, NULL), 2);
  pathf(out, sizeof out, "noext.bin");
  assert_int_equal(cli("pack", src, out, NULL), 2);
  assert_int_equal(cli("pack", src, out, "--format", "zip", NULL), 2);
  assert_int_equal(cli("pack", src, out, "--quality", "0", NULL), 2);
  /* No images at all. */
  char empty[600];
  pathf(empty, sizeof empty, "emptysrc");
  mkdir(empty, 0755);
  pathf(out, sizeof out, "empty.lmdb");
  assert_int_equal(cli("pack", empty, out, NULL), 1);
  assert_false(exists(out));
}

static int same_file(const char *a, const char *b) {
  size_t la, lb;
  uint8_t *x = ti_read(a, &la), *y = ti_read(b, &lb);
  int same = x && y && la == lb && memcmp(x, y, la) == 0;
  free(x);
  free(y);
  return same;
}

static void test_deterministic(void **state) {
  static const char *const ext[2] = {"lmdb", "h5"};
  char src[600];
  pathf(src, sizeof src, "src");
  for (int f = 0; f < 2; f++) {
    char o1[600], o3[600], o4[600];
    pathf(o1, sizeof o1, "det1.%s", ext[f]);
    pathf(o3, sizeof o3, "det3.%s", ext[f]);
    pathf(o4, sizeof o4, "det4.%s", ext[f]);
    assert_int_equal(cli("pack", src, o1, "--threads", "1", "--shuffle", "7",
                         "--reencode", "--quiet", NULL),
                     0);
    /* A second apart: a timestamp anywhere in the file would show. */
    sleep(1);
    assert_int_equal(cli("pack", src, o3, "--threads", "3", "--shuffle", "7",
                         "--reencode", "--quiet", NULL),
                     0);
    assert_true(same_file(o1, o3));
    assert_int_equal(cli("pack", src, o4, "--threads", "3", "--shuffle", "8",
                         "--reencode", "--quiet", NULL),
                     0);
    assert_false(same_file(o1, o4));
    sl_source *s = open_src(o1);
    assert_int_equal(sl_source_count(s), 8);
    assert_non_null(strstr(sl_source_writer_settings(s), "shuffle=7"));
    sl_source_close(s);
  }
}

/* Many larger images so that a pack runs long enough to be interrupted. */
static void make_big_src(void) {
  char p[600];
  pathf(p, sizeof p, "big");
  if (exists(p))
    return;
  mk("big");
  mk("big/k");
  pathf(p, sizeof p, "big/k/0.jpg");
  assert_int_equal(ti_jpeg(p, 512, 512, 0, 95), 0);
  size_t len;
  uint8_t *b = ti_read(p, &len);
  for (int i = 1; i < 600; i++) {
    pathf(p, sizeof p, "big/k/%d.jpg", i);
    assert_int_equal(ti_write(p, b, len), 0);
  }
  free(b);
}

/* Starts a pack (with SIGHUP ignored, as under nohup, when ignore_hup),
 * waits for its start line, sends sig; returns the exit status, or 1000 +
 * the signal that killed it. */
static int pack_and_signal(const char *out, int sig, int ignore_hup) {
  char src[600];
  pathf(src, sizeof src, "big");
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    if (ignore_hup)
      signal(SIGHUP, SIG_IGN); /* kept across exec */
    dup2(fds[1], 2);
    int nul = open("/dev/null", O_WRONLY);
    dup2(nul, 1);
    close(fds[0]);
    execl(g_bin, g_bin, "pack", src, out, "--threads", "1", "--reencode",
          "--max-side", "300", (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  char buf[512];
  size_t got = 0;
  while (got < sizeof buf - 1) {
    ssize_t n = read(fds[0], buf + got, sizeof buf - 1 - got);
    if (n <= 0)
      break;
    got += (size_t)n;
    buf[got] = '\0';
    if (strstr(buf, "threads\n"))
      break;
  }
  kill(pid, sig);
  int st;
  waitpid(pid, &st, 0);
  close(fds[0]);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
}

static void test_signals(void **state) {
  make_big_src();
  static const char *const names[2] = {"sig.lmdb", "sig.h5"};
  static const int stop[2] = {SIGINT, SIGTERM};
  for (int f = 0; f < 2; f++) {
    char out[600];
    pathf(out, sizeof out, "%s", names[f]);
    int before = count_names(g_dir, "");
    assert_int_equal(pack_and_signal(out, stop[f], 0), 130);
    assert_false(exists(out));
    assert_int_equal(count_names(g_dir, ""), before);
    assert_int_equal(pack_and_signal(out, SIGKILL, 0), 1000 + SIGKILL);
    assert_false(exists(out));
    /* Nothing is left: the files being written were anonymous. */
    assert_int_equal(count_names(g_dir, ""), before);
    assert_int_equal(count_names(g_dir, "sluice-tmp"), 0);
  }
  /* SIGHUP stops a pack, unless it was ignored (nohup): then the pack runs
   * to the end. */
  char hup[600];
  pathf(hup, sizeof hup, "hup.lmdb");
  assert_int_equal(pack_and_signal(hup, SIGHUP, 0), 130);
  assert_false(exists(hup));
  assert_int_equal(pack_and_signal(hup, SIGHUP, 1), 0);
  assert_true(exists(hup));
  /* A temporary file left by a dead writer is removed by the next pack. */
  pid_t dead = fork();
  if (dead == 0)
    _exit(0);
  waitpid(dead, NULL, 0);
  char stale[700], src[600], out[600];
  pathf(stale, sizeof stale, ".st.h5.sluice-tmp.%ld", (long)dead);
  assert_int_equal(ti_write(stale, "x", 1), 0);
  pathf(src, sizeof src, "src");
  pathf(out, sizeof out, "st.h5");
  assert_int_equal(cli("pack", src, out, "--quiet", NULL), 0);
  assert_false(exists(stale));
}

static int have(const char *tool) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
  if (system(cmd) == 0)
    return 1;
  printf("skipping the %s check: %s is not installed\n", tool, tool);
  return 0;
}

static void test_standard_tools(void **state) {
  char src[600], l[600], h[600], cmd[2000], out[600];
  pathf(src, sizeof src, "src");
  pathf(l, sizeof l, "std.lmdb");
  pathf(h, sizeof h, "std.h5");
  pathf(out, sizeof out, "tool.txt");
  assert_int_equal(cli("pack", src, l, "--quiet", NULL), 0);
  assert_int_equal(cli("pack", src, h, "--quiet", NULL), 0);
  if (!have("mdb_stat") || !have("h5ls") || !have("h5dump")) {
    print_message("mdb_stat, h5ls or h5dump missing (scripts/deps.sh "
                  "installs lmdb-utils and hdf5-tools)\n");
    skip(); /* reported as skipped, not passed */
  }
  snprintf(cmd, sizeof cmd, "mdb_stat -n '%s' > '%s' 2>&1", l, out);
  assert_int_equal(system(cmd), 0);
  /* 8 samples, 1 index chunk, the metadata */
  assert_true(output_has("tool.txt", "Entries: 10"));
  snprintf(cmd, sizeof cmd, "h5ls -r '%s' > '%s' 2>&1", h, out);
  assert_int_equal(system(cmd), 0);
  assert_true(output_has("tool.txt", "/samples/offsets"));
  assert_true(output_has("tool.txt", "Dataset {8, 3}"));
  snprintf(cmd, sizeof cmd, "h5dump -d /samples/label '%s' > '%s' 2>&1", h,
           out);
  assert_int_equal(system(cmd), 0);
  assert_true(output_has("tool.txt", "0, 0, 0, 1, 1, 1, 2, 2"));
}

/* verify names damaged samples; info and verify reject non-files. */
static void test_verify_damage(void **state) {
  char src[600], out[600];
  pathf(src, sizeof src, "src");
  static const char *const names[2] = {"vd.lmdb", "vd.h5"};
  for (int f = 0; f < 2; f++) {
    pathf(out, sizeof out, "%s", names[f]);
    assert_int_equal(cli("pack", src, out, "--quiet", NULL), 0);
    sl_source *s = open_src(out);
    uint64_t off = sl_source_info(s, 6)->offset;
    uint32_t len = sl_source_info(s, 6)->length;
    sl_source_close(s);
    /* Scramble the entropy-coded middle of sample 6. */
    size_t flen;
    uint8_t *b = ti_read(out, &flen);
    for (uint32_t k = len / 2; k < len - 4; k++)
      b[off + k] = (uint8_t)(k * 13);
    assert_int_equal(ti_write(out, b, flen), 0);
    assert_int_equal(cli("verify", out, NULL), 0); /* records still fine */
    assert_int_equal(
        cli("verify", out, "--decode", "--quiet", "--threads", "3", NULL), 1);
    /* named by index and by its image, with the loader's decoder's reason */
    assert_true(line_has("err.txt", ": sample 6: jpeg: ", "  (from c/1.jpg)"));
    assert_true(output_has("out.txt", "1 of 8 samples are bad"));
    if (f == 0) { /* LMDB: a record header's codec byte */
      b[off - 24 + 6] = 9;
      assert_int_equal(ti_write(out, b, flen), 0);
      assert_int_equal(cli("verify", out, NULL), 1);
      assert_true(output_has("err.txt", "sample 6: key 0000000000000006"));
      assert_true(output_has("err.txt", "record header disagrees"));
      /* The index chunk's codec of sample 5: open fails, verify names it. */
      for (size_t at = 0; at + 8 + 16 * 8 <= flen; at++)
        if (memcmp(b + at, "SLI1", 4) == 0 && b[at + 4] == 8) {
          b[at + 8 + 16 * 5 + 12] = 9;
          break;
        }
      assert_int_equal(ti_write(out, b, flen), 0);
      assert_int_equal(cli("info", out, NULL), 1);
      assert_true(output_has("err.txt", "sample 5"));
      assert_true(output_has("err.txt", "unknown codec 9"));
      assert_int_equal(cli("verify", out, NULL), 1);
      assert_true(output_has("err.txt", "sample 5: key 0000000000000005"));
      assert_true(output_has("out.txt", "2 of 8 samples are bad"));
    }
    free(b);
  }
  pathf(out, sizeof out, "nothing.lmdb");
  assert_int_equal(cli("info", out, NULL), 1);
  assert_int_equal(cli("verify", out, NULL), 1);
  assert_true(output_has("err.txt", "nothing.lmdb"));
}

/* Appends the JPEG file rel (as stored, with the writer that keeps bytes)
 * as a w x h, 3-channel sample of class 0 named name (NULL: none) with
 * targets {i, -i} when the file has two. */
static void add_jpeg(sl_fwriter *w, const char *rel, int wd, int ht,
                     const char *name, int with_targets, int i) {
  char p[600];
  pathf(p, sizeof p, "%s", rel);
  size_t len;
  uint8_t *b = ti_read(p, &len);
  assert_non_null(b);
  sl_sample_info m = {.label = 0,
                      .codec = SL_IMAGE_JPEG,
                      .channels = 3,
                      .height = (uint16_t)ht,
                      .width = (uint16_t)wd};
  float t[2] = {(float)i, (float)-i};
  sl_err err = {0};
  sl_status st =
      sl_fwriter_add_named(w, b, len, &m, name, with_targets ? t : NULL, &err);
  if (st != SL_OK)
    fail_msg("%s", err.msg);
  free(b);
}

/* verify --decode runs the loader's decoder: a CMYK JPEG stored as it is
 * (the loader turns it into RGB) passes, a corrupt one is named by index
 * and by the image it came from; info shows targets and names. */
static void test_verify_decode_cmyk(void **state) {
  mk("vc");
  char p[600], out[600], plain[600];
  pathf(p, sizeof p, "vc/cmyk.jpg");
  assert_int_equal(ti_jpeg_cmyk(p, 24, 16), 0);
  pathf(p, sizeof p, "vc/good.jpg");
  assert_int_equal(ti_jpeg(p, 160, 120, 0, 90), 0);
  size_t len;
  uint8_t *b = ti_read(p, &len);
  assert_non_null(b);
  for (size_t k = len * 3 / 4; k < len - 4; k++) /* scramble the scan */
    b[k] = (uint8_t)(k * 13);
  pathf(p, sizeof p, "vc/broken.jpg");
  assert_int_equal(ti_write(p, b, len), 0);
  free(b);
  /* It really is a 4-component Adobe JPEG (TurboJPEG writes CMYK as YCCK,
   * Adobe transform 2). */
  pathf(p, sizeof p, "vc/cmyk.jpg");
  b = ti_read(p, &len);
  assert_non_null(b);
  tjhandle t = tjInitDecompress();
  int w, h, ss, cs;
  assert_int_equal(
      tjDecompressHeader3(t, b, (unsigned long)len, &w, &h, &ss, &cs), 0);
  tjDestroy(t);
  free(b);
  assert_true(cs == TJCS_CMYK || cs == TJCS_YCCK);
  assert_int_equal(w, 24);
  assert_int_equal(h, 16);

  static const char *const classes[1] = {"k"};
  static const char *const ext[2] = {"lmdb", "h5"};
  for (int f = 0; f < 2; f++) {
    sl_err err = {0};
    sl_fwriter *wr;
    /* 0: CMYK, no name; 1: good, named; 2: corrupt, named; 2 targets. */
    pathf(out, sizeof out, "vc.%s", ext[f]);
    assert_int_equal(sl_fwriter_open(&wr, out, SL_FORMAT_AUTO, &err), SL_OK);
    assert_int_equal(sl_fwriter_set_target_width(wr, 2, &err), SL_OK);
    add_jpeg(wr, "vc/cmyk.jpg", 24, 16, NULL, 1, 0);
    add_jpeg(wr, "vc/good.jpg", 160, 120, "k/good.jpg", 1, 1);
    add_jpeg(wr, "vc/broken.jpg", 160, 120, "k/broken.jpg", 1, 2);
    assert_int_equal(sl_fwriter_commit(wr, 1, classes, "test", false, &err),
                     SL_OK);
    /* The same without the corrupt one, names or targets. */
    pathf(plain, sizeof plain, "vc-plain.%s", ext[f]);
    assert_int_equal(sl_fwriter_open(&wr, plain, SL_FORMAT_AUTO, &err), SL_OK);
    add_jpeg(wr, "vc/cmyk.jpg", 24, 16, NULL, 0, 0);
    add_jpeg(wr, "vc/good.jpg", 160, 120, NULL, 0, 1);
    assert_int_equal(sl_fwriter_commit(wr, 1, classes, "test", false, &err),
                     SL_OK);

    assert_int_equal(cli("verify", plain, NULL), 0);
    assert_int_equal(cli("verify", plain, "--decode", "--quiet", NULL), 0);
    assert_true(output_has("out.txt", "2 samples, all records in bounds, all "
                                      "images decode"));
    assert_true(output_lacks("err.txt", "CMYK"));

    assert_int_equal(cli("verify", out, NULL), 0); /* records are fine */
    for (int threads = 1; threads <= 3; threads += 2) {
      char nt[8];
      snprintf(nt, sizeof nt, "%d", threads);
      assert_int_equal(
          cli("verify", out, "--decode", "--quiet", "--threads", nt, NULL), 1);
      char want[700];
      snprintf(want, sizeof want, "%s: sample 2: jpeg: ", out);
      assert_true(line_has("err.txt", want, "  (from k/broken.jpg)"));
      assert_true(output_lacks("err.txt", ": sample 0"));
      assert_true(output_lacks("err.txt", ": sample 1"));
      assert_true(output_has("out.txt", "1 of 3 samples are bad"));
    }

    /* info: the targets and names lines, right after the classes line */
    assert_int_equal(cli("info", out, NULL), 0);
    assert_true(output_has("out.txt", "samples:     3\n"
                                      "classes:     1: k\n"
                                      "targets:     2 floats per sample\n"
                                      "names:       recorded (e.g. sample 1: "
                                      "k/good.jpg)\n"
                                      "payloads:    "));
    assert_true(output_has("out.txt", "jpeg layout: 0 of 3 sampled JPEGs"));
    assert_int_equal(cli("info", plain, NULL), 0);
    assert_true(output_has("out.txt", "classes:     1: k\n"
                                      "targets:     none\n"
                                      "names:       none recorded\n"));

    if (f == 0) { /* LMDB: sample 1's record header (before its name); the
                     corrupt sample 2 is still found and named */
      sl_source *s = open_src(out);
      uint64_t off = sl_source_info(s, 1)->offset;
      uint32_t nl = sl_source_info(s, 1)->name_len;
      sl_source_close(s);
      assert_int_equal(nl, strlen("k/good.jpg"));
      size_t flen;
      uint8_t *fb = ti_read(out, &flen);
      assert_non_null(fb);
      fb[off - nl - 24 + 6] = 9; /* its codec byte */
      assert_int_equal(ti_write(out, fb, flen), 0);
      free(fb);
      /* found at open, its index entry is blanked: named by key only */
      assert_int_equal(cli("verify", out, NULL), 1);
      assert_true(output_has("err.txt", ": sample 1: key 0000000000000001"));
      assert_true(output_has("out.txt", "1 of 3 samples are bad"));
      assert_int_equal(cli("verify", out, "--decode", "--quiet", NULL), 1);
      assert_true(output_has("err.txt", ": sample 1: key 0000000000000001"));
      assert_true(
          line_has("err.txt", ": sample 2: jpeg: ", "  (from k/broken.jpg)"));
      assert_true(output_has("out.txt", "2 of 3 samples are bad"));
    }
  }
}

/* A textured w x h JPEG written by TurboJPEG with subsampling samp and
 * flags (TJFLAG_PROGRESSIVE). */
static void write_tj(const char *rel, int w, int h, int samp, int flags) {
  int ch = samp == TJSAMP_GRAY ? 1 : 3;
  uint8_t *pix = malloc((size_t)w * h * ch);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w * ch; x++)
      pix[(size_t)y * w * ch + x] = (uint8_t)(x * 7 + y * 13 + (x * y) % 31);
  tjhandle t = tjInitCompress();
  unsigned char *jpg = NULL;
  unsigned long len = 0;
  assert_int_equal(tjCompress2(t, pix, w, 0, h, ch == 1 ? TJPF_GRAY : TJPF_RGB,
                               &jpg, &len, samp, 85, flags),
                   0);
  char p[600];
  pathf(p, sizeof p, "%s", rel);
  assert_int_equal(ti_write(p, jpg, len), 0);
  tjFree(jpg);
  tjDestroy(t);
  free(pix);
}

/* Progressive and baseline inputs of every subsampling are rewritten into
 * the layout with their pixels unchanged, the same for any --threads;
 * --keep-jpeg stores their bytes; it excludes --reencode. */
static void test_jpeg_layout(void **state) {
  mk("lay");
  mk("lay/k");
  static const struct {
    const char *file;
    int w, h, samp, flags;
  } in[] = {{"lay/k/a422.jpg", 211, 23, TJSAMP_422, 0},
            {"lay/k/b440.jpg", 33, 70, TJSAMP_440, 0},
            {"lay/k/c420p.jpg", 500, 375, TJSAMP_420, TJFLAG_PROGRESSIVE},
            {"lay/k/d444p.jpg", 75, 41, TJSAMP_444, TJFLAG_PROGRESSIVE},
            {"lay/k/e_grayp.jpg", 17, 9, TJSAMP_GRAY, TJFLAG_PROGRESSIVE},
            {"lay/k/f1x1.jpg", 1, 1, TJSAMP_420, 0}};
  enum { N = sizeof in / sizeof *in };
  for (int i = 0; i < N; i++)
    write_tj(in[i].file, in[i].w, in[i].h, in[i].samp, in[i].flags);
  char src[600], o1[600], o3[600], ok[600], p[600];
  pathf(src, sizeof src, "lay");
  pathf(o1, sizeof o1, "lay1.lmdb");
  pathf(o3, sizeof o3, "lay3.lmdb");
  pathf(ok, sizeof ok, "layk.h5");
  assert_int_equal(cli("pack", src, o1, "--threads", "1", "--quiet", NULL), 0);
  assert_true(output_has("out.txt", "0 kept as is, 6 rewritten, 0 re-encoded"));
  assert_int_equal(cli("pack", src, o3, "--threads", "3", "--quiet", NULL), 0);
  assert_true(same_file(o1, o3));
  sl_source *s = open_src(o1);
  assert_int_equal(sl_source_count(s), N);
  for (int i = 0; i < N; i++) {
    const uint8_t *d;
    size_t dl;
    sl_err err = {0};
    assert_int_equal(sl_source_read(s, (uint64_t)i, NULL, 0, &d, &dl, &err),
                     SL_OK);
    assert_layout(d, dl);
    pathf(p, sizeof p, "%s", in[i].file);
    assert_same_pixels(s, (uint64_t)i, p);
  }
  sl_source_close(s);
  assert_int_equal(cli("verify", o1, "--decode", "--quiet", NULL), 0);
  assert_int_equal(cli("info", o1, NULL), 0);
  assert_true(output_has("out.txt", "jpeg layout: 6 of 6 sampled JPEGs have "
                                    "restart segments (crops decode only"));

  assert_int_equal(cli("pack", src, ok, "--keep-jpeg", "--quiet", NULL), 0);
  assert_true(output_has("out.txt", "6 kept as is, 0 rewritten, 0 re-encoded"));
  assert_int_equal(cli("info", ok, NULL), 0); /* TurboJPEG wrote no markers */
  assert_true(output_has("out.txt", "jpeg layout: 0 of 6 sampled JPEGs"));
  s = open_src(ok);
  for (int i = 0; i < N; i++) {
    pathf(p, sizeof p, "%s", in[i].file);
    assert_same_bytes(s, (uint64_t)i, p);
  }
  assert_non_null(strstr(sl_source_writer_settings(s), "keep_jpeg=1"));
  sl_source_close(s);
  pathf(ok, sizeof ok, "layx.h5");
  assert_int_equal(cli("pack", src, ok, "--keep-jpeg", "--reencode", NULL), 2);
  assert_true(output_has("err.txt", "--keep-jpeg"));
  assert_false(exists(ok));
}

/* --keep-jpeg on the mixed tree: the JPEGs that need no change keep their
 * bytes; what is re-encoded still gets the layout. */
static void test_keep_jpeg(void **state) {
  char out[600], src[600];
  pathf(src, sizeof src, "src");
  pathf(out, sizeof out, "keep.lmdb");
  assert_int_equal(
      cli("pack", src, out, "--max-side", "48", "--keep-jpeg", "--quiet", NULL),
      0);
  assert_true(output_has("out.txt", "3 kept as is, 0 rewritten, 5 re-encoded"));
  sl_source *s = open_src(out);
  assert_int_equal(sl_source_count(s), 8);
  for (size_t k = 0; k < 3; k++) {
    char p[600];
    pathf(p, sizeof p, "%s", g_unchanged[k].file);
    assert_same_bytes(s, (uint64_t)g_unchanged[k].i, p);
  }
  static const int reencoded[5] = {0, 2, 3, 4, 5};
  for (int k = 0; k < 5; k++) {
    const uint8_t *d;
    size_t dl;
    sl_err err = {0};
    assert_int_equal(
        sl_source_read(s, (uint64_t)reencoded[k], NULL, 0, &d, &dl, &err),
        SL_OK);
    assert_layout(d, dl);
  }
  sl_source_close(s);
}

/* PNG inputs are turned upright by the orientation in their eXIf chunk
 * (3: upside down, 6 and 8: a quarter turn each way), like JPEGs by EXIF. */
static void test_png_exif(void **state) {
  mk("pngx");
  mk("pngx/k");
  static const int orients[3] = {3, 6, 8};
  char p[600], src[600], out[600];
  for (int k = 0; k < 3; k++) {
    pathf(p, sizeof p, "pngx/k/o%d.png", orients[k]);
    assert_int_equal(ti_png_exif(p, 40, 20, orients[k]), 0);
  }
  pathf(src, sizeof src, "pngx");
  pathf(out, sizeof out, "pngx.h5");
  assert_int_equal(cli("pack", src, out, "--quiet", NULL), 0);
  sl_source *s = open_src(out);
  assert_int_equal(sl_source_count(s), 3);
  for (uint64_t i = 0; i < 3; i++) {
    int w, h, ch;
    uint8_t *pix = decode(s, i, &w, &h, &ch);
    if (w != 40 || h != 20 || ch != 3)
      fail_msg("orientation %d: stored %dx%dx%d, want 40x20x3", orients[i], w,
               h, ch);
    static const int at[4][2] = {{3, 3}, {36, 3}, {3, 16}, {36, 16}};
    for (int c = 0; c < 4; c++) {
      uint8_t want[3];
      ti_pattern(at[c][0], at[c][1], 40, 20, want);
      near_rgb(pix + (at[c][1] * 40 + at[c][0]) * 3, want);
    }
    free(pix);
  }
  sl_source_close(s);
}

/* An image entry that cannot be read (a dangling link) is reported as
 * skipped, not silently left out. */
static void test_unreadable_entry_is_skipped(void **state) {
  mk("dang");
  mk("dang/k");
  char p[600], src[600], out[600], target[600];
  pathf(p, sizeof p, "dang/k/good.jpg");
  assert_int_equal(ti_jpeg(p, 32, 24, 0, 90), 0);
  pathf(target, sizeof target, "dang/nowhere.jpg");
  pathf(p, sizeof p, "dang/k/gone.jpg");
  assert_int_equal(symlink(target, p), 0);
  pathf(src, sizeof src, "dang");
  pathf(out, sizeof out, "dang.h5");
  assert_int_equal(cli("pack", src, out, "--quiet", NULL), 0);
  assert_true(output_has("out.txt", "packed 1 of 2 images"));
  char rel[64] = "dang.h5.skipped.txt";
  assert_true(output_has(rel, "k/gone.jpg\tcannot open"));
}

/* A class folder whose name has a line break cannot be stored (one name
 * per line): pack says so before it packs anything, and writes nothing. */
static void test_class_name_line_break(void **state) {
  mk("crlf");
  mk("crlf/fine");
  mk("crlf/bad\rname");
  char p[600], src[600], out[600];
  pathf(p, sizeof p, "crlf/fine/1.jpg");
  assert_int_equal(ti_jpeg(p, 32, 24, 0, 90), 0);
  pathf(p, sizeof p, "crlf/bad\rname/1.jpg");
  assert_int_equal(ti_jpeg(p, 32, 24, 0, 90), 0);
  pathf(src, sizeof src, "crlf");
  pathf(out, sizeof out, "crlf.lmdb");
  assert_int_not_equal(cli("pack", src, out, "--quiet", NULL), 0);
  assert_true(output_has("err.txt", "has a line break"));
  assert_false(exists(out));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_folder_lmdb),
      cmocka_unit_test(test_folder_hdf5),
      cmocka_unit_test(test_list_mode),
      cmocka_unit_test(test_strict_and_force),
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_signals),
      cmocka_unit_test(test_standard_tools),
      cmocka_unit_test(test_verify_damage),
      cmocka_unit_test(test_verify_decode_cmyk),
      cmocka_unit_test(test_jpeg_layout),
      cmocka_unit_test(test_keep_jpeg),
      cmocka_unit_test(test_png_exif),
      cmocka_unit_test(test_unreadable_entry_is_skipped),
      cmocka_unit_test(test_class_name_line_break),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
