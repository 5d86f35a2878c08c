/* End-to-end loader throughput against the single-thread pipeline rate, and
 * RSS over epochs.
 *
 *   bench_loader [DATASET] [--res R] [--batch B] [--workers W] [--epochs E]
 *                [--io IO] [--images N]
 *
 * Without --workers: measures, in one run and on the same images, (1) the
 * single-thread decode+augment rate of sl_pipeline_run over the dataset
 * (bytes already mapped, as the workers get them), (2) the loader's
 * images/s with 1 and 2 workers; both the best of E-1 epochs (default 3)
 * after a warm-up epoch, over the same epochs' crops,
 * and prints loader / (workers × single) — the goal is >= 0.9 — then (3)
 * RSS after each of 5 epochs (must stay flat: everything is allocated at
 * open). With --workers W: only the loader with W workers over E epochs
 * (default 2), for bench/harness.py.
 *
 * Without DATASET, N ImageNet-like JPEGs (500x375 q90 4:2:0, default 192)
 * are synthesized into a temporary LMDB first, stored as `sluice pack`
 * stores them (lossless rewrite into the restart layout,
 * codecs/jpeg_rewrite.h).
 *
 * Output: human lines, plus one `RESULT {json}` line per measurement (the
 * last one carries the headline images_per_s). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "augment/pipeline.h"
#include "codecs/codec.h"
#include "codecs/jpeg_rewrite.h"
#include "formats/core/source.h"
#include "formats/core/writer.h"
#include "loader/settings.h"
#include "sluice.h"
#include "support/proc.h"
#include "tools/synth.h"

typedef struct args {
  const char *path;
  int res, batch, workers, epochs, images;
  const char *io;
} args;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *const k_classes[10] = {"c0", "c1", "c2", "c3", "c4",
                                          "c5", "c6", "c7", "c8", "c9"};

static int make_dataset(const char *path, int n) {
  sl_err err;
  sl_fwriter *w;
  sl_jpeg_rewriter *rw;
  if (sl_jpeg_rewriter_create(&rw, 0, &err) != SL_OK)
    return fprintf(stderr, "bench_loader: %s\n", err.msg), 1;
  if (sl_fwriter_open(&w, path, SL_FORMAT_LMDB, &err) != SL_OK) {
    fprintf(stderr, "bench_loader: %s\n", err.msg);
    sl_jpeg_rewriter_destroy(rw);
    return 1;
  }
  for (int i = 0; i < n; i++) {
    sl_synth_jpeg_opts o = sl_synth_jpeg_defaults();
    o.label = i % 10;
    o.texture = 2; /* ImageNet-like bytes per image */
    int wd = i % 5 == 4 ? 375 : 500, ht = i % 5 == 4 ? 500 : 375;
    uint8_t *jpg, *buf = NULL;
    size_t jlen, len;
    sl_synth_err serr;
    sl_status st =
        sl_synth_jpeg((uint64_t)i + 1, wd, ht, &o, &jpg, &jlen, &serr);
    if (st != SL_OK)
      snprintf(err.msg, sizeof err.msg, "%s", serr.msg);
    else {
      st = sl_jpeg_rewrite(rw, jpg, jlen, &buf, &len, &err);
      free(jpg);
    }
    if (st != SL_OK) {
      fprintf(stderr, "bench_loader: %s\n", err.msg);
      sl_fwriter_abort(w);
      sl_jpeg_rewriter_destroy(rw);
      return 1;
    }
    sl_sample_info meta = {.label = i % 10,
                           .height = (uint16_t)ht,
                           .width = (uint16_t)wd,
                           .codec = SL_IMAGE_JPEG,
                           .channels = 3};
    st = sl_fwriter_add(w, buf, len, &meta, &err);
    free(buf);
    if (st != SL_OK) {
      fprintf(stderr, "bench_loader: %s\n", err.msg);
      sl_fwriter_abort(w);
      sl_jpeg_rewriter_destroy(rw);
      return 1;
    }
  }
  sl_jpeg_rewriter_destroy(rw);
  if (sl_fwriter_commit(w, 10, k_classes, "bench_loader", true, &err) !=
      SL_OK) {
    fprintf(stderr, "bench_loader: %s\n", err.msg);
    return 1;
  }
  return 0;
}

