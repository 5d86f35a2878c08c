/* Soak: loaders opened and closed on 4 threads at once, each breaking out
 * of its epoch at a random point (before the first batch, holding a batch
 * unreleased at close, or after a restart of the epoch mid-way), over
 * LMDB and HDF5 and every io backend. Afterwards the process holds the
 * threads and descriptors it held before, and, where RSS measures the
 * process's own memory (not under a sanitizer or valgrind), its RSS has not
 * grown by more than a bound that a leak of one loader's buffers per cycle
 * would pass.
 *
 * Budget: SLUICE_SOAK_CYCLES loaders per thread (default 6, a few seconds,
 * so the default `ctest -LE gpu` run stays quick; CI runs it again under
 * TSan with more). SLUICE_SOAK_SEED repeats a run's random choices (the
 * seed is printed). Label `soak`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sluice.h"
#include "support/loader_data.h"
#include "support/proc.h"

enum { THREADS = 4, BATCH = 4, NSAMPLES = 40 };

static char g_lmdb[512], g_h5[512];
static long g_cycles = 6;
static uint64_t g_seed;

static const sl_test_set k_set = {.n = NSAMPLES,
                                  .nclasses = 4,
                                  .bad = -1,
                                  .seed0 = 3,
                                  .w0 = 36,
                                  .wstep = 11,
                                  .wmod = 40,
                                  .h0 = 32,
                                  .hstep = 7,
                                  .hmod = 40};

static int setup(void **state) {
  (void)state;
  const char *c = getenv("SLUICE_SOAK_CYCLES");
  if (c && *c)
    g_cycles = strtol(c, NULL, 10);
  if (g_cycles < 1)
    g_cycles = 1;
  const char *s = getenv("SLUICE_SOAK_SEED");
  g_seed = s && *s ? strtoull(s, NULL, 10)
                   : (uint64_t)time(NULL) ^ (uint64_t)getpid() << 20;
  sl_test_tmp_path(g_lmdb, sizeof g_lmdb, "soak", "lmdb");
  sl_test_tmp_path(g_h5, sizeof g_h5, "soak", "h5");
  sl_test_write_set(g_lmdb, &k_set, 0);
  sl_test_write_set(g_h5, &k_set, 0);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  sl_test_unlink_lmdb(g_lmdb);
  unlink(g_h5);
  return 0;
}

static uint64_t next_rand(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

typedef struct worker_arg {
  int id;
  long cycles;
  long batches, opened;
  char failure[1024]; /* empty when every cycle went right */
} worker_arg;

static int set(sl_config *cfg, const char *k, const char *v, worker_arg *a) {
  if (sl_config_set(cfg, k, v) == SL_OK)
    return 0;
  snprintf(a->failure, sizeof a->failure, "config %.200s = %.200s refused", k,
           v);
  return -1;
}

