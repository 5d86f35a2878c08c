/* The public dataset and writer API (sluice.h), through libsluice alone:
 * write files of both formats with targets and names, read them back
 * sample by sample (info, name, read, decode against TurboJPEG/libpng's own
 * decode of the input), train an epoch from them checking every label and
 * target, and every function's errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <png.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>

#include "sluice.h"
#include "tests/support/test_dir.h"

enum { N = 12, K = 3, W = 48, H = 40 };

static char g_dir[512];

static int setup(void **state) {
  const char *tmp = getenv("SLUICE_TEST_TMP");
  snprintf(g_dir, sizeof g_dir, "%s/dsapi-%ld", tmp ? tmp : "/tmp",
           (long)getpid());
  mkdir(g_dir, 0755);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return sl_test_remove_dir(g_dir);
}

static void path_in(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

static bool exists(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0;
}

/* Sample i: kind i % 3 (0 JPEG, 1 PNG, 2 raw pixels), gray when i % 4 == 3,
 * label i % 5 (-1 for i == 7), targets {i, -i / 2, 1 / (i + 1)}. */
typedef struct sample {
  int kind, channels, w, h;
  int32_t label;
  float targets[K];
  char name[64];
  uint8_t *pixels; /* w × h × channels: what a decode must give */
  uint8_t *bytes;  /* what is added */
  size_t len;
} sample;

static sample g_s[N];

static void make_pixels(int i, sample *s) {
  s->pixels = malloc((size_t)s->w * s->h * s->channels);
  for (int y = 0; y < s->h; y++)
    for (int x = 0; x < s->w; x++)
      for (int c = 0; c < s->channels; c++)
        s->pixels[((size_t)y * s->w + x) * s->channels + c] =
            (uint8_t)(x * 5 + y * 3 + c * 60 + i * 17);
}

static void make_jpeg(sample *s) {
  tjhandle tj = tjInitCompress();
  unsigned long n = 0;
  unsigned char *out = NULL;
  assert_int_equal(tjCompress2(tj, s->pixels, s->w, 0, s->h,
                               s->channels == 1 ? TJPF_GRAY : TJPF_RGB, &out,
                               &n, s->channels == 1 ? TJSAMP_GRAY : TJSAMP_420,
                               90, 0),
                   0);
  tjDestroy(tj);
  s->bytes = malloc(n);
  memcpy(s->bytes, out, n);
  s->len = n;
  tjFree(out);
  /* What a decode must give: libjpeg-turbo's own decode of the input (the
   * rewrite keeps the coefficients, so the pixels are the same). */
  tj = tjInitDecompress();
  assert_int_equal(tjDecompress2(tj, s->bytes, (unsigned long)s->len, s->pixels,
                                 s->w, 0, s->h,
                                 s->channels == 1 ? TJPF_GRAY : TJPF_RGB, 0),
                   0);
  tjDestroy(tj);
}

static void make_png(sample *s) {
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = (png_uint_32)s->w;
  img.height = (png_uint_32)s->h;
  img.format = s->channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  png_alloc_size_t n = 0;
  assert_true(png_image_write_to_memory(&img, NULL, &n, 0, s->pixels, 0, NULL));
  s->bytes = malloc(n);
  assert_true(
      png_image_write_to_memory(&img, s->bytes, &n, 0, s->pixels, 0, NULL));
  s->len = n;
}

static int setup_samples(void **state) {
  setup(state);
  for (int i = 0; i < N; i++) {
    sample *s = &g_s[i];
    s->kind = i % 3;
    s->channels = i % 4 == 3 ? 1 : 3;
    s->w = W + i;
    s->h = H + 2 * i;
    s->label = i == 7 ? -1 : i % 5;
    s->targets[0] = (float)i;
    s->targets[1] = -(float)i / 2;
    s->targets[2] = 1.0f / (float)(i + 1);
    if (i % 2)
      snprintf(s->name, sizeof s->name, "class %d/img_%03d.%s", i % 5, i,
               s->kind == 1 ? "png" : "jpg");
    make_pixels(i, s);
    if (s->kind == 0)
      make_jpeg(s);
    else if (s->kind == 1)
      make_png(s);
  }
  return 0;
}

static int teardown_samples(void **state) {
  for (int i = 0; i < N; i++) {
    free(g_s[i].pixels);
    free(g_s[i].bytes);
  }
  return teardown(state);
}