static sl_config *config(const args *a, int workers) {
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    return NULL;
  char res[16], batch[16], wk[16];
  snprintf(res, sizeof res, "%d", a->res);
  snprintf(batch, sizeof batch, "%d", a->batch);
  snprintf(wk, sizeof wk, "%d", workers);
  const char *kv[] = {"dataset.path",
                      a->path,
                      "loader.batch_size",
                      batch,
                      "loader.workers",
                      wk,
                      "loader.order",
                      "random",
                      "loader.drop_last",
                      "true",
                      "loader.io",
                      a->io,
                      "resolution.min",
                      "8",
                      "resolution.max",
                      res,
                      "device.backend",
                      "host",
                      NULL};
  for (int i = 0; kv[i]; i += 2)
    if (sl_config_set(cfg, kv[i], kv[i + 1]) != SL_OK) {
      fprintf(stderr, "bench_loader: %s\n", sl_config_errmsg(cfg));
      sl_config_destroy(cfg);
      return NULL;
    }
  return cfg;
}

/* Single-thread sl_pipeline_run over every sample, as a worker does it,
 * for the same epochs as loader_rate (the same crops) and into a
 * batch-sized buffer: epoch 0 warms the cache, the best of the others
 * counts. 0 if any sample fails. */
static double single_thread_rate(const args *a, sl_config *cfg, int epochs) {
  sl_err err;
  sl_source *src;
  if (sl_source_open(&src, a->path, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err) !=
      SL_OK) {
    fprintf(stderr, "bench_loader: %s\n", err.msg);
    return 0;
  }
  sl_settings s;
  sl_settings_read(&s, cfg);
  sl_aug_params p = s.aug;
  sl_pipeline *pl;
  if (sl_pipeline_create(&pl, &p, a->res, &err) != SL_OK) {
    fprintf(stderr, "bench_loader: %s\n", err.msg);
    sl_source_close(src);
    return 0;
  }
  /* Each sample goes to its own place in a batch-sized buffer, as a worker
   * writes into a staging buffer: one reused destination would stay in
   * cache and flatter the single thread. */
  size_t sample_bytes = sl_aug_sample_bytes(&p, a->res, a->res);
  uint8_t *dst = malloc(sample_bytes * (size_t)a->batch);
  uint64_t n = sl_source_count(src);
  double best = 0;
  int failed = !dst;
  for (int e = 0; e < epochs && !failed; e++) {
    double t0 = now_s();
    for (uint64_t i = 0; i < n && !failed; i++) {
      const sl_sample_info *info = sl_source_info(src, i);
      const uint8_t *data;
      size_t len;
      if (sl_source_read(src, i, NULL, 0, &data, &len, &err) != SL_OK ||
          sl_pipeline_run(pl, data, len, info->codec, info->height, info->width,
                          info->channels, 1, (uint64_t)e, i, a->res, a->res,
                          dst + (i % (uint64_t)a->batch) * sample_bytes,
                          &err) != SL_OK) {
        fprintf(stderr, "bench_loader: sample %llu: %s\n",
                (unsigned long long)i, err.msg);
        failed = 1;
      }
    }
    double rate = (double)n / (now_s() - t0);
    if ((e > 0 || epochs == 1) && rate > best)
      best = rate;
  }
  free(dst);
  sl_pipeline_destroy(pl);
  sl_source_close(src);
  return failed ? 0 : best;
}

/* Runs epochs; returns the best epoch's images/s after the first. */
static double loader_rate(const args *a, int workers, int epochs, int rss) {
  sl_config *cfg = config(a, workers);
  sl_loader *ld = NULL;
  if (!cfg || sl_loader_open(&ld, cfg) != SL_OK) {
    fprintf(stderr, "bench_loader: %s\n", sl_loader_errmsg(ld));
    sl_loader_close(ld);
    sl_config_destroy(cfg);
    return 0;
  }
  sl_config_destroy(cfg);
  double best = 0, wall = 0;
  for (int e = 0; e < epochs; e++) {
    double t0 = now_s();
    uint64_t images = 0;
    sl_batch b;
    sl_status st;
    sl_loader_start_epoch(ld, (uint64_t)e);
    while ((st = sl_loader_next(ld, &b)) == SL_OK) {
      images += b.n;
      sl_batch_release(ld, &b, NULL);
    }
    double dt = now_s() - t0, rate = (double)images / dt;
    wall += dt;
    if (st != SL_END) {
      fprintf(stderr, "bench_loader: %s\n", sl_loader_errmsg(ld));
      break;
    }
    if ((e > 0 || epochs == 1) && rate > best)
      best = rate;
    if (rss) {
      long kb = sl_test_status_kib("VmRSS");
      printf("  epoch %d: %.0f images/s, RSS %ld KiB\n", e, rate, kb);
      printf("RESULT {\"case\": \"rss\", \"epoch\": %d, \"rss_kb\": %ld, "
             "\"workers\": %d}\n",
             e, kb, workers);
    }
  }
  sl_loader_stats s;
  sl_loader_stats_get(ld, &s);
  /* Share of the workers' wall time spent inside read/decode/augment: what
   * is left is the pool's own overhead and waiting (on a machine shared
   * with other work, a low rate with a high share means CPU contention). */
  double busy = (double)(s.read_ns + s.decode_ns + s.augment_ns) * 1e-9 /
                (workers * wall);
  printf("  %d workers: %.0f images/s; per sample: read %.3f ms, decode %.3f "
         "ms, augment %.3f ms; workers in read/decode/augment %.0f%% of the "
         "time, waited %.2f s for staging; mover waited %.2f s for slots\n",
         workers, best, s.samples ? s.read_ns * 1e-6 / s.samples : 0,
         s.samples ? s.decode_ns * 1e-6 / s.samples : 0,
         s.samples ? s.augment_ns * 1e-6 / s.samples : 0, 100 * busy,
         s.staging_wait_ns * 1e-9, s.slot_wait_ns * 1e-9);
  sl_loader_close(ld);
  return best;
}