/* One loader's life with random choices; 0, or -1 with a->failure set. */
static int cycle(worker_arg *a, uint64_t *rng) {
  static const char *const io[] = {"mmap", "pread", "uring", "uring"};
  uint64_t r = next_rand(rng);
  int backend = (int)(r % 4), direct = backend == 3;
  const char *path = (r >> 2) & 1 ? g_h5 : g_lmdb;
  char workers[8];
  snprintf(workers, sizeof workers, "%d", 1 + (int)((r >> 3) % 3));
  sl_config *cfg = NULL;
  if (sl_config_create(&cfg) != SL_OK) {
    snprintf(a->failure, sizeof a->failure, "sl_config_create");
    return -1;
  }
  int rc = set(cfg, "dataset.path", path, a) ||
           set(cfg, "device.backend", "host", a) ||
           set(cfg, "loader.batch_size", "4", a) ||
           set(cfg, "loader.workers", workers, a) ||
           set(cfg, "loader.io", io[backend], a) ||
           set(cfg, "io.direct", direct ? "true" : "false", a) ||
           set(cfg, "io.pool_size", "1MiB", a) ||
           set(cfg, "loader.order", "random", a) ||
           set(cfg, "resolution.max", "32", a) ||
           set(cfg, "resolution.min", "32", a) ||
           set(cfg, "augment.dtype", "u8", a);
  sl_loader *ld = NULL;
  if (rc == 0 && sl_loader_open(&ld, cfg) != SL_OK) {
    snprintf(a->failure, sizeof a->failure, "open (%.300s, io %s%s): %.600s",
             path, io[backend], direct ? " direct" : "", sl_loader_errmsg(ld));
    rc = -1;
  }
  sl_config_destroy(cfg);
  if (rc != 0) {
    sl_loader_close(ld);
    return -1;
  }
  a->opened++;
  /* Where to stop: 0 = before any batch, up to a whole epoch and beyond
   * (SL_END), sometimes restarting the epoch half-way first. */
  int per_epoch = NSAMPLES / BATCH;
  int stop = (int)((r >> 8) % (uint64_t)(per_epoch + 2));
  int restart = (r >> 16) % 4 == 0, hold = (r >> 20) % 3 == 0;
  uint64_t epoch = (r >> 24) % 5;
  if (sl_loader_start_epoch(ld, epoch) != SL_OK)
    snprintf(a->failure, sizeof a->failure, "start_epoch");
  sl_batch b;
  for (int i = 0; !a->failure[0] && i < stop; i++) {
    if (restart && i == stop / 2 && sl_loader_start_epoch(ld, epoch + 1))
      snprintf(a->failure, sizeof a->failure, "restart");
    sl_status st = sl_loader_next(ld, &b);
    if (st == SL_END)
      break;
    if (st != SL_OK) {
      snprintf(a->failure, sizeof a->failure,
               "next (%.300s, io %s%s): %s: %.600s", path, io[backend],
               direct ? " direct" : "", sl_status_name(st),
               sl_loader_errmsg(ld));
      break;
    }
    a->batches++;
    if (b.n == 0 || b.n > BATCH)
      snprintf(a->failure, sizeof a->failure, "batch of %d", (int)b.n);
    if (hold && i == stop - 1)
      break; /* closed with this batch still out */
    if (sl_batch_release(ld, &b, NULL) != SL_OK)
      snprintf(a->failure, sizeof a->failure, "release: %.600s",
               sl_loader_errmsg(ld));
  }
  sl_loader_close(ld);
  return a->failure[0] ? -1 : 0;
}

static void *worker(void *p) {
  worker_arg *a = p;
  uint64_t rng = g_seed + (uint64_t)a->id * 0x1000193u;
  for (long c = 0; c < a->cycles && cycle(a, &rng) == 0; c++)
    ;
  return NULL;
}

/* THREADS threads, each `cycles` loaders; fails the test on any error. */
static void run_round(long cycles, long *opened, long *batches) {
  pthread_t th[THREADS];
  worker_arg args[THREADS];
  memset(args, 0, sizeof args);
  for (int i = 0; i < THREADS; i++) {
    args[i].id = i;
    args[i].cycles = cycles;
    assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
  }
  for (int i = 0; i < THREADS; i++)
    assert_int_equal(pthread_join(th[i], NULL), 0);
  for (int i = 0; i < THREADS; i++) {
    if (args[i].failure[0])
      fail_msg("thread %d (SLUICE_SOAK_SEED=%" PRIu64 "): %s", i, g_seed,
               args[i].failure);
    *opened += args[i].opened;
    *batches += args[i].batches;
  }
}

static void soak(void **state) {
  (void)state;
  long opened = 0, batches = 0;
  /* One round first: what the process keeps for good after the first
   * loaders (HDF5's globals, malloc's per-thread arenas, io_uring's
   * first setup) is not a leak. */
  run_round(1, &opened, &batches);
  int tasks0 = sl_test_count_dir("/proc/self/task");
  int fds0 = sl_test_count_dir("/proc/self/fd");
  long rss0 = sl_test_status_kib("VmRSS");
  assert_true(tasks0 > 0 && fds0 > 0);

  run_round(g_cycles, &opened, &batches);

  int tasks = sl_test_tasks_settled(tasks0);
  int fds = sl_test_count_dir("/proc/self/fd");
  long rss = sl_test_status_kib("VmRSS");
  fprintf(stderr,
          "soak (SLUICE_SOAK_SEED=%" PRIu64 "): %d threads x %ld cycles: "
          "%ld loaders opened and closed, %ld batches; threads %d -> %d, "
          "fds %d -> %d, RSS %ld -> %ld KiB\n",
          g_seed, THREADS, g_cycles, opened, batches, tasks0, tasks, fds0, fds,
          rss0, rss);
  assert_int_equal(tasks, tasks0);
  assert_int_equal(fds, fds0);
  /* A loader here holds ~1 MiB (its io pool) plus its staging and index:
   * a leak of that per cycle passes 16 MiB within 16 cycles. */
  if (sl_test_rss_is_meaningful() && g_cycles >= 16)
    assert_true(rss - rss0 < 16 * 1024);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(soak),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
