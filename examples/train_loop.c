/* A small training loop fed by sluice.
 *
 *   train_loop CONFIG [--epochs N] [--step-ms MS] [--set KEY=VALUE]...
 *
 * Opens a loader from an INI config (see `sluice config --list`), runs N
 * epochs, and stands in for the training step with MS milliseconds of
 * work on each batch (default 0: measure the loader alone). Per epoch it
 * prints the resolution from the config's schedule, the images per second
 * and the share of the epoch the step spent waiting for data. Only the
 * public header is used: build it against an installed sluice with
 * find_package(sluice) (examples/CMakeLists.txt) or pkg-config. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Stand-in for forward/backward: touches the batch, then works for ms. */
static double train_step(const sl_batch *b, double ms) {
  double sum = 0;
  const unsigned char *p = b->on_device ? NULL : b->data;
  for (size_t i = 0; p && i < b->bytes; i += 4096)
    sum += p[i];
  double end = now_s() + ms * 1e-3;
  while (ms > 0 && now_s() < end)
    sum += 1e-9;
  return sum;
}

static void log_cb(void *user, sl_log_level level, const char *msg) {
  (void)user;
  if (level >= SL_LOG_INFO)
    fprintf(stderr, "sluice: %s\n", msg);
}

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr,
            "usage: %s CONFIG [--epochs N] [--step-ms MS] "
            "[--set KEY=VALUE]...\n",
            argv[0]);
    return 2;
  }
  int epochs = 3;
  double step_ms = 0;
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    return 1;
  if (sl_config_load_ini(cfg, argv[1]) != SL_OK) {
    fprintf(stderr, "%s\n", sl_config_errmsg(cfg));
    return 1;
  }
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--epochs") == 0 && i + 1 < argc) {
      epochs = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--step-ms") == 0 && i + 1 < argc) {
      step_ms = atof(argv[++i]);
    } else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
      char kv[512];
      snprintf(kv, sizeof kv, "%s", argv[++i]);
      char *eq = strchr(kv, '=');
      if (!eq) {
        fprintf(stderr, "--set wants KEY=VALUE, not '%s'\n", kv);
        return 2;
      }
      *eq = '\0';
      if (sl_config_set(cfg, kv, eq + 1) != SL_OK) {
        fprintf(stderr, "%s\n", sl_config_errmsg(cfg));
        return 2;
      }
    } else {
      fprintf(stderr, "unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  sl_config_set_log(cfg, log_cb, NULL);

  sl_loader *ld;
  if (sl_loader_open(&ld, cfg) != SL_OK) {
    fprintf(stderr, "cannot open the loader: %s\n", sl_loader_errmsg(ld));
    sl_loader_close(ld); /* a failed open still hands out the message */
    sl_config_destroy(cfg);
    return 1;
  }
  sl_config_destroy(cfg); /* the loader keeps what it needs */
  printf("%llu samples, %llu batches per epoch\n",
         (unsigned long long)sl_loader_sample_count(ld),
         (unsigned long long)sl_loader_batches_per_epoch(ld));
  printf("%-6s %-10s %-8s %-10s %s\n", "epoch", "res", "batches", "images/s",
         "waiting for data");
  int rc = 0;
  double sink = 0;
  for (int e = 0; e < epochs && rc == 0; e++) {
    if (sl_loader_start_epoch(ld, (uint64_t)e) != SL_OK) {
      fprintf(stderr, "%s\n", sl_loader_errmsg(ld));
      rc = 1;
      break;
    }
    double t0 = now_s(), waited = 0;
    uint64_t images = 0, batches = 0;
    uint32_t res = 0;
    sl_batch b;
    sl_status st;
    for (;;) {
      double w0 = now_s();
      st = sl_loader_next(ld, &b);
      waited += now_s() - w0;
      if (st != SL_OK)
        break;
      /* With CUDA, wait on b.ready (cudaStreamWaitEvent) before using
       * b.data on the training stream, and pass that stream to release. */
      sink += train_step(&b, step_ms);
      res = b.height;
      images += b.n;
      batches++;
      sl_batch_release(ld, &b, NULL);
    }
    if (st != SL_END) {
      fprintf(stderr, "epoch %d: %s: %s\n", e, sl_status_name(st),
              sl_loader_errmsg(ld));
      rc = 1;
    }
    double dt = now_s() - t0;
    printf("%-6d %4ux%-5u %-8llu %-10.0f %.1f%%\n", e, res, res,
           (unsigned long long)batches, dt > 0 ? (double)images / dt : 0.0,
           dt > 0 ? 100.0 * waited / dt : 0.0);
  }
  sl_loader_stats s;
  if (sl_loader_stats_get(ld, &s) == SL_OK)
    printf("workers %u (%s): read %.2f s, decode %.2f s, augment %.2f s, "
           "skipped %llu, %.1f MB read, %llu of %llu JPEGs decoded from "
           "their crop's segments only\n",
           s.workers, s.backend, s.read_ns * 1e-9, s.decode_ns * 1e-9,
           s.augment_ns * 1e-9, (unsigned long long)s.skipped,
           (double)s.bytes_read / 1e6, (unsigned long long)s.jpeg_windowed,
           (unsigned long long)s.jpeg_samples);
  sl_loader_close(ld);
  return rc + (sink < 0); /* keep the step's work observable */
}