static void write_dataset(const char *path, const char *format) {
  sl_writer_options o;
  memset(&o, 0, sizeof o);
  o.format = format;
  o.target_width = K;
  o.settings = "test_dataset_api";
  sl_writer *w;
  if (sl_writer_create(&w, path, &o) != SL_OK)
    fail_msg("%s", sl_writer_errmsg(w));
  for (int i = 0; i < N; i++) {
    sample *s = &g_s[i];
    const char *name = s->name[0] ? s->name : NULL;
    sl_status st = s->kind == 2
                       ? sl_writer_add_pixels(
                             w, s->pixels, (uint32_t)s->w, (uint32_t)s->h,
                             (uint32_t)s->channels, s->label, s->targets, name)
                       : sl_writer_add_encoded(w, s->bytes, s->len, s->label,
                                               s->targets, name);
    if (st != SL_OK)
      fail_msg("sample %d: %s", i, sl_writer_errmsg(w));
  }
  assert_int_equal(sl_writer_count(w), N);
  assert_int_equal(sl_writer_set_class_name(w, 0, "cat"), SL_OK);
  assert_int_equal(sl_writer_set_class_name(w, 2, "zebra fish"), SL_OK);
  assert_false(exists(path)); /* nothing before the commit */
  if (sl_writer_commit(w) != SL_OK)
    fail_msg("%s", sl_writer_errmsg(w));
  assert_true(exists(path));
  /* After the commit the writer takes nothing more. */
  assert_int_equal(
      sl_writer_add_pixels(w, g_s[2].pixels, 1, 1, 1, 0, g_s[2].targets, NULL),
      SL_ESTATE);
  assert_int_equal(sl_writer_commit(w), SL_ESTATE);
  sl_writer_destroy(w);
  assert_true(exists(path));
}

static void check_dataset(const char *path) {
  sl_dataset *ds;
  if (sl_dataset_open_file(&ds, path) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  assert_int_equal(sl_dataset_count(ds), N);
  assert_int_equal(sl_dataset_target_width(ds), K);
  assert_int_equal(sl_dataset_class_count(ds), 5); /* labels 0..4 */
  assert_string_equal(sl_dataset_class_name(ds, 0), "cat");
  assert_string_equal(sl_dataset_class_name(ds, 1), "1"); /* unnamed */
  assert_string_equal(sl_dataset_class_name(ds, 2), "zebra fish");
  assert_null(sl_dataset_class_name(ds, 5));
  assert_string_equal(sl_dataset_writer_settings(ds), "test_dataset_api");
  uint64_t maxb = sl_dataset_max_stored_bytes(ds);
  uint8_t *buf = malloc(maxb);
  for (int i = 0; i < N; i++) {
    sample *s = &g_s[i];
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, (uint64_t)i, &m), SL_OK);
    assert_int_equal(m.label, s->label);
    assert_int_equal(m.codec, s->kind == 0   ? SL_IMAGE_JPEG
                              : s->kind == 1 ? SL_IMAGE_PNG
                                             : SL_IMAGE_RAW);
    assert_int_equal(m.width, s->w);
    assert_int_equal(m.height, s->h);
    assert_int_equal(m.channels, s->channels);
    assert_int_equal(m.target_width, K);
    assert_memory_equal(m.targets, s->targets, sizeof s->targets);
    assert_int_equal(m.name_bytes, strlen(s->name));
    char name[80];
    assert_int_equal(sl_dataset_name(ds, (uint64_t)i, name, sizeof name),
                     SL_OK);
    assert_string_equal(name, s->name);
    /* read: the stored bytes (PNGs and raw as given; JPEGs rewritten into
     * the restart layout, so they differ from the input but still start as
     * a JPEG). */
    size_t len = 0;
    assert_int_equal(sl_dataset_read(ds, (uint64_t)i, NULL, 0, &len),
                     SL_ETOOBIG);
    assert_int_equal(len, m.stored_bytes);
    assert_int_equal(sl_dataset_read(ds, (uint64_t)i, buf, len - 1, &len),
                     SL_ETOOBIG);
    assert_int_equal(sl_dataset_read(ds, (uint64_t)i, buf, maxb, &len), SL_OK);
    if (s->kind == 1)
      assert_memory_equal(buf, s->bytes, s->len);
    else if (s->kind == 2)
      assert_memory_equal(buf, s->pixels, len);
    else
      assert_memory_equal(buf, "\xff\xd8\xff", 3);
    /* decode: full-size HWC u8, the pixels of the input */
    size_t need = (size_t)s->w * s->h * s->channels;
    assert_int_equal(sl_dataset_decode(ds, (uint64_t)i, NULL, 0, &len),
                     SL_ETOOBIG);
    assert_int_equal(len, need);
    uint8_t *px = malloc(need);
    if (sl_dataset_decode(ds, (uint64_t)i, px, need, &len) != SL_OK)
      fail_msg("%s", sl_dataset_errmsg(ds));
    assert_int_equal(len, need);
    assert_memory_equal(px, s->pixels, need);
    free(px);
  }
  free(buf);
  sl_dataset_close(ds);
}

/* Both formats, written and read through the public API only. */
static void test_round_trip(void **state) {
  const char *fmts[] = {"lmdb", "hdf5"};
  const char *names[] = {"rt.lmdb", "rt.h5"};
  for (int f = 0; f < 2; f++) {
    char p[600];
    path_in(p, sizeof p, names[f]);
    write_dataset(p, NULL); /* format from the extension */
    check_dataset(p);
    /* And given explicitly, with a name that says nothing. */
    char q[620];
    snprintf(q, sizeof q, "%s/explicit-%s.data", g_dir, fmts[f]);
    write_dataset(q, fmts[f]);
    sl_dataset *ds;
    assert_int_equal(sl_dataset_open_file(&ds, q), SL_OK);
    assert_string_equal(sl_dataset_format(ds), fmts[f]);
    sl_dataset_close(ds);
  }
}

