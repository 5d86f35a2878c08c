/* io_ooc: reads a synthetic dataset for a few epochs through one loader.io
 * backend, with worker threads claiming samples in order, and checks every
 * byte. Run by cgroup_test.sh inside a memory-limited cgroup to prove the
 * readers work out of core.
 *
 *   io_ooc make PATH MIB                 write the plain dataset (~MIB MiB)
 *   io_ooc read PATH MIB BACKEND [options]
 *     BACKEND   mmap | pread | uring | uring-direct | auto
 *     --epochs N  --workers W  --order random|quasi  --pool MIB  --qd N
 *     --drop    drop the file from the page cache first (so its pages are
 *               charged to this process's cgroup as they are read)
 * Prints one line of results; exit 0 when every epoch read every sample
 * right, 1 on any error (printed), 2 on bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "io/io_hints.h"
#include "io/io_reader.h"
#include "io/io_select.h"
#include "io/io_synth.h"

#define AVG_SAMPLE 110000u /* bytes: an ImageNet JPEG */

typedef struct run {
  sl_io *io;
  const uint64_t *order;
  uint64_t n;
  atomic_uint_fast64_t next;
  atomic_int failed;
  pthread_mutex_t mu;
  char msg[SL_ERRMSG_MAX + 64];
} run;

typedef struct warg {
  run *r;
  uint8_t *buf; /* sl_io_buffer_bytes */
  size_t cap;
} warg;

