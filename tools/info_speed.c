/* See info_speed.h: how much faster crops decode packed than read in place,
 * measured on a sample of the dataset itself. Through the public API only
 * (sl_dataset_*, sl_writer_*, sl_config_*, sl_loader_*). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/url_shown.h"
#include "sluice.h"
#include "tools/info_speed.h"
#include "tools/pack/pack_copy.h"

enum { ROUNDS = 3 };

static double clock_s(clockid_t id) {
  struct timespec t;
  if (clock_gettime(id, &t) != 0)
    return 0.0;
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Removes the temporary directory and whatever the writer left in it (its
 * file, a lock file); complains about what it cannot remove. */
static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
        continue;
      if (unlinkat(dirfd(d), e->d_name, 0) != 0)
        fprintf(stderr, "sluice info: cannot remove %s/%s: %s\n", dir,
                e->d_name, strerror(errno));
    }
    closedir(d);
  }
  if (rmdir(dir) != 0)
    fprintf(stderr, "sluice info: cannot remove %s: %s\n", dir,
            strerror(errno));
}

/* Sample k < n of the n spread evenly over count: floor(k * count / n),
 * without overflow (k, n <= 65536). */
static uint64_t spread_index(uint64_t k, uint64_t count, uint64_t n) {
  return k * (count / n) + k * (count % n) / n;
}

/* JPEGs among the n samples spread over ds. */
static uint64_t count_jpegs(sl_dataset *ds, uint64_t n) {
  uint64_t count = sl_dataset_count(ds), jpegs = 0;
  for (uint64_t k = 0; k < n; k++) {
    sl_sample_meta m;
    if (sl_dataset_info(ds, spread_index(k, count, n), &m) == SL_OK &&
        (m.codec == SL_IMAGE_JPEG || m.codec == SL_IMAGE_JPEG_LEVELS))
      jpegs++;
  }
  return jpegs;
}

/* Writes the n samples spread over ds to out, as `pack --from` would.
 * Returns 0, or 1 after printing why. */
static int pack_subset(sl_dataset *ds, const char *from, const char *out,
                       uint64_t n) {
  uint64_t count = sl_dataset_count(ds);
  sl_writer_options wo = {0};
  wo.target_width = sl_dataset_target_width(ds);
  wo.settings = "sluice info --speed (a sample of the dataset)";
  sl_writer *w;
  if (sl_writer_create(&w, out, &wo) != SL_OK) {
    fprintf(stderr, "sluice info: %s\n", sl_writer_errmsg(w));
    sl_writer_destroy(w);
    return 1;
  }
  uint8_t *buf = NULL;
  size_t cap = 0;
  int rc = 0;
  for (uint64_t k = 0; k < n && rc == 0; k++)
    rc = sl_pack_copy_sample("info", ds, w, spread_index(k, count, n), &buf,
                             &cap, from);
  free(buf);
  if (rc == 0 && sl_writer_commit(w) != SL_OK) {
    fprintf(stderr, "sluice info: %s\n", sl_writer_errmsg(w));
    rc = 1;
  }
  sl_writer_destroy(w);
  return rc;
}

/* One run: a loader with one worker over path takes the first n samples of
 * a random order of the whole dataset (count samples) as one batch of n at
 * res px (random-resized crop, flip, u8, host memory); *cpu and *wall are
 * the process's CPU seconds and the seconds from the epoch's start to that
 * batch. Sharding makes the epoch exactly that batch: with world_size
 * floor(count / n) ranks, rank 0's share is under 2n samples and drop_last
 * keeps one batch of n, so the worker decodes nothing past it. kv: the
 * --set pairs for the in-place dataset (NULL for the packed file). */
static int run_once(const char *path, const char *const *kv, uint64_t count,
                    uint64_t n, long long res, double *cpu, double *wall) {
  char bs[32], world[32], r[32];
  snprintf(bs, sizeof bs, "%" PRIu64, n);
  uint64_t ranks = count / n; /* the option's range; past it, a batch or
                                 two more are decoded than timed */
  snprintf(world, sizeof world, "%" PRIu64, ranks < 1048576 ? ranks : 1048576);
  snprintf(r, sizeof r, "%lld", res);
  const char *const fixed[] = {"dataset.path",
                               path,
                               "loader.workers",
                               "1",
                               "loader.batch_size",
                               bs,
                               "loader.world_size",
                               world,
                               "loader.rank",
                               "0",
                               "loader.drop_last",
                               "true",
                               "loader.order",
                               "random",
                               "loader.seed",
                               "1",
                               "resolution.schedule",
                               "constant",
                               "resolution.min",
                               r,
                               "resolution.max",
                               r,
                               "augment.crop",
                               "random_resized",
                               "augment.flip",
                               "0.5",
                               "augment.dtype",
                               "u8",
                               "device.backend",
                               "host",
                               "device.prefetch",
                               "1",
                               "device.staging",
                               "1",
                               NULL};
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK) {
    fprintf(stderr, "sluice info: out of memory\n");
    return 1;
  }
  sl_status st = SL_OK;
  for (int i = 0; st == SL_OK && kv && kv[i]; i += 2)
    st = sl_config_set(cfg, kv[i], kv[i + 1]);
  for (int i = 0; st == SL_OK && fixed[i]; i += 2)
    st = sl_config_set(cfg, fixed[i], fixed[i + 1]);
  if (st != SL_OK) {
    fprintf(stderr, "sluice info: %s\n", sl_config_errmsg(cfg));
    sl_config_destroy(cfg);
    return 1;
  }
  sl_loader *ld;
  st = sl_loader_open(&ld, cfg);
  sl_config_destroy(cfg);
  char shown[4096]; /* the path as printed: no URL's credentials */
  sl_url_shown(path, shown, sizeof shown);
  if (st != SL_OK) {
    fprintf(stderr, "sluice info: %s: %s\n", shown, sl_loader_errmsg(ld));
    sl_loader_close(ld);
    return 1;
  }
  double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC);
  sl_batch b;
  st = sl_loader_start_epoch(ld, 0);
  if (st == SL_OK)
    st = sl_loader_next(ld, &b);
  *cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
  *wall = clock_s(CLOCK_MONOTONIC) - w0;
  int rc = 0;
  if (st == SL_OK) {
    if (b.n != n || b.valid != n) {
      fprintf(stderr,
              "sluice info: %s: a batch of %" PRIu32 " samples (%" PRIu32
              " valid), not %" PRIu64 "\n",
              shown, b.n, b.valid, n);
      rc = 1;
    }
    if (sl_batch_release(ld, &b, NULL) != SL_OK)
      rc = 1;
  } else {
    rc = 1;
  }
  if (st != SL_OK || rc)
    fprintf(stderr, "sluice info: %s: %s\n", shown, sl_loader_errmsg(ld));
  sl_loader_close(ld);
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v) {
  qsort(v, ROUNDS, sizeof *v, cmp_double);
  return v[ROUNDS / 2];
}