/* The loader trains on what the writer wrote: every label and target in
 * the batches is the one of the sample the batch names, for 1 and 3
 * workers, and the two runs give the same batches. */
static void test_loader_targets(void **state) {
  char p[600];
  path_in(p, sizeof p, "train.lmdb");
  write_dataset(p, NULL);
  float first[2][N * K];
  for (int run = 0; run < 2; run++) {
    sl_config *cfg;
    assert_int_equal(sl_config_create(&cfg), SL_OK);
    const char *kv[][2] = {{"dataset.path", p},
                           {"loader.batch_size", "4"},
                           {"loader.workers", run ? "3" : "1"},
                           {"loader.order", "random"},
                           {"device.backend", "host"},
                           {"augment.dtype", "u8"},
                           {"resolution.min", "16"},
                           {"resolution.max", "16"},
                           {"resolution.multiple", "8"}};
    for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++)
      if (sl_config_set(cfg, kv[k][0], kv[k][1]) != SL_OK)
        fail_msg("%s", sl_config_errmsg(cfg));
    sl_loader *ld;
    if (sl_loader_open(&ld, cfg) != SL_OK)
      fail_msg("%s", sl_loader_errmsg(ld));
    assert_int_equal(sl_loader_start_epoch(ld, 3), SL_OK);
    sl_batch b;
    int seen = 0;
    sl_status st;
    while ((st = sl_loader_next(ld, &b)) == SL_OK) {
      assert_int_equal(b.target_width, K);
      assert_non_null(b.targets);
      for (uint32_t j = 0; j < b.n; j++) {
        const sample *s = &g_s[b.indices[j]];
        assert_int_equal(b.labels[j], s->label);
        assert_memory_equal(b.targets + (size_t)j * K, s->targets,
                            sizeof s->targets);
        memcpy(first[run] + (size_t)seen * K, b.targets + (size_t)j * K,
               sizeof s->targets);
        seen++;
      }
      assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
    }
    assert_int_equal(st, SL_END);
    assert_int_equal(seen, N);
    sl_loader_close(ld);
    sl_config_destroy(cfg);
  }
  assert_memory_equal(first[0], first[1], sizeof first[0]);
}

/* A dataset without targets: batches say so. */
static void test_no_targets(void **state) {
  char p[600];
  path_in(p, sizeof p, "plain.h5");
  sl_writer *w;
  assert_int_equal(sl_writer_create(&w, p, NULL), SL_OK);
  for (int i = 0; i < 4; i++)
    assert_int_equal(
        sl_writer_add_pixels(w, g_s[2].pixels, 8, 8, 3, i % 2, NULL, NULL),
        SL_OK);
  assert_int_equal(sl_writer_commit(w), SL_OK);
  sl_writer_destroy(w);
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  assert_int_equal(sl_config_set(cfg, "dataset.path", p), SL_OK);
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open(&ds, cfg), SL_OK);
  assert_int_equal(sl_dataset_target_width(ds), 0);
  sl_sample_meta m;
  assert_int_equal(sl_dataset_info(ds, 3, &m), SL_OK);
  assert_null(m.targets);
  assert_int_equal(m.label, 1);
  assert_int_equal(sl_dataset_class_count(ds), 2);
  sl_dataset_close(ds);
  assert_int_equal(sl_config_set(cfg, "loader.batch_size", "2"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "device.backend", "host"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "loader.workers", "1"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "resolution.min", "8"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "resolution.max", "8"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "resolution.multiple", "8"), SL_OK);
  sl_loader *ld;
  if (sl_loader_open(&ld, cfg) != SL_OK)
    fail_msg("%s", sl_loader_errmsg(ld));
  assert_int_equal(sl_loader_start_epoch(ld, 0), SL_OK);
  sl_batch b;
  assert_int_equal(sl_loader_next(ld, &b), SL_OK);
  assert_null(b.targets);
  assert_int_equal(b.target_width, 0);
  assert_int_equal(sl_batch_release(ld, &b, NULL), SL_OK);
  sl_loader_close(ld);
  sl_config_destroy(cfg);
}

/* Every read function from several threads at once (TSan runs this). */
typedef struct reader_arg {
  sl_dataset *ds;
  int ok;
} reader_arg;

static void *reader(void *arg) {
  reader_arg *a = arg;
  a->ok = 1;
  for (int rep = 0; rep < 3; rep++)
    for (uint64_t i = 0; i < N; i++) {
      sl_sample_meta m;
      size_t len;
      uint8_t *px = malloc((size_t)(W + N) * (H + 2 * N) * 3);
      char name[80];
      a->ok &= sl_dataset_info(a->ds, i, &m) == SL_OK;
      a->ok &= sl_dataset_name(a->ds, i, name, sizeof name) == SL_OK;
      a->ok &=
          sl_dataset_decode(a->ds, i, px, (size_t)(W + N) * (H + 2 * N) * 3,
                            &len) == SL_OK;
      a->ok &= memcmp(px, g_s[i].pixels, len) == 0;
      /* a failing call beside the others */
      a->ok &= sl_dataset_info(a->ds, N + i, &m) == SL_EINVAL;
      char msg[512];
      a->ok &= sl_dataset_errmsg_copy(a->ds, msg, sizeof msg) > 0;
      free(px);
    }
  return NULL;
}

