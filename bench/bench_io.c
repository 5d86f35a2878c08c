/* bench_io: cold-cache epochs of each loader.io backend, in random and
 * quasi-random order, against the disk's own O_DIRECT sequential rate
 * measured in the same run; and what a page fault costs each backend.
 *
 *   bench_io [--file PATH] [--mib N] [--workers W] [--qd N] [--pool MIB]
 *            [--epochs N] [--fault-mib N]
 *            [--backends mmap,pread,uring,uring-direct]
 *
 * The dataset is synthetic (tests/io/io_synth.h): samples of ImageNet JPEG
 * sizes (110 kB on average) back to back in a plain file, written once
 * (default $SLUICE_BENCH_TMP or /tmp, bench_io_<N>.bin). Before every epoch
 * the file is dropped from the page cache (posix_fadvise DONTNEED), so every
 * epoch reads the disk. Workers get each sample, read one byte per 64 (so
 * every page is touched, as a decoder would) and put it.
 *
 * Reported: images/s per backend x order, the disk-bound rate (O_DIRECT 1
 * MiB sequential reads / average sample size), and each result's ratio to
 * it. Ratios within one run only: no decoding happens here, so the ratio
 * to min(disk, decode) is bench_io_loader's, which measures both. */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_io_disk.h"
#include "common/strlist.h"
#include "io/io_hints.h"
#include "io/io_reader.h"
#include "io/io_select.h"
#include "io/io_synth.h"

#define AVG_SAMPLE 110000u

/* ---- one epoch of one backend ---- */
typedef struct epoch {
  sl_io *io;
  uint64_t n;
  atomic_uint_fast64_t next;
  atomic_uint_fast64_t sink;
  atomic_int errors;
  char msg[SL_ERRMSG_MAX];
} epoch;

typedef struct warg {
  epoch *ep;
  uint8_t *buf; /* sl_io_buffer_bytes */
  size_t cap;
} warg;

static void *worker(void *p) {
  warg *w = p;
  epoch *ep = w->ep;
  uint64_t acc = 0;
  for (;;) {
    uint64_t seq = atomic_fetch_add(&ep->next, 1);
    if (seq >= ep->n)
      break;
    const uint8_t *d;
    size_t len;
    sl_err e = {0};
    sl_status st = sl_io_get(ep->io, seq, w->buf, w->cap, &d, &len, &e);
    if (st != SL_OK) {
      if (atomic_fetch_add(&ep->errors, 1) == 0)
        snprintf(ep->msg, sizeof ep->msg, "%s", e.msg);
    } else {
      for (size_t k = 0; k < len; k += 64)
        acc += d[k];
    }
    sl_io_put(ep->io, seq);
  }
  atomic_fetch_add(&ep->sink, acc);
  return NULL;
}

static double run_epoch(sl_io *io, int fd, const uint64_t *order, uint64_t n,
                        unsigned workers) {
  drop_cache(fd);
  epoch ep = {.io = io, .n = n};
  sl_err e = {0};
  if (sl_io_start_epoch(io, synth_order_array, order, 0, n, &e) != SL_OK)
    die("start epoch", e.msg);
  pthread_t th[64];
  warg wa[64];
  size_t cap = sl_io_buffer_bytes(io);
  uint8_t *bufs = malloc(cap * workers + 1); /* the workers' read buffers */
  if (!bufs)
    die("buffers", "out of memory");
  memset(bufs, 0, cap * workers + 1);
  double t0 = now();
  for (unsigned w = 0; w < workers; w++) {
    wa[w] = (warg){&ep, bufs + (size_t)w * cap, cap};
    if (pthread_create(&th[w], NULL, worker, &wa[w]) != 0)
      die("thread", strerror(errno));
  }
  for (unsigned w = 0; w < workers; w++)
    pthread_join(th[w], NULL);
  double dt = now() - t0;
  sl_io_stop(io);
  free(bufs);
  if (atomic_load(&ep.errors))
    die("epoch", ep.msg);
  return (double)n / dt;
}

/* ---- page-fault cost ---- */
static long faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt + ru.ru_majflt;
}

static double touch_map(int fd, size_t bytes, int advice, long *nf) {
  uint8_t *m = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED)
    die("mmap", strerror(errno));
  if (advice >= 0 && madvise(m, bytes, advice) != 0)
    die("madvise", strerror(errno));
  volatile uint8_t sink = 0;
  long f0 = faults();
  double t0 = now();
  for (size_t k = 0; k < bytes; k += 4096)
    sink += m[k];
  double dt = now() - t0;
  *nf = faults() - f0;
  munmap(m, bytes);
  (void)sink;
  return dt;
}

