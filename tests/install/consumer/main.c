/* An outside program: uses only the installed <sluice.h> and library.
 * It writes a dataset with targets through the writer API, reopens it with
 * the dataset API (count, class names, info, name, read and decode of every
 * sample against what it wrote), and trains one epoch from it, checking
 * every label and target in the batches. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <sluice.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N = 7, K = 2 };

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "consumer: " __VA_ARGS__);                               \
      fputc('\n', stderr);                                                     \
      return 1;                                                                \
    }                                                                          \
  } while (0)

/* Sample i: a (10 + i) x (8 + i) image of 1 or 3 channels, label i % 3,
 * targets {i, i / 4}. */
static unsigned width(int i) {
  return 10u + (unsigned)i;
}
static unsigned height(int i) {
  return 8u + (unsigned)i;
}
static unsigned channels(int i) {
  return i % 2 ? 1u : 3u;
}
static float target(int i, int k) {
  return k ? (float)i / 4 : (float)i;
}

static void pixels(int i, unsigned char *p) {
  size_t n = (size_t)width(i) * height(i) * channels(i);
  for (size_t j = 0; j < n; j++)
    p[j] = (unsigned char)(j * 7 + (size_t)i * 31);
}

static int check_config(void) {
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    return 1;
  int rc = sl_config_set(cfg, "loader.batch_size", "32") != SL_OK;
  if (sl_config_set(cfg, "loader.batchsize", "32") != SL_ECONFIG ||
      !strstr(sl_config_errmsg(cfg), "did you mean loader.batch_size"))
    rc = 1;
  sl_config_destroy(cfg);
  return rc;
}

static int write_dataset(const char *path) {
  sl_writer_options o;
  memset(&o, 0, sizeof o);
  o.target_width = K;
  sl_writer *w;
  CHECK(sl_writer_create(&w, path, &o) == SL_OK, "create: %s",
        sl_writer_errmsg(w));
  unsigned char px[32 * 32 * 3];
  for (int i = 0; i < N; i++) {
    float t[K] = {target(i, 0), target(i, 1)};
    char name[32];
    snprintf(name, sizeof name, "photos/%d.raw", i);
    pixels(i, px);
    CHECK(sl_writer_add_pixels(w, px, width(i), height(i), channels(i), i % 3,
                               t, name) == SL_OK,
          "add %d: %s", i, sl_writer_errmsg(w));
  }
  CHECK(sl_writer_set_class_name(w, 0, "cat") == SL_OK &&
            sl_writer_set_class_name(w, 1, "dog") == SL_OK &&
            sl_writer_set_class_name(w, 2, "fish") == SL_OK,
        "class names: %s", sl_writer_errmsg(w));
  CHECK(access(path, F_OK) != 0, "the file exists before the commit");
  CHECK(sl_writer_commit(w) == SL_OK, "commit: %s", sl_writer_errmsg(w));
  sl_writer_destroy(w);
  return 0;
}