static void test_threads(void **state) {
  char p[600];
  path_in(p, sizeof p, "threads.lmdb");
  write_dataset(p, NULL);
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
  pthread_t t[3];
  reader_arg a[3];
  for (int k = 0; k < 3; k++) {
    a[k].ds = ds;
    assert_int_equal(pthread_create(&t[k], NULL, reader, &a[k]), 0);
  }
  for (int k = 0; k < 3; k++) {
    pthread_join(t[k], NULL);
    assert_true(a[k].ok);
  }
  assert_non_null(strstr(sl_dataset_errmsg(ds), "out of range"));
  sl_dataset_close(ds);
}

/* Loaders and datasets opened from one config by several threads at once,
 * failing and succeeding: each gets its own message and nothing is written
 * into the config (TSan runs this). */
typedef struct opener_arg {
  const sl_config *cfg;
  int ok;
} opener_arg;

static void *opener(void *arg) {
  opener_arg *a = arg;
  a->ok = 1;
  for (int rep = 0; rep < 4; rep++) {
    sl_loader *ld;
    sl_status st = sl_loader_open(&ld, a->cfg);
    a->ok &= st == SL_EIO && strstr(sl_loader_errmsg(ld), "nothere.lmdb");
    sl_loader_close(ld);
    sl_dataset *ds;
    st = sl_dataset_open(&ds, a->cfg);
    a->ok &= st == SL_EIO && strstr(sl_dataset_errmsg(ds), "nothere.lmdb");
    sl_dataset_close(ds);
  }
  return NULL;
}

static void test_open_from_threads(void **state) {
  char p[600];
  path_in(p, sizeof p, "nothere.lmdb");
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  assert_int_equal(sl_config_set(cfg, "dataset.path", p), SL_OK);
  assert_int_equal(sl_config_set(cfg, "device.backend", "host"), SL_OK);
  assert_int_equal(sl_config_set(cfg, "loader.workers", "1"), SL_OK);
  pthread_t t[3];
  opener_arg a[3];
  for (int k = 0; k < 3; k++) {
    a[k].cfg = cfg;
    assert_int_equal(pthread_create(&t[k], NULL, opener, &a[k]), 0);
  }
  for (int k = 0; k < 3; k++) {
    pthread_join(t[k], NULL);
    assert_true(a[k].ok);
  }
  assert_string_equal(sl_config_errmsg(cfg), "");
  sl_config_destroy(cfg);
}

/* Errors of the read side: each says what and where. */
static void test_dataset_errors(void **state) {
  sl_dataset *ds = NULL;
  char p[600];
  path_in(p, sizeof p, "missing.lmdb");
  /* A failed open still gives a handle holding the message. */
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_EIO);
  assert_non_null(ds);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "missing.lmdb"));
  assert_int_equal(sl_dataset_count(ds), 0);
  sl_sample_meta m;
  assert_int_equal(sl_dataset_info(ds, 0, &m), SL_ESTATE);
  assert_int_equal(sl_dataset_info(ds, 0, &m), SL_ESTATE);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "did not open"));
  assert_non_null(strstr(sl_dataset_errmsg(ds), "missing.lmdb"));
  /* the message says it once, however many calls failed */
  assert_null(strstr(sl_dataset_errmsg(ds), "open: the dataset did not"));
  sl_dataset_close(ds);
  /* No dataset.path in the config. */
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  assert_int_equal(sl_dataset_open(&ds, cfg), SL_ECONFIG);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "dataset.path"));
  sl_dataset_close(ds);
  sl_config_destroy(cfg);
  /* Not a dataset at all. */
  path_in(p, sizeof p, "junk.lmdb");
  FILE *f = fopen(p, "w");
  fputs("not a dataset\n", f);
  fclose(f);
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_EFORMAT);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "junk.lmdb"));
  sl_dataset_close(ds);
  /* NULL handles and arguments. */
  assert_int_equal(sl_dataset_open(&ds, NULL), SL_EINVAL);
  assert_null(ds);
  assert_int_equal(sl_dataset_open_file(NULL, p), SL_EINVAL);
  assert_int_equal(sl_dataset_open_file(&ds, NULL), SL_EINVAL);
  assert_null(ds);
  assert_int_equal(sl_dataset_open_verify(&ds, p, NULL, NULL), SL_EINVAL);
  assert_int_equal(sl_dataset_info(NULL, 0, &m), SL_EINVAL);
  size_t len;
  assert_int_equal(sl_dataset_read(NULL, 0, NULL, 0, &len), SL_EINVAL);
  assert_int_equal(sl_dataset_decode(NULL, 0, NULL, 0, &len), SL_EINVAL);
  assert_int_equal(sl_dataset_count(NULL), 0);
  assert_null(sl_dataset_class_name(NULL, 0));
  assert_non_null(sl_dataset_errmsg(NULL));
  sl_dataset_close(NULL);
  /* Out of range, small buffers, NULL outputs, on a good file. */
  path_in(p, sizeof p, "errs.h5");
  write_dataset(p, NULL);
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
  assert_int_equal(sl_dataset_info(ds, N, &m), SL_EINVAL);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "sample 12 out of range"));
  assert_non_null(strstr(sl_dataset_errmsg(ds), "errs.h5"));
  assert_int_equal(sl_dataset_info(ds, 0, NULL), SL_EINVAL);
  assert_int_equal(sl_dataset_read(ds, N, NULL, 0, &len), SL_EINVAL);
  assert_int_equal(sl_dataset_read(ds, 0, NULL, 0, NULL), SL_EINVAL);
  assert_int_equal(sl_dataset_decode(ds, UINT64_MAX, NULL, 0, &len), SL_EINVAL);
  char name[8];
  assert_int_equal(sl_dataset_name(ds, N, name, sizeof name), SL_EINVAL);
  assert_int_equal(sl_dataset_name(ds, 1, name, sizeof name), SL_ETOOBIG);
  assert_non_null(strstr(sl_dataset_errmsg(ds), "sample 1"));
  assert_int_equal(sl_dataset_name(ds, 0, name, sizeof name), SL_OK);
  assert_string_equal(name, "");
  sl_dataset_close(ds);
}

