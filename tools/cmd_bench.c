/* sluice bench CONFIG [--epochs E] [--from E0] [--batches N] [--workers LIST]
 *                     [--step-ms T]:
 * how fast the loader of a config delivers on this machine, epoch by epoch
 * and for each worker count asked for, and where its workers spend their
 * time. By default the consumer releases each batch at once, so the numbers
 * are the loader's ceiling; --step-ms holds each batch for a training step
 * of T ms first, and the stall column then says how much of such a
 * training run would be spent waiting for data. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sluice.h"
#include "tools/cli.h"

/* Macros as well as numbers: --workers' message spells them. */
#define MAX_COUNTS 16
#define MAX_WORKERS 1024
#define STR(x) #x
#define XSTR(x) STR(x)
enum { k_max_counts = MAX_COUNTS, k_max_workers = MAX_WORKERS };

typedef struct bench_args {
  const char *config;
  long long epochs, from, batches; /* batches 0: whole epochs */
  long long step_us;               /* time a batch is held: the step */
  long long workers[k_max_counts]; /* -1: the config's own */
  int ncounts;
} bench_args;

/* "1,2,4" into a->workers; 0 on a bad list. */
static int parse_workers(const char *s, void *dst) {
  bench_args *a = dst;
  a->ncounts = 0;
  char buf[256];
  size_t len = strlen(s);
  if (len == 0 || len >= sizeof buf)
    return 0;
  memcpy(buf, s, len + 1);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (a->ncounts == k_max_counts ||
        !sl_cli_parse_int(t, 0, k_max_workers, &a->workers[a->ncounts]))
      return 0;
    a->ncounts++;
  }
  /* strtok_r skips empty fields: "1,,2" and "2," are refused here. */
  return a->ncounts > 0 && s[0] != ',' && s[len - 1] != ',' && !strstr(s, ",,");
}

/* --step-ms T into a->step_us; 0 outside 0.001..60000. */
static int parse_step(const char *v, void *dst) {
  bench_args *a = dst;
  char *end;
  errno = 0;
  double ms = strtod(v, &end);
  if (errno || end == v || *end || !(ms >= 0.001 && ms <= 60000))
    return 0;
  a->step_us = (long long)(ms * 1000 + 0.5);
  return 1;
}

static int parse(int argc, char **argv, bench_args *a) {
  memset(a, 0, sizeof *a);
  a->epochs = 2;
  a->workers[0] = -1;
  a->ncounts = 1;
  const sl_cli_opt opts[] = {
      {.name = "--epochs",
       .kind = SL_CLI_INT,
       .value = "E",
       .lo = 1,
       .hi = 100000,
       .help = "epochs to run (default 2: the first pays for a cold\n"
               "page cache)",
       .dst = &a->epochs},
      {.name = "--from",
       .kind = SL_CLI_INT,
       .value = "E0",
       .lo = 0,
       .hi = 1000000000LL,
       .needs = "an epoch",
       .help = "first epoch (default 0; the schedule's resolution\n"
               "follows the epoch number)",
       .dst = &a->from},
      {.name = "--batches",
       .kind = SL_CLI_INT,
       .value = "N",
       .lo = 1,
       .hi = 1000000000LL,
       .help = "stop each epoch after N batches (default: whole;\n"
               "the shares then also count work prefetched past\n"
               "the last batch, so they are approximate)",
       .dst = &a->batches},
      {.name = "--workers",
       .kind = SL_CLI_CUSTOM,
       .value = "LIST",
       .needs = "a list like 1,2,4 (each 0.." XSTR(
           MAX_WORKERS) ", at most " XSTR(MAX_COUNTS) ")",
       .help = "worker counts to compare, e.g. 1,2,4 (0: one per\n"
               "CPU; default: the config's loader.workers)",
       .dst = a,
       .parse = parse_workers},
      {.name = "--step-ms",
       .kind = SL_CLI_CUSTOM,
       .value = "T",
       .needs = "milliseconds 0.001..60000",
       .help = "hold each batch T ms (0.001..60000) before releasing\n"
               "it, as a training step would: stall is then the\n"
               "share of such a run spent waiting for data",
       .dst = a,
       .parse = parse_step},
  };
  const sl_cli_spec spec = {
      .cmd = "bench",
      .head =
          "usage: sluice bench CONFIG [--epochs E] [--from E0] [--batches N]\n"
          "                    [--workers LIST] [--step-ms T]\n\n"
          "Runs the loader of CONFIG (dataset, schedule, augmentation, dtype,\n"
          "device backend: everything as in training) with a consumer that\n"
          "releases each batch at once, and prints per epoch: the resolution,\n"
          "images/s, the dataset bytes read per second, how busy the workers\n"
          "were and how their time split between reading, decoding and\n"
          "augmenting, how long they waited for a free staging buffer, and "
          "the\nshare of JPEGs decoded from only their crop's part (files "
          "written by\n`sluice pack` without --keep-jpeg) and, for a file "
          "with resolution\nlevels, the share of crops decoded from each "
          "level.\n",
      .tail = "Workers busy near 100%: the CPU is the limit, more workers help "
              "if\nthere are cores. Much time reading: storage is (see "
              "loader.io).\nStaging waits: the consumer or the device copy "
              "is.\n",
      .column = 16,
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
      .pos = &a->config,
      .min_pos = 1,
      .max_pos = 1,
      .too_many = "one CONFIG only"};
  return sl_cli_parse(&spec, argc, argv, NULL);
}