int main(int argc, char **argv) {
  args a = {.res = 224,
            .batch = 32,
            .workers = 0,
            .epochs = 0,
            .images = 192,
            .io = "auto"};
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--res") == 0 && v)
      a.res = atoi(argv[++i]);
    else if (strcmp(argv[i], "--batch") == 0 && v)
      a.batch = atoi(argv[++i]);
    else if (strcmp(argv[i], "--workers") == 0 && v)
      a.workers = atoi(argv[++i]);
    else if (strcmp(argv[i], "--epochs") == 0 && v)
      a.epochs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--io") == 0 && v)
      a.io = argv[++i];
    else if (strcmp(argv[i], "--images") == 0 && v)
      a.images = atoi(argv[++i]);
    else if (argv[i][0] != '-' && !a.path)
      a.path = argv[i];
    else {
      fprintf(stderr, "usage: bench_loader [DATASET] [--res R] [--batch B] "
                      "[--workers W] [--epochs E] [--io IO] [--images N]\n");
      return 2;
    }
  }
  char tmp[256] = "";
  if (!a.path) {
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmp, sizeof tmp, "%s/bench_loader_%d.lmdb", dir, getpid());
    printf("synthesizing %d ImageNet-like JPEGs into %s\n", a.images, tmp);
    if (make_dataset(tmp, a.images) != 0)
      return 1;
    a.path = tmp;
  }
  int rc = 0;
  if (a.workers > 0) { /* one configuration, for the harness */
    int epochs = a.epochs > 0 ? a.epochs : 2;
    double r = loader_rate(&a, a.workers, epochs, 1);
    printf("RESULT {\"case\": \"loader\", \"res\": %d, \"workers\": %d, "
           "\"batch\": %d, \"images_per_s\": %.1f}\n",
           a.res, a.workers, a.batch, r);
    rc = r > 0 ? 0 : 1;
  } else {
    int epochs = a.epochs > 1 ? a.epochs : 3;
    sl_config *cfg = config(&a, 1);
    double single = cfg ? single_thread_rate(&a, cfg, epochs) : 0;
    sl_config_destroy(cfg);
    printf("single-thread sl_pipeline_run at %d: %.0f images/s\n", a.res,
           single);
    printf("RESULT {\"case\": \"pipeline_1t\", \"res\": %d, "
           "\"images_per_s\": %.1f}\n",
           a.res, single);
    for (int w = 1; w <= 2; w++) {
      double r = loader_rate(&a, w, epochs, 0);
      double eff = single > 0 ? r / (w * single) : 0;
      printf("loader, %d worker%s: %.0f images/s = %.2f x (workers x "
             "single-thread) [goal >= 0.9]\n",
             w, w > 1 ? "s" : "", r, eff);
      printf("RESULT {\"case\": \"loader_vs_1t\", \"res\": %d, \"workers\": "
             "%d, \"images_per_s\": %.1f, \"efficiency\": %.3f}\n",
             a.res, w, r, eff);
      rc |= r > 0 ? 0 : 1;
    }
    printf("RSS over 5 epochs, 2 workers:\n");
    loader_rate(&a, 2, 5, 1);
  }
  if (tmp[0]) {
    unlink(tmp);
    char lock[300];
    snprintf(lock, sizeof lock, "%s-lock", tmp);
    unlink(lock);
  }
  return rc;
}