static void *worker(void *p) {
  warg *w = p;
  run *r = w->r;
  for (;;) {
    uint64_t seq = atomic_fetch_add(&r->next, 1);
    if (seq >= r->n || atomic_load(&r->failed))
      return NULL;
    const uint8_t *d;
    size_t len;
    sl_err e = {0};
    uint64_t i = r->order[seq];
    sl_status st = sl_io_get(r->io, seq, w->buf, w->cap, &d, &len, &e);
    long bad = -1;
    if (st == SL_OK && len == synth_len(i, AVG_SAMPLE))
      bad = synth_check(i, d, len);
    else if (st == SL_OK)
      bad = 0;
    if (st != SL_OK || bad >= 0) {
      pthread_mutex_lock(&r->mu);
      if (!atomic_exchange(&r->failed, 1)) {
        if (st != SL_OK)
          snprintf(r->msg, sizeof r->msg, "%s", e.msg);
        else
          snprintf(r->msg, sizeof r->msg,
                   "sample %llu: wrong byte %ld (length %zu)",
                   (unsigned long long)i, bad, len);
      }
      pthread_mutex_unlock(&r->mu);
    }
    sl_io_put(r->io, seq);
  }
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int usage(void) {
  fprintf(stderr, "usage: io_ooc make PATH MIB\n"
                  "       io_ooc read PATH MIB mmap|pread|uring|uring-direct|"
                  "auto [--epochs N] [--workers W] [--order random|quasi] "
                  "[--pool MIB] [--qd N] [--drop]\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 4)
    return usage();
  const char *path = argv[2];
  uint64_t mib = strtoull(argv[3], NULL, 10);
  synth_index x;
  if (mib == 0 ||
      synth_index_build(&x, mib * 1048576 / AVG_SAMPLE, AVG_SAMPLE) != 0)
    return usage();
  if (strcmp(argv[1], "make") == 0) {
    int rc = synth_write_plain(path, &x);
    if (rc != 0)
      fprintf(stderr, "io_ooc: %s: %s\n", path, strerror(errno));
    else
      printf("io_ooc: %s: %llu samples, %llu bytes\n", path,
             (unsigned long long)x.n, (unsigned long long)x.size);
    synth_index_free(&x);
    return rc ? 1 : 0;
  }
  if (strcmp(argv[1], "read") != 0 || argc < 5) {
    synth_index_free(&x);
    return usage();
  }
  const char *backend = argv[4];
  unsigned epochs = 2, workers = 2, qd = 32;
  uint64_t pool_mib = 16;
  bool quasi = false, drop = false;
  for (int a = 5; a < argc; a++) {
    const char *v = a + 1 < argc ? argv[a + 1] : "";
    if (!strcmp(argv[a], "--epochs") && ++a)
      epochs = (unsigned)atoi(v);
    else if (!strcmp(argv[a], "--workers") && ++a)
      workers = (unsigned)atoi(v);
    else if (!strcmp(argv[a], "--qd") && ++a)
      qd = (unsigned)atoi(v);
    else if (!strcmp(argv[a], "--pool") && ++a)
      pool_mib = strtoull(v, NULL, 10);
    else if (!strcmp(argv[a], "--order") && ++a)
      quasi = !strcmp(v, "quasi");
    else if (!strcmp(argv[a], "--drop"))
      drop = true;
    else
      return usage();
  }
  if (workers < 1 || workers > 64)
    return usage();
  sl_io_opts o = {.file_size = x.size,
                  .count = x.n,
                  .max_length = x.max,
                  .locate = synth_locate,
                  .locate_ctx = &x,
                  .name = path,
                  .batch_size = 32,
                  .readahead_batches = 2,
                  .queue_depth = qd,
                  .pool_bytes = pool_mib << 20,
                  .auto_share = 0.5};
  if (!strcmp(backend, "mmap"))
    o.kind = SL_IO_MMAP;
  else if (!strcmp(backend, "pread"))
    o.kind = SL_IO_PREAD;
  else if (!strcmp(backend, "uring"))
    o.kind = SL_IO_URING;
  else if (!strcmp(backend, "uring-direct"))
    o.kind = SL_IO_URING, o.direct = true;
  else if (!strcmp(backend, "auto"))
    o.kind = SL_IO_AUTO;
  else
    return usage();
  o.fd = open(path, O_RDONLY | O_CLOEXEC);
  if (o.fd < 0) {
    fprintf(stderr, "io_ooc: %s: %s\n", path, strerror(errno));
    return 1;
  }
  sl_err e = {0};
  if (drop && sl_fadvise_dontneed(o.fd, 0, 0, &e) != SL_OK) {
    fprintf(stderr, "io_ooc: %s\n", e.msg);
    return 1;
  }
  sl_io *io;
  if (sl_io_open(&io, &o, &e) != SL_OK) {
    fprintf(stderr, "io_ooc: %s\n", e.msg);
    return 1;
  }
  uint64_t *order = malloc(x.n * sizeof *order);
  pthread_t *th = calloc(workers, sizeof *th);
  warg *wa = calloc(workers, sizeof *wa);
  size_t cap = sl_io_buffer_bytes(io);
  uint8_t *bufs = malloc(cap * workers + 1); /* the workers' read buffers */
  if (!order || !th || !wa || !bufs) {
    fprintf(stderr, "io_ooc: out of memory\n");
    return 1;
  }
  run r = {.io = io, .order = order, .n = x.n};
  pthread_mutex_init(&r.mu, NULL);
  double t0 = now();
  int rc = 0;
  for (unsigned ep = 0; ep < epochs && rc == 0; ep++) {
    if (synth_order(order, x.n, 1000, ep, quasi ? 64 : 0, 16) != 0) {
      rc = 1;
      break;
    }
    atomic_store(&r.next, 0);
    if (sl_io_start_epoch(io, synth_order_array, order, 0, x.n, &e) != SL_OK) {
      fprintf(stderr, "io_ooc: epoch %u: %s\n", ep, e.msg);
      rc = 1;
      break;
    }
    for (unsigned w = 0; w < workers; w++) {
      wa[w] = (warg){&r, bufs + (size_t)w * cap, cap};
      if (pthread_create(&th[w], NULL, worker, &wa[w]) != 0) {
        fprintf(stderr, "io_ooc: thread: %s\n", strerror(errno));
        return 1;
      }
    }
    for (unsigned w = 0; w < workers; w++)
      pthread_join(th[w], NULL);
    if (atomic_load(&r.failed)) {
      fprintf(stderr, "io_ooc: epoch %u: %s\n", ep, r.msg);
      rc = 1;
    }
  }
  double dt = now() - t0;
  sl_uring_stats us;
  sl_io_get_stats(io, &us);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("io_ooc: %s %s: %u epochs x %llu samples (%.1f MiB) in %.2f s, "
         "%.0f samples/s, max RSS %ld MiB, major faults %ld, uring reads "
         "%llu waits %llu pool_full %llu: %s\n",
         backend, sl_io_kind_name(sl_io_backend(io)), epochs,
         (unsigned long long)x.n, (double)x.size / 1048576.0, dt,
         (double)x.n * epochs / dt, ru.ru_maxrss / 1024, ru.ru_majflt,
         (unsigned long long)us.reads, (unsigned long long)us.waits,
         (unsigned long long)us.pool_full, rc ? "FAILED" : "ok");
  sl_io_close(io);
  close(o.fd);
  free(order);
  free(bufs);
  free(th);
  free(wa);
  synth_index_free(&x);
  pthread_mutex_destroy(&r.mu);
  return rc;
}