static double pct(uint64_t part_ns, double whole_s) {
  return whole_s > 0 ? 100.0 * (double)part_ns / 1e9 / whole_s : 0.0;
}

/* Sleeps us microseconds, as a training step holds its batch. */
static void hold(long long us) {
  struct timespec t = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

/* What happened between two snapshots: after - before for the counters
 * (SL_LOADER_STATS_FIELDS's TOTAL rows, per index for arrays), after's
 * value for the others. */
#define SINCE_TOTAL_U64(name, n)                                               \
  for (size_t k = 0; k < (n); k++)                                             \
    ((uint64_t *)(void *)&d.name)[k] -=                                        \
        ((const uint64_t *)(const void *)&before->name)[k];
#define SINCE_TOTAL(type, name, n) SINCE_TOTAL_##type(name, n)
#define SINCE_NOW(type, name, n)
#define SINCE_RECENT(type, name, n)
#define SINCE_LEN(type, name, n)
#define SINCE(type, name, n, kind) SINCE_##kind(type, name, n)
static sl_loader_stats stats_since(const sl_loader_stats *after,
                                   const sl_loader_stats *before) {
  sl_loader_stats d = *after;
  SL_LOADER_STATS_FIELDS(SINCE)
  return d;
}

/* Runs one epoch; prints its line. Returns its images/s, or -1 on error. */
static double run_epoch(sl_loader *ld, uint64_t epoch, long long max_batches,
                        long long step_us) {
  sl_loader_stats s0, s1;
  /* s0 before the start: the workers begin at once, and a small epoch can
   * be done before a later snapshot. The price: after an epoch cut short
   * by --batches, the samples it had in flight are finished inside this
   * start and count here (the help calls those shares approximate). */
  sl_status st = sl_loader_stats_get(ld, &s0);
  if (st == SL_OK)
    st = sl_loader_start_epoch(ld, epoch);
  if (st != SL_OK) {
    fprintf(stderr, "sluice bench: epoch %" PRIu64 ": %s\n", epoch,
            sl_loader_errmsg(ld));
    return -1;
  }
  sl_batch b;
  uint64_t images = 0, batches = 0;
  uint32_t h = 0, w = 0;
  while ((max_batches == 0 || batches < (uint64_t)max_batches) &&
         (st = sl_loader_next(ld, &b)) == SL_OK) {
    images += b.n;
    batches++;
    h = b.height;
    w = b.width;
    if (step_us > 0)
      hold(step_us);
    if ((st = sl_batch_release(ld, &b, NULL)) != SL_OK)
      break;
  }
  bool stopped_early = max_batches > 0 && batches == (uint64_t)max_batches;
  if ((st != SL_OK || !stopped_early) && st != SL_END) {
    fprintf(stderr, "sluice bench: epoch %" PRIu64 ": %s\n", epoch,
            sl_loader_errmsg(ld));
    return -1;
  }
  if (sl_loader_stats_get(ld, &s1) != SL_OK) {
    fprintf(stderr, "sluice bench: stats: %s\n", sl_loader_errmsg(ld));
    return -1;
  }
  double secs = s1.epoch_seconds;
  if (batches == 0) {
    printf("%7u %6" PRIu64 "  (no batch: empty shard)\n", s1.workers, epoch);
    return 0;
  }
  sl_loader_stats d = stats_since(&s1, &s0);
  uint64_t busy = d.read_ns + d.decode_ns + d.augment_ns;
  double worker_s = secs * s1.workers;
  double ips = secs > 0 ? (double)images / secs : 0.0;
  char windowed[16] = "-"; /* no JPEG decoded */
  if (d.jpeg_samples)
    snprintf(windowed, sizeof windowed, "%.0f%%",
             100.0 * (double)d.jpeg_windowed / (double)d.jpeg_samples);
  printf("%7u %6" PRIu64 " %5ux%-5u %8" PRIu64 " %8" PRIu64
         " %8.2f %9.0f %10.1f %5.0f%% %5.0f%% %5.0f%% %5.0f%% %6.0f%% %8s"
         " %5.0f%%\n",
         s1.workers, epoch, w, h, batches, images, secs, ips,
         secs > 0 ? (double)d.bytes_read / 1048576.0 / secs : 0.0,
         pct(busy, worker_s),
         busy ? 100.0 * (double)d.read_ns / (double)busy : 0.0,
         busy ? 100.0 * (double)d.decode_ns / (double)busy : 0.0,
         busy ? 100.0 * (double)d.augment_ns / (double)busy : 0.0,
         pct(d.staging_wait_ns, worker_s), windowed,
         pct(d.consumer_wait_ns, secs));
  const uint64_t *lv = d.level_decodes;
  uint64_t lv_all = lv[0] + lv[1] + lv[2] + lv[3];
  if (lv_all) /* a file with resolution levels: which level crops came from */
    printf("        levels: %.0f%% full size, %.0f%% level 1, %.0f%% level 2, "
           "%.0f%% level 3\n",
           100.0 * (double)lv[0] / (double)lv_all,
           100.0 * (double)lv[1] / (double)lv_all,
           100.0 * (double)lv[2] / (double)lv_all,
           100.0 * (double)lv[3] / (double)lv_all);
  if (d.fetches || d.cache_hits || d.cache_misses) /* a dataset at a URL */
    printf("        network: %" PRIu64
           " shard(s) fetched, %.1f MiB; reads: %" PRIu64 " cached, %" PRIu64
           " waited %.2f s (%.0f%% of worker time)\n",
           d.fetches, (double)d.bytes_fetched / 1048576.0, d.cache_hits,
           d.cache_misses, (double)d.fetch_wait_ns / 1e9,
           pct(d.fetch_wait_ns, worker_s));
  if (d.skipped)
    printf("        %" PRIu64 " bad sample(s) replaced (loader.on_error = "
           "skip), latest index %" PRIu64 "\n",
           d.skipped, s1.bad[0]);
  return ips;
}

int sl_cmd_bench(int argc, char **argv) {
  bench_args a;
  int rc = parse(argc, argv, &a);
  if (rc >= 0)
    return rc;
  double best[k_max_counts];
  uint32_t nworkers[k_max_counts];
  for (int c = 0; c < a.ncounts; c++) {
    char n[32];
    snprintf(n, sizeof n, "%lld", a.workers[c]);
    const char *const kv[] = {"loader.workers", n, NULL};
    sl_loader *ld =
        sl_cli_open_loader("bench", a.config, a.workers[c] >= 0 ? kv : NULL);
    if (!ld)
      return 1;
    sl_loader_stats s;
    if (sl_loader_stats_get(ld, &s) != SL_OK) {
      fprintf(stderr, "sluice bench: stats: %s\n", sl_loader_errmsg(ld));
      sl_loader_close(ld);
      return 1;
    }
    nworkers[c] = s.workers;
    if (c == 0) {
      printf("# %s backend%s%s\n", s.backend, s.backend_note[0] ? ": " : "",
             s.backend_note);
      printf("%7s %6s %11s %8s %8s %8s %9s %10s %6s %6s %6s %6s %7s %8s "
             "%6s\n",
             "workers", "epoch", "resolution", "batches", "images", "seconds",
             "images/s", "read MiB/s", "busy", "read", "decode", "augment",
             "staging", "windowed", "stall");
    }
    best[c] = 0;
    for (long long e = 0; e < a.epochs; e++) {
      double ips = run_epoch(ld, (uint64_t)(a.from + e), a.batches, a.step_us);
      if (ips < 0) {
        sl_loader_close(ld);
        return 1;
      }
      if (ips > best[c])
        best[c] = ips;
    }
    sl_loader_close(ld);
  }
  printf("best epoch per worker count:");
  for (int c = 0; c < a.ncounts; c++)
    printf("%s %u: %.0f images/s (%.0f per worker)", c ? ";" : "", nworkers[c],
           best[c], nworkers[c] ? best[c] / nworkers[c] : 0.0);
  printf(
      "\n(busy: share of the workers' time spent on samples; read, "
      "decode, augment:\nshares of that; staging: share spent waiting for "
      "a free staging buffer;\nwindowed: JPEGs decoded from only their "
      "crop's restart segments, which\n`sluice pack` lays out; '-': no "
      "JPEG; stall: share of the epoch the consumer\nwaited for a batch%s)\n",
      a.step_us ? ", with each batch held for the step"
                : " (--step-ms T: with a training step of T ms)");
  return 0;
}