static int read_dataset(const char *path) {
  sl_dataset *ds;
  CHECK(sl_dataset_open_file(&ds, path) == SL_OK, "open: %s",
        sl_dataset_errmsg(ds));
  CHECK(sl_dataset_count(ds) == N, "count");
  CHECK(sl_dataset_class_count(ds) == 3 &&
            strcmp(sl_dataset_class_name(ds, 2), "fish") == 0,
        "class names");
  CHECK(sl_dataset_target_width(ds) == K, "target width");
  unsigned char want[32 * 32 * 3], got[32 * 32 * 3];
  for (int i = 0; i < N; i++) {
    sl_sample_meta m;
    CHECK(sl_dataset_info(ds, (uint64_t)i, &m) == SL_OK, "info %d", i);
    CHECK(m.label == i % 3 && m.width == width(i) && m.height == height(i) &&
              m.channels == channels(i) && m.codec == SL_IMAGE_RAW,
          "info %d: label %d, %ux%ux%u", i, m.label, m.width, m.height,
          m.channels);
    CHECK(m.targets[0] == target(i, 0) && m.targets[1] == target(i, 1),
          "targets %d", i);
    char name[32], expect[32];
    snprintf(expect, sizeof expect, "photos/%d.raw", i);
    CHECK(sl_dataset_name(ds, (uint64_t)i, name, sizeof name) == SL_OK &&
              strcmp(name, expect) == 0,
          "name %d", i);
    pixels(i, want);
    size_t n = (size_t)width(i) * height(i) * channels(i), len;
    CHECK(sl_dataset_read(ds, (uint64_t)i, got, sizeof got, &len) == SL_OK &&
              len == n && memcmp(got, want, n) == 0,
          "read %d", i);
    memset(got, 0, sizeof got);
    CHECK(sl_dataset_decode(ds, (uint64_t)i, got, sizeof got, &len) == SL_OK &&
              len == n && memcmp(got, want, n) == 0,
          "decode %d: %s", i, sl_dataset_errmsg(ds));
  }
  sl_dataset_close(ds);
  return 0;
}

static int train_epoch(const char *path) {
  sl_config *cfg;
  CHECK(sl_config_create(&cfg) == SL_OK, "config");
  const char *kv[][2] = {
      {"dataset.path", path},      {"loader.batch_size", "3"},
      {"loader.workers", "2"},     {"loader.drop_last", "false"},
      {"device.backend", "host"},  {"augment.dtype", "u8"},
      {"resolution.min", "8"},     {"resolution.max", "8"},
      {"resolution.multiple", "8"}};
  for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++)
    CHECK(sl_config_set(cfg, kv[k][0], kv[k][1]) == SL_OK, "%s",
          sl_config_errmsg(cfg));
  sl_loader *ld;
  sl_status st = sl_loader_open(&ld, cfg);
  sl_config_destroy(cfg);
  CHECK(st == SL_OK, "loader: %s", sl_loader_errmsg(ld));
  CHECK(sl_loader_start_epoch(ld, 0) == SL_OK, "start");
  sl_batch b;
  int samples = 0, seen[N] = {0};
  while ((st = sl_loader_next(ld, &b)) == SL_OK) {
    CHECK(b.target_width == K && b.targets, "batch targets");
    for (uint32_t j = 0; j < b.n; j++) {
      int i = (int)b.indices[j];
      CHECK(i >= 0 && i < N, "index %d", i);
      CHECK(b.labels[j] == i % 3, "label of %d", i);
      CHECK(b.targets[j * K] == target(i, 0) &&
                b.targets[j * K + 1] == target(i, 1),
            "targets of %d", i);
      seen[i] = 1;
      samples++;
    }
    CHECK(sl_batch_release(ld, &b, NULL) == SL_OK, "release");
  }
  CHECK(st == SL_END, "next: %s", sl_loader_errmsg(ld));
  CHECK(samples == 9, "%d samples in 3 padded batches", samples);
  for (int i = 0; i < N; i++)
    CHECK(seen[i], "sample %d never came", i);
  sl_loader_close(ld);
  return 0;
}

int main(void) {
  if (sl_version_number() != SLUICE_VERSION_NUMBER) {
    fprintf(stderr, "header/library version mismatch\n");
    return 1;
  }
  const char *tmp = getenv("TMPDIR");
  char dir[512], path[600];
  snprintf(dir, sizeof dir, "%s/sluice-consumer-XXXXXX", tmp ? tmp : "/tmp");
  if (!mkdtemp(dir))
    return 1;
  snprintf(path, sizeof path, "%s/out.lmdb", dir);
  int rc = check_config() || write_dataset(path) || read_dataset(path) ||
           train_epoch(path);
  unlink(path);
  rmdir(dir);
  printf("sluice %s: %s\n", sl_version_string(), rc ? "FAIL" : "ok");
  return rc;
}