static double pread_all(int fd, size_t bytes, size_t chunk) {
  uint8_t *buf = malloc(chunk);
  if (!buf)
    die("buffer", "out of memory");
  memset(buf, 0, chunk);
  double t0 = now();
  for (size_t k = 0; k < bytes; k += chunk) {
    ssize_t r = pread(fd, buf, chunk, (off_t)k);
    if (r <= 0)
      die("pread", r < 0 ? strerror(errno) : "short file");
  }
  double dt = now() - t0;
  free(buf);
  return dt;
}

static double touch_anon(size_t bytes, long *nf) {
  uint8_t *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    die("mmap", strerror(errno));
  long f0 = faults();
  double t0 = now();
  for (size_t k = 0; k < bytes; k += 4096)
    m[k] = 1;
  double dt = now() - t0;
  *nf = faults() - f0;
  munmap(m, bytes);
  return dt;
}

static void cost_row(const char *what, double seconds, size_t bytes, long nf) {
  double pages = (double)(bytes / 4096);
  double us = seconds * 1e6 / pages;
  printf("  %-40s %7.2f us/page %8.1f us/image %8ld faults", what, us,
         us * AVG_SAMPLE / 4096.0, nf);
  if (nf > 0)
    printf(" %6.2f us/fault", seconds * 1e6 / (double)nf);
  printf("\n");
}

static void fault_costs(int fd, size_t bytes) {
  sl_err e = {0};
  long nf = 0;
  (void)pread_all(fd, bytes, 1 << 20); /* warm */
  uint64_t cached = 0;
  if (sl_cached_bytes(fd, 0, bytes, &cached, &e) != SL_OK)
    die("mincore", e.msg);
  printf("\npage cost over %zu MiB (one %u-byte image = %.0f pages), "
         "%.0f%% cached when warm:\n",
         bytes >> 20, AVG_SAMPLE, AVG_SAMPLE / 4096.0,
         100.0 * (double)cached / (double)bytes);
  double t = touch_map(fd, bytes, -1, &nf);
  cost_row("mmap, cached, first touch", t, bytes, nf);
  t = touch_map(fd, bytes, MADV_RANDOM, &nf);
  cost_row("mmap+MADV_RANDOM, cached, first touch", t, bytes, nf);
  t = pread_all(fd, bytes, 128 << 10);
  cost_row("pread 128 KiB, cached (copy, no fault)", t, bytes, 0);
  t = touch_anon(bytes, &nf);
  cost_row("anonymous memory, first touch", t, bytes, nf);
  drop_cache(fd);
  t = touch_map(fd, bytes, MADV_RANDOM, &nf);
  cost_row("mmap+MADV_RANDOM, cold: a read per page", t, bytes, nf);
  drop_cache(fd);
  t = touch_map(fd, bytes, -1, &nf);
  cost_row("mmap, cold, kernel read-around", t, bytes, nf);
  drop_cache(fd);
  t = pread_all(fd, bytes, 128 << 10);
  cost_row("pread 128 KiB, cold", t, bytes, 0);
}