/* Errors of the write side, and what a writer leaves when not committed. */
/* sl_writer_options.levels: JPEGs large enough become level records
 * (SL_IMAGE_JPEG_LEVELS) whose level 0 decodes to the input's pixels; a
 * small one stays a JPEG; records from sl_transcoder_levels are stored as
 * they are by a keep_jpeg writer; a writer without levels refuses them. */
static void test_writer_levels(void **state) {
  (void)state;
  sample s[3] = {{.channels = 3, .w = 320, .h = 240},
                 {.channels = 3, .w = 200, .h = 100},
                 {.channels = 1, .w = 300, .h = 300}};
  for (int i = 0; i < 3; i++) {
    make_pixels(i, &s[i]);
    make_jpeg(&s[i]);
  }
  char p[600], q[600];
  path_in(p, sizeof p, "levels.lmdb");
  path_in(q, sizeof q, "levels_kept.h5");
  sl_writer_options o;
  memset(&o, 0, sizeof o);
  o.levels = SL_LEVEL_SCALE(4);
  sl_writer *w;
  assert_int_equal(sl_writer_create(&w, p, &o), SL_OK);
  for (int i = 0; i < 3; i++)
    if (sl_writer_add_encoded(w, s[i].bytes, s[i].len, i, NULL, NULL) != SL_OK)
      fail_msg("%s", sl_writer_errmsg(w));
  assert_int_equal(sl_writer_commit(w), SL_OK);
  sl_writer_destroy(w);
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
  static const sl_image_codec want[3] = {SL_IMAGE_JPEG_LEVELS, SL_IMAGE_JPEG,
                                         SL_IMAGE_JPEG_LEVELS};
  uint64_t images[4], bytes[4];
  assert_int_equal(sl_dataset_levels(ds, images, bytes), 2);
  assert_int_equal(images[0], 2);
  assert_int_equal(images[1], 2);
  uint8_t *buf = malloc(320 * 300 * 3);
  assert_non_null(buf);
  for (int i = 0; i < 3; i++) {
    sl_sample_meta m;
    size_t len;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.codec, want[i]);
    assert_int_equal(m.width, s[i].w);
    assert_int_equal(m.channels, s[i].channels);
    assert_int_equal(sl_dataset_decode(ds, i, buf, 320 * 300 * 3, &len), SL_OK);
    assert_memory_equal(buf, s[i].pixels, len);
    if (want[i] != SL_IMAGE_JPEG_LEVELS)
      continue;
    assert_int_equal(sl_dataset_read(ds, i, buf, 320 * 300 * 3, &len), SL_OK);
    const uint8_t *jpg;
    size_t jl;
    uint32_t lw, lh;
    assert_int_equal(sl_image_level(buf, len, 1, &jpg, &jl, &lw, &lh), 2);
    assert_int_equal(lw, (uint32_t)s[i].w / 2);
    assert_int_equal(lh, (uint32_t)s[i].h / 2);
    assert_int_equal(sl_image_level(buf, len, 2, &jpg, &jl, &lw, &lh), 0);
    assert_int_equal(sl_image_level(buf, len / 2, 0, &jpg, &jl, &lw, &lh), 0);
  }
  sl_dataset_close(ds);
  /* Records made by a transcoder, kept as they are. */
  sl_transcoder *t;
  assert_int_equal(sl_transcoder_create(&t), SL_OK);
  uint8_t *rec;
  size_t rl;
  assert_int_equal(sl_transcoder_levels(t, s[0].bytes, s[0].len,
                                        SL_LEVEL_SCALE(4), 85, &rec, &rl),
                   SL_OK);
  assert_int_equal(sl_image_level(rec, rl, 0, NULL, NULL, NULL, NULL), 2);
  uint8_t *none;
  size_t none_len;
  assert_int_equal(
      sl_transcoder_levels(t, s[0].bytes, s[0].len, 0x80, 85, &none, &none_len),
      SL_EINVAL);
  assert_null(none);
  sl_transcoder_destroy(t);
  o.keep_jpeg = 1;
  assert_int_equal(sl_writer_create(&w, q, &o), SL_OK);
  if (sl_writer_add_encoded(w, rec, rl, 0, NULL, NULL) != SL_OK)
    fail_msg("%s", sl_writer_errmsg(w));
  assert_int_equal(sl_writer_commit(w), SL_OK);
  sl_writer_destroy(w);
  assert_int_equal(sl_dataset_open_file(&ds, q), SL_OK);
  size_t len;
  assert_int_equal(sl_dataset_read(ds, 0, buf, 320 * 300 * 3, &len), SL_OK);
  assert_int_equal(len, rl);
  assert_memory_equal(buf, rec, rl);
  sl_dataset_close(ds);
  /* A writer without levels refuses a record; bad level options. */
  memset(&o, 0, sizeof o);
  assert_int_equal(sl_writer_create(&w, q, &o), SL_OK);
  assert_int_equal(sl_writer_add_encoded(w, rec, rl, 0, NULL, NULL), SL_EINVAL);
  assert_non_null(strstr(sl_writer_errmsg(w), "levels"));
  sl_writer_destroy(w);
  o.levels = 0x80;
  assert_int_equal(sl_writer_create(&w, q, &o), SL_EINVAL);
  sl_writer_destroy(w);
  o.levels = SL_LEVEL_SCALE(1) | SL_LEVEL_SCALE(2) | SL_LEVEL_SCALE(3) |
             SL_LEVEL_SCALE(4);
  assert_int_equal(sl_writer_create(&w, q, &o), SL_EINVAL);
  sl_writer_destroy(w);
  free(rec);
  free(buf);
  for (int i = 0; i < 3; i++) {
    free(s[i].pixels);
    free(s[i].bytes);
  }
  unlink(p);
  unlink(q);
}

