/* bench_io_loader: the whole loader (read + decode + augment, host
 * backend) on a real dataset, one cold-cache epoch per loader.io backend x
 * {random, quasi_random}, against min(disk-bound, decode-bound) measured or
 * given in the same run.
 *
 *   bench_io_loader DATASET [--workers W] [--res R] [--batch B]
 *                   [--pool SIZE] [--qd N]
 *
 * Before each epoch the loader is opened afresh (a map keeps its pages from
 * DONTNEED) and the file dropped from the page cache, so every epoch reads
 * the disk. disk-bound = the disk's O_DIRECT 1 MiB sequential rate (the
 * better of 1 and 16 in flight) / the average sample's bytes (file size /
 * samples). decode-bound = a warm-cache mmap epoch of the same loader,
 * measured in the same run: the rate with no disk in the way. Goal: the
 * best backend >= 0.8 x min(disk-bound, decode-bound). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_io_disk.h"
#include "sluice.h"

typedef struct opts {
  const char *path, *workers, *res, *batch, *pool, *qd;
} opts;

static sl_loader *open_loader(const opts *o, const char *io, bool direct,
                              const char *order) {
  const char *kv[] = {"dataset.path",
                      o->path,
                      "device.backend",
                      "host",
                      "loader.workers",
                      o->workers,
                      "loader.batch_size",
                      o->batch,
                      "loader.order",
                      order,
                      "loader.io",
                      io,
                      "io.direct",
                      direct ? "true" : "false",
                      "io.pool_size",
                      o->pool,
                      "io.queue_depth",
                      o->qd,
                      "resolution.min",
                      o->res,
                      "resolution.max",
                      o->res,
                      "augment.dtype",
                      "u8",
                      NULL};
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    die("config", "out of memory");
  for (int i = 0; kv[i]; i += 2)
    if (sl_config_set(cfg, kv[i], kv[i + 1]) != SL_OK)
      die(kv[i], sl_config_errmsg(cfg));
  sl_loader *ld;
  if (sl_loader_open(&ld, cfg) != SL_OK)
    die(o->path, sl_loader_errmsg(ld));
  sl_config_destroy(cfg);
  return ld;
}

/* One epoch: images per second from start to SL_END. */
static double epoch_rate(sl_loader *ld) {
  double t0 = now();
  uint64_t images = 0;
  sl_status st = sl_loader_start_epoch(ld, 0);
  sl_batch b;
  while (st == SL_OK && (st = sl_loader_next(ld, &b)) == SL_OK) {
    images += b.n;
    st = sl_batch_release(ld, &b, NULL);
  }
  if (st != SL_END)
    die("epoch", sl_loader_errmsg(ld));
  return (double)images / (now() - t0);
}

int main(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-')
    die("usage", "bench_io_loader DATASET [--workers W] [--res R] [--batch "
                 "B] [--pool SIZE] [--qd N]");
  opts o = {argv[1], "2", "224", "64", "64MiB", "64"};
  for (int a = 2; a + 1 < argc; a += 2) {
    const char *v = argv[a + 1];
    if (!strcmp(argv[a], "--workers"))
      o.workers = v;
    else if (!strcmp(argv[a], "--res"))
      o.res = v;
    else if (!strcmp(argv[a], "--batch"))
      o.batch = v;
    else if (!strcmp(argv[a], "--pool"))
      o.pool = v;
    else if (!strcmp(argv[a], "--qd"))
      o.qd = v;
    else
      die(argv[a], "unknown option");
  }
  int fd = open(o.path, O_RDONLY | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
    die(o.path, "not a readable dataset file");
  sl_loader *probe = open_loader(&o, "mmap", false, "random");
  uint64_t count = sl_loader_sample_count(probe);
  (void)epoch_rate(probe); /* warm the cache, then time an epoch */
  double decode_rate = epoch_rate(probe);
  sl_loader_close(probe);
  drop_cache(fd);
  double d1 = disk_rate(o.path, (uint64_t)sb.st_size);
  drop_cache(fd);
  double dq = disk_rate_qd(o.path, (uint64_t)sb.st_size, 16);
  double disk = d1 > dq ? d1 : dq;
  double avg = (double)sb.st_size / (double)count;
  double disk_bound = disk / avg, bound = disk_bound;
  if (decode_rate < bound)
    bound = decode_rate;
  printf("bench_io_loader: %s, %llu samples, %.1f MiB (avg %.0f B), %s "
         "workers, res %s, batch %s, pool %s, qd %s\n",
         o.path, (unsigned long long)count, (double)sb.st_size / 1048576, avg,
         o.workers, o.res, o.batch, o.pool, o.qd);
  printf("disk: O_DIRECT 1 MiB sequential %.0f MiB/s (1 in flight), %.0f "
         "MiB/s (16): disk-bound %.0f images/s\n",
         d1 / 1048576, dq / 1048576, disk_bound);
  printf("decode-bound: %.0f images/s; bound = min = %.0f images/s\n\n",
         decode_rate, bound);
  printf("%-13s %-13s %10s %7s\n", "backend", "order", "images/s", "ratio");
  static const struct {
    const char *name, *io;
    bool direct;
  } be[] = {{"mmap", "mmap", false},
            {"pread", "pread", false},
            {"uring", "uring", false},
            {"uring-direct", "uring", true}};
  static const char *const orders[] = {"random", "quasi_random"};
  double best = 0;
  const char *best_name = "";
  for (size_t b = 0; b < sizeof be / sizeof *be; b++)
    for (int k = 0; k < 2; k++) {
      sl_loader *ld = open_loader(&o, be[b].io, be[b].direct, orders[k]);
      drop_cache(fd);
      double r = epoch_rate(ld);
      sl_loader_close(ld);
      printf("%-13s %-13s %10.0f %7.2f\n", be[b].name, orders[k], r, r / bound);
      if (r > best) {
        best = r;
        best_name = be[b].name;
      }
    }
  printf("\nbest: %s, %.0f images/s = %.2f x min(disk-bound, decode-bound) "
         "(goal >= 0.8)\n",
         best_name, best, best / bound);
  close(fd);
  return 0;
}