int main(int argc, char **argv) {
  const char *dir = getenv("SLUICE_BENCH_TMP");
  char path[512] = "";
  uint64_t mib = 512, fault_mib = 64;
  unsigned workers = 2, qd = 64, epochs = 1;
  uint64_t pool_mib = 64;
  const char *only = NULL; /* comma-separated backend names */
  for (int a = 1; a < argc; a++) {
    const char *v = a + 1 < argc ? argv[a + 1] : NULL;
    if (!v)
      die(argv[a], "needs a value");
    if (!strcmp(argv[a], "--file"))
      snprintf(path, sizeof path, "%s", v);
    else if (!strcmp(argv[a], "--mib"))
      mib = strtoull(v, NULL, 10);
    else if (!strcmp(argv[a], "--workers"))
      workers = (unsigned)atoi(v);
    else if (!strcmp(argv[a], "--qd"))
      qd = (unsigned)atoi(v);
    else if (!strcmp(argv[a], "--pool"))
      pool_mib = strtoull(v, NULL, 10);
    else if (!strcmp(argv[a], "--epochs"))
      epochs = (unsigned)atoi(v);
    else if (!strcmp(argv[a], "--backends"))
      only = v;
    else if (!strcmp(argv[a], "--fault-mib"))
      fault_mib = strtoull(v, NULL, 10);
    else
      die(argv[a], "unknown option (see the comment atop bench/bench_io.c)");
    a++;
  }
  if (mib < 8 || workers < 1 || workers > 64 || epochs < 1)
    die("options", "need --mib >= 8, 1 <= --workers <= 64, --epochs >= 1");
  if (!path[0])
    snprintf(path, sizeof path, "%s/bench_io_%llu.bin",
             dir && *dir ? dir : "/tmp", (unsigned long long)mib);

  synth_index x;
  if (synth_index_build(&x, mib * 1048576 / AVG_SAMPLE, AVG_SAMPLE) != 0)
    die("index", "out of memory");
  if (synth_write_plain(path, &x) != 0)
    die(path, strerror(errno));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    die(path, strerror(errno));

  drop_cache(fd);
  double disk1 = disk_rate(path, x.size);
  drop_cache(fd);
  double diskq = disk_rate_qd(path, x.size, 16);
  double disk = disk1 > diskq ? disk1 : diskq;
  double avg = (double)x.size / (double)x.n;
  double disk_bound = disk / avg;
  double bound = disk_bound;
  printf("bench_io: %s, %llu samples, %.1f MiB, avg %.0f B; %u workers, "
         "queue depth %u, pool %llu MiB\n",
         path, (unsigned long long)x.n, (double)x.size / 1048576, avg, workers,
         qd, (unsigned long long)pool_mib);
  printf("disk: O_DIRECT 1 MiB sequential reads: %.0f MiB/s one at a time, "
         "%.0f MiB/s 16 in flight\n",
         disk1 / 1048576, diskq / 1048576);
  printf("disk-bound: %.0f MiB/s / avg sample = %.0f images/s\n",
         disk / 1048576, disk_bound);
  printf("\n");
  printf("%-13s %-7s %6s %10s %9s %7s\n", "backend", "order", "epoch",
         "images/s", "MiB/s", "ratio");

  struct {
    const char *name;
    sl_io_kind kind;
    bool direct;
  } be[] = {{"mmap", SL_IO_MMAP, false},
            {"pread", SL_IO_PREAD, false},
            {"uring", SL_IO_URING, false},
            {"uring-direct", SL_IO_URING, true}};
  uint64_t *order = malloc(x.n * sizeof *order);
  if (!order)
    die("order", "out of memory");
  double best = 0;
  const char *best_name = "";
  for (size_t b = 0; b < sizeof be / sizeof *be; b++) {
    if (only && !sl_list_has(only, be[b].name))
      continue;
    sl_io_opts o = {.kind = be[b].kind,
                    .fd = fd,
                    .name = path,
                    .file_size = x.size,
                    .count = x.n,
                    .max_length = x.max,
                    .locate = synth_locate,
                    .locate_ctx = &x,
                    .batch_size = 32,
                    .readahead_batches = 2,
                    .queue_depth = qd,
                    .pool_bytes = pool_mib << 20,
                    .direct = be[b].direct,
                    .auto_share = 0.5};
    for (int quasi = 0; quasi <= 1; quasi++) {
      for (unsigned ep = 0; ep < epochs; ep++) {
        /* A fresh reader each epoch: a map keeps its pages from DONTNEED. */
        sl_io *io;
        sl_err e = {0};
        if (sl_io_open(&io, &o, &e) != SL_OK)
          die(be[b].name, e.msg);
        if (synth_order(order, x.n, 77, ep, quasi ? 64 : 0, 16) != 0)
          die("order", "the sampler failed");
        double r = run_epoch(io, fd, order, x.n, workers);
        sl_uring_stats us;
        sl_io_get_stats(io, &us);
        sl_io_close(io);
        printf("%-13s %-7s %6u %10.0f %9.1f %7.2f", be[b].name,
               quasi ? "quasi" : "random", ep, r, r * avg / 1048576, r / bound);
        if (be[b].kind == SL_IO_URING)
          printf("   (worker waits %llu of %llu gets)",
                 (unsigned long long)us.waits, (unsigned long long)x.n);
        printf("\n");
        if (r > best) {
          best = r;
          best_name = be[b].name;
        }
      }
    }
  }
  printf("\nbest: %s, %.0f images/s = %.2f x disk-bound\n", best_name, best,
         best / bound);
  if (fault_mib > 0) {
    size_t fb = (size_t)(fault_mib << 20);
    if (fb > x.size)
      fb = (size_t)(x.size / 4096 * 4096);
    fault_costs(fd, fb);
  }
  free(order);
  close(fd);
  synth_index_free(&x);
  return 0;
}