static void test_writer_errors(void **state) {
  char p[600];
  path_in(p, sizeof p, "w.lmdb");
  sl_writer *w = NULL;
  sl_writer_options o;
  memset(&o, 0, sizeof o);
  o.target_width = 2;
  assert_int_equal(sl_writer_create(&w, p, &o), SL_OK);
  float t[2] = {1, 2}, nan[2] = {0, NAN};
  const uint8_t *px = g_s[2].pixels;
  /* Bad label, missing or non-finite targets, bad shapes, non-images, long
   * names: each refused with the sample's index, nothing added. */
  assert_int_equal(sl_writer_add_pixels(w, px, 4, 4, 3, -2, t, NULL),
                   SL_EINVAL);
  assert_non_null(strstr(sl_writer_errmsg(w), "sample 0: label -2"));
  assert_int_equal(sl_writer_add_pixels(w, px, 4, 4, 3, 0, NULL, NULL),
                   SL_EINVAL);
  assert_non_null(strstr(sl_writer_errmsg(w), "no targets"));
  assert_int_equal(sl_writer_add_pixels(w, px, 4, 4, 3, 0, nan, NULL),
                   SL_EINVAL);
  assert_non_null(strstr(sl_writer_errmsg(w), "target 1 is nan"));
  assert_int_equal(sl_writer_add_pixels(w, px, 0, 4, 3, 0, t, NULL), SL_EINVAL);
  assert_int_equal(sl_writer_add_pixels(w, px, 4, 4, 2, 0, t, NULL), SL_EINVAL);
  assert_int_equal(sl_writer_add_encoded(w, NULL, 8, 0, t, "a.gif"), SL_EINVAL);
  assert_int_equal(sl_writer_add_encoded(w, "GIF89a..", 8, 0, t, "a.gif"),
                   SL_EDECODE);
  assert_non_null(strstr(sl_writer_errmsg(w), "a.gif"));
  uint8_t broken[64];
  memcpy(broken, g_s[0].bytes, sizeof broken); /* a JPEG cut short */
  assert_int_not_equal(
      sl_writer_add_encoded(w, broken, sizeof broken, 0, t, "cut.jpg"), SL_OK);
  assert_non_null(strstr(sl_writer_errmsg(w), "cut.jpg"));
  char *long_name = malloc(SL_SAMPLE_NAME_MAX + 2);
  memset(long_name, 'n', SL_SAMPLE_NAME_MAX + 1);
  long_name[SL_SAMPLE_NAME_MAX + 1] = '\0';
  assert_int_equal(sl_writer_add_pixels(w, px, 4, 4, 3, 0, t, long_name),
                   SL_EINVAL);
  free(long_name);
  assert_int_equal(sl_writer_count(w), 0);
  assert_int_equal(sl_writer_set_class_name(w, 0, ""), SL_EINVAL);
  assert_int_equal(sl_writer_set_class_name(w, 0, "a\nb"), SL_EINVAL);
  assert_int_equal(sl_writer_add_pixels(w, px, 4, 4, 3, 0, t, "ok"), SL_OK);
  assert_int_equal(sl_writer_count(w), 1);
  /* Destroyed without a commit: nothing at the path, nothing beside it. */
  sl_writer_destroy(w);
  assert_false(exists(p));
  char cmd[700];
  snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -q '^\\.w\\.lmdb'", g_dir);
  assert_int_not_equal(system(cmd), 0);
  /* Bad options: the handle holds the message. */
  o.format = "tar";
  assert_int_equal(sl_writer_create(&w, p, &o), SL_EINVAL);
  assert_non_null(strstr(sl_writer_errmsg(w), "format 'tar'"));
  assert_int_equal(sl_writer_add_pixels(w, px, 4, 4, 3, 0, t, NULL), SL_ESTATE);
  sl_writer_destroy(w);
  memset(&o, 0, sizeof o);
  o.target_width = SL_TARGETS_MAX + 1;
  assert_int_equal(sl_writer_create(&w, p, &o), SL_EINVAL);
  sl_writer_destroy(w);
  o.target_width = 0;
  o.reserved[1] = 1;
  assert_int_equal(sl_writer_create(&w, p, &o), SL_EINVAL);
  sl_writer_destroy(w);
  assert_int_equal(sl_writer_create(&w, "noext", NULL), SL_EINVAL);
  sl_writer_destroy(w);
  assert_int_equal(sl_writer_create(NULL, p, NULL), SL_EINVAL);
  assert_int_equal(sl_writer_add_pixels(NULL, px, 4, 4, 3, 0, t, NULL),
                   SL_EINVAL);
  assert_int_equal(sl_writer_commit(NULL), SL_EINVAL);
  sl_writer_destroy(NULL);
  /* An existing file is kept unless replace is set. */
  path_in(p, sizeof p, "exists.h5");
  for (int rep = 0; rep < 3; rep++) {
    memset(&o, 0, sizeof o);
    o.replace = rep == 2;
    assert_int_equal(sl_writer_create(&w, p, &o), SL_OK);
    assert_int_equal(sl_writer_add_pixels(w, px, 4, 4, 3, rep, NULL, NULL),
                     SL_OK);
    sl_status st = sl_writer_commit(w);
    assert_int_equal(st, rep == 1 ? SL_EIO : SL_OK);
    if (rep == 1)
      assert_non_null(strstr(sl_writer_errmsg(w), "exists"));
    sl_writer_destroy(w);
  }
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
  sl_sample_meta m;
  assert_int_equal(sl_dataset_info(ds, 0, &m), SL_OK);
  assert_int_equal(m.label, 2);
  sl_dataset_close(ds);
}