/* "1.31x faster" or "1.25x slower" (ratio: in place / packed). */
static void print_ratio(double ratio) {
  if (ratio >= 1.0)
    printf("%.2fx faster", ratio);
  else
    printf("%.2fx slower", 1.0 / ratio);
}

/* The rounds, alternating in place (path, with kv) and packed (out), and
 * the speed line. Returns 0, or 1 after printing why. */
static int measure(const char *path, const char *const *kv, const char *out,
                   uint64_t count, uint64_t n, long long res, uint64_t jpegs) {
  double ratio_cpu[ROUNDS], ratio_wall[ROUNDS], cpu[2][ROUNDS], wall[2][ROUNDS];
  int rc = 0;
  fprintf(stderr,
          "sluice info: timing %d rounds of %" PRIu64 " crops, in place "
          "then packed ...\n",
          ROUNDS, n);
  for (int k = 0; k < ROUNDS && rc == 0; k++) {
    rc = run_once(path, kv, count, n, res, &cpu[0][k], &wall[0][k]);
    if (rc == 0)
      rc = run_once(out, NULL, n, n, res, &cpu[1][k], &wall[1][k]);
    if (rc == 0 && !(cpu[1][k] > 0 && wall[1][k] > 0)) {
      fprintf(stderr, "sluice info: the clock did not advance\n");
      rc = 1;
    }
    if (rc == 0) {
      ratio_cpu[k] = cpu[0][k] / cpu[1][k];
      ratio_wall[k] = wall[0][k] / wall[1][k];
    }
  }
  if (rc == 0) {
    double rc_med = median(ratio_cpu), rw_med = median(ratio_wall);
    printf("speed:       packed (sluice pack) decodes these crops ");
    print_ratio(rc_med);
    printf(" per CPU-second than read in place\n             (%" PRIu64
           " samples, %lld px random-resized crops, one worker, median of "
           "%d rounds;\n             wall time ",
           n, res, ROUNDS);
    print_ratio(rw_med);
    printf("; CPU seconds a round in place %.3f, packed %.3f)\n",
           median(cpu[0]), median(cpu[1]));
    if (jpegs < n)
      printf("             %" PRIu64 " of the %" PRIu64
             " sampled images are JPEGs (only they gain)\n",
             jpegs, n);
  }
  return rc;
}

int sl_info_speed(sl_dataset *ds, const char *path, const char *const *kv,
                  long long samples, long long res) {
  if (!strcmp(sl_dataset_entries(ds), "sluice")) {
    printf("speed:       already packed (sluice's layout): crops decode as "
           "fast as sluice\n             makes them; nothing to compare\n");
    return 0;
  }
  uint64_t count = sl_dataset_count(ds);
  if (count == 0) {
    printf("speed:       no samples to measure\n");
    return 0;
  }
  uint64_t n = (uint64_t)samples < count ? (uint64_t)samples : count;
  uint64_t jpegs = count_jpegs(ds, n);
  if (jpegs == 0) {
    printf("speed:       none of the %" PRIu64 " sampled images is a JPEG: "
           "packing speeds up\n             JPEG crops only; not measured\n",
           n);
    return 0;
  }
  const char *tmp = getenv("TMPDIR");
  char dir[4096], out[4200];
  snprintf(dir, sizeof dir, "%s/sluice-speed-XXXXXX",
           tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    fprintf(stderr, "sluice info: cannot make a directory %s: %s\n", dir,
            strerror(errno));
    return 1;
  }
  snprintf(out, sizeof out, "%s/sample.lmdb", dir);
  fflush(stdout);
  fprintf(stderr, "sluice info: packing %" PRIu64 " samples into %s ...\n", n,
          dir);
  int rc = pack_subset(ds, path, out, n);
  if (rc == 0)
    rc = measure(path, kv, out, count, n, res, jpegs);
  remove_dir(dir);
  return rc;
}