/* One sample larger than the LMDB writer's first map and transaction (which
 * once made it fail with MDB_MAP_FULL while HDF5 took it). */
static void test_large_sample(void **state) {
  enum { SIDE = 6700 }; /* 134.7 MB of RGB */
  char p[600];
  path_in(p, sizeof p, "large.lmdb");
  uint8_t *px = calloc((size_t)SIDE * SIDE, 3);
  assert_non_null(px);
  px[(size_t)SIDE * SIDE * 3 - 1] = 7;
  sl_writer *w;
  assert_int_equal(sl_writer_create(&w, p, NULL), SL_OK);
  assert_int_equal(sl_writer_add_pixels(w, px, 4, 4, 3, 0, NULL, "small"),
                   SL_OK);
  if (sl_writer_add_pixels(w, px, SIDE, SIDE, 3, 1, NULL, "large") != SL_OK)
    fail_msg("%s", sl_writer_errmsg(w));
  if (sl_writer_commit(w) != SL_OK)
    fail_msg("%s", sl_writer_errmsg(w));
  sl_writer_destroy(w);
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
  sl_sample_meta m;
  assert_int_equal(sl_dataset_info(ds, 1, &m), SL_OK);
  assert_int_equal(m.width, SIDE);
  assert_int_equal(m.stored_bytes, (uint64_t)SIDE * SIDE * 3);
  size_t len;
  memset(px, 1, (size_t)SIDE * SIDE * 3);
  assert_int_equal(sl_dataset_read(ds, 1, px, (size_t)SIDE * SIDE * 3, &len),
                   SL_OK);
  assert_int_equal(px[0], 0);
  assert_int_equal(px[len - 1], 7);
  sl_dataset_close(ds);
  free(px);
}

/* The transcoder's output is stored as it is: the same bytes come back. */
static void test_transcoder(void **state) {
  sl_transcoder *t;
  assert_int_equal(sl_transcoder_create(&t), SL_OK);
  uint8_t *out;
  size_t n;
  if (sl_transcoder_jpeg(t, g_s[0].bytes, g_s[0].len, &out, &n) != SL_OK)
    fail_msg("%s", sl_transcoder_errmsg(t));
  free(out);
  assert_int_equal(sl_transcoder_jpeg(t, g_s[1].bytes, g_s[1].len, &out, &n),
                   SL_EDECODE); /* a PNG */
  assert_null(out);
  assert_true(strlen(sl_transcoder_errmsg(t)) > 0);
  uint8_t *out2;
  size_t n2;
  assert_int_equal(sl_transcoder_jpeg(t, g_s[0].bytes, g_s[0].len, &out2, &n2),
                   SL_OK);
  char p[600];
  path_in(p, sizeof p, "tc.lmdb");
  sl_writer *w;
  assert_int_equal(sl_writer_create(&w, p, NULL), SL_OK);
  assert_int_equal(sl_writer_add_encoded(w, out2, n2, 0, NULL, NULL), SL_OK);
  assert_int_equal(sl_writer_commit(w), SL_OK);
  sl_writer_destroy(w);
  sl_dataset *ds;
  assert_int_equal(sl_dataset_open_file(&ds, p), SL_OK);
  uint8_t *back = malloc(n2);
  size_t len;
  assert_int_equal(sl_dataset_read(ds, 0, back, n2, &len), SL_OK);
  assert_int_equal(len, n2);
  assert_memory_equal(back, out2, n2);
  free(back);
  free(out2);
  sl_dataset_close(ds);
  sl_transcoder_destroy(t);
  sl_transcoder_destroy(NULL);
}

/* Boxes through the public API: sl_writer_add_annotated beside
 * sl_writer_add_encoded (the 0-box case), read back by sl_dataset_boxes and
 * counted in sl_sample_meta.box_count; a box label past every sample label
 * still counts as a class; refused boxes leave the writer usable. */
static void test_boxes(void **state) {
  (void)state;
  char p[600];
  path_in(p, sizeof p, "boxes.lmdb");
  sl_writer *w;
  sl_writer_options o;
  memset(&o, 0, sizeof o);
  o.target_width = K;
  assert_int_equal(sl_writer_create(&w, p, &o), SL_OK);
  const sl_box b[3] = {{0.5f, 1.0f, 10.25f, 12.0f, 2, 0},
                       {-3.0f, 0.0f, 4.0f, 4.0f, 9, SL_BOX_CROWD},
                       {1.0f, 1.0f, 1.0f, 1.0f, 0, SL_BOX_DIFFICULT}};
  const sl_box nan_box = {NAN, 0, 1, 1, 0, 0};
  assert_int_equal(sl_writer_add_annotated(w, g_s[0].bytes, g_s[0].len, -1,
                                           g_s[0].targets, "a.jpg", &nan_box,
                                           1),
                   SL_EINVAL);
  assert_non_null(strstr(sl_writer_errmsg(w), "box 0"));
  assert_int_equal(sl_writer_count(w), 0);
  assert_int_equal(sl_writer_add_annotated(w, g_s[0].bytes, g_s[0].len, -1,
                                           g_s[0].targets, "a.jpg", b, 3),
                   SL_OK);
  assert_int_equal(sl_writer_add_encoded(w, g_s[1].bytes, g_s[1].len, 1,
                                         g_s[1].targets, "b.png"),
                   SL_OK);
  assert_int_equal(sl_writer_add_annotated(w, g_s[3].bytes, g_s[3].len, 0,
                                           g_s[3].targets, NULL, b, 1),
                   SL_OK);
  assert_int_equal(sl_writer_commit(w), SL_OK);
  sl_writer_destroy(w);

  sl_dataset *ds;
  if (sl_dataset_open_file(&ds, p) != SL_OK)
    fail_msg("%s", sl_dataset_errmsg(ds));
  assert_int_equal(sl_dataset_layout_version(ds), 5);
  assert_int_equal(sl_dataset_class_count(ds), 10); /* box label 9 */
  assert_int_equal(sl_dataset_max_boxes(ds), 3);
  assert_int_equal(sl_dataset_box_total(ds), 4);
  const uint32_t want_n[3] = {3, 0, 1};
  for (uint64_t i = 0; i < 3; i++) {
    sl_sample_meta m;
    assert_int_equal(sl_dataset_info(ds, i, &m), SL_OK);
    assert_int_equal(m.box_count, want_n[i]);
    const sl_box *got = (const sl_box *)1;
    uint32_t n = 99;
    assert_int_equal(sl_dataset_boxes(ds, i, &got, &n), SL_OK);
    assert_int_equal(n, want_n[i]);
    if (n)
      assert_memory_equal(got, b, n * sizeof *b);
    else
      assert_null(got);
  }
  const sl_box *got;
  uint32_t n;
  assert_int_equal(sl_dataset_boxes(ds, 3, &got, &n), SL_EINVAL);
  assert_int_equal(sl_dataset_boxes(ds, 0, NULL, &n), SL_EINVAL);
  sl_dataset_close(ds);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_loader_targets),
      cmocka_unit_test(test_no_targets),
      cmocka_unit_test(test_threads),
      cmocka_unit_test(test_open_from_threads),
      cmocka_unit_test(test_dataset_errors),
      cmocka_unit_test(test_writer_errors),
      cmocka_unit_test(test_writer_levels),
      cmocka_unit_test(test_transcoder),
      cmocka_unit_test(test_large_sample),
      cmocka_unit_test(test_boxes),
  };
  return cmocka_run_group_tests(tests, setup_samples, teardown_samples);
}
