/* Unit tests of the out-of-core readers against a plain file with known
 * bytes: every backend returns the same bytes, O_DIRECT alignment on odd
 * offsets and lengths, the io_uring fallback, the auto policy, bounded pool
 * back-pressure, truncated files, misuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/io_cgroup.h"
#include "io/io_hints.h"
#include "io/io_reader.h"
#include "io/io_select.h"
#include "io/io_synth.h"
#include "io/io_testfile.h"
#include "io/io_uring.h"

/* A deterministic permutation of 0..n-1 (Fisher-Yates, xorshift). */
static uint64_t *perm(uint64_t n, uint64_t seed) {
  uint64_t *o = malloc((n ? n : 1) * sizeof *o);
  assert_non_null(o);
  for (uint64_t i = 0; i < n; i++)
    o[i] = i;
  uint64_t x = seed * 2 + 1;
  for (uint64_t i = n; i > 1; i--) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    uint64_t j = x % i;
    uint64_t tmp = o[i - 1];
    o[i - 1] = o[j];
    o[j] = tmp;
  }
  return o;
}

typedef struct logbook {
  int calls;
  sl_log_level level;
  char last[512];
} logbook;

static void log_to_book(void *user, sl_log_level level, const char *msg) {
  logbook *b = user;
  b->calls++;
  b->level = level;
  snprintf(b->last, sizeof b->last, "%s", msg);
}

static sl_io_opts base_opts(const io_testfile *t, sl_io_kind kind) {
  return (sl_io_opts){.kind = kind,
                      .fd = t->fd,
                      .name = t->path,
                      .file_size = t->size,
                      .count = t->count,
                      .max_length = t->max_length,
                      .locate = io_testfile_locate,
                      .locate_ctx = t,
                      .batch_size = 8,
                      .readahead_batches = 2,
                      .queue_depth = 8,
                      .pool_bytes = 1 << 20,
                      .auto_share = 0.5};
}

/* ---- epochs driven by worker threads claiming seqs in order ---- */

typedef struct epoch_run {
  sl_io *io;
  const io_testfile *t;
  const uint64_t *order;
  uint64_t n;
  atomic_uint_fast64_t next;
  atomic_int bad, errors;
  uint64_t *sum; /* per seq: a checksum of the bytes, for cross-backend */
} epoch_run;

typedef struct worker_arg {
  epoch_run *r;
  uint8_t *buf; /* sl_io_buffer_bytes */
  size_t cap;
} worker_arg;

static uint64_t fnv(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static void *worker(void *arg) {
  worker_arg *w = arg;
  epoch_run *r = w->r;
  for (;;) {
    uint64_t seq = atomic_fetch_add(&r->next, 1);
    if (seq >= r->n)
      break;
    const uint8_t *d;
    size_t len;
    sl_err e = {0};
    sl_status st = sl_io_get(r->io, seq, w->buf, w->cap, &d, &len, &e);
    if (st != SL_OK) {
      atomic_fetch_add(&r->errors, 1);
    } else {
      uint64_t s = r->order ? r->order[seq] : seq;
      if (!io_testfile_check(r->t, s, d, len))
        atomic_fetch_add(&r->bad, 1);
      r->sum[seq] = fnv(d, len);
      sched_yield(); /* the buffer must not change while held */
      if (!io_testfile_check(r->t, s, d, len))
        atomic_fetch_add(&r->bad, 1);
    }
    sl_io_put(r->io, seq);
  }
  return NULL;
}

/* Runs one epoch over order with `workers` threads; returns the checksums
 * per seq (caller frees). */
static uint64_t *run_epoch(sl_io *io, const io_testfile *t,
                           const uint64_t *order, uint64_t n,
                           unsigned workers) {
  epoch_run r = {.io = io, .t = t, .order = order, .n = n};
  r.sum = calloc(n ? n : 1, sizeof *r.sum);
  assert_non_null(r.sum);
  sl_err e = {0};
  assert_int_equal(
      sl_io_start_epoch(io, order ? synth_order_array : NULL, order, 0, n, &e),
      SL_OK);
  pthread_t th[8];
  worker_arg wa[8];
  assert_true(workers <= 8);
  for (unsigned w = 0; w < workers; w++) {
    wa[w] = (worker_arg){&r, NULL, sl_io_buffer_bytes(io)};
    wa[w].buf = malloc(wa[w].cap ? wa[w].cap : 1);
    assert_non_null(wa[w].buf);
    assert_int_equal(pthread_create(&th[w], NULL, worker, &wa[w]), 0);
  }
  for (unsigned w = 0; w < workers; w++) {
    pthread_join(th[w], NULL);
    free(wa[w].buf);
  }
  assert_int_equal(atomic_load(&r.errors), 0);
  assert_int_equal(atomic_load(&r.bad), 0);
  return r.sum;
}

static void all_backends_identical(void **state) {
  io_testfile t;
  io_testfile_make(&t, "io_same.bin", 300, 1);
  uint64_t *order = perm(t.count, 7);
  struct {
    sl_io_kind kind;
    bool direct;
    unsigned qd;
  } cases[] = {{SL_IO_MMAP, false, 8},  {SL_IO_PREAD, false, 8},
               {SL_IO_URING, false, 8}, {SL_IO_URING, true, 8},
               {SL_IO_URING, false, 1}, {SL_IO_URING, true, 3}};
  uint64_t *ref = NULL;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    sl_io_opts o = base_opts(&t, cases[c].kind);
    o.direct = cases[c].direct;
    o.queue_depth = cases[c].qd;
    sl_io *io;
    sl_err e = {0};
    assert_int_equal(sl_io_open(&io, &o, &e), SL_OK);
    assert_int_equal(sl_io_backend(io), cases[c].kind);
    for (int epoch = 0; epoch < 2; epoch++) {
      uint64_t *sum = run_epoch(io, &t, order, t.count, 4);
      if (!ref)
        ref = sum;
      else {
        assert_memory_equal(sum, ref, t.count * sizeof *sum);
        free(sum);
      }
    }
    /* The identity order (NULL) too, single worker. */
    free(run_epoch(io, &t, NULL, t.count, 1));
    sl_io_close(io);
  }
  free(ref);
  free(order);
  io_testfile_free(&t);
}

/* A pool that holds barely the largest sample: the reader must wait for
 * puts, wrap around, and never hand out a buffer still in use. */
static void uring_tiny_pool(void **state) {
  io_testfile t;
  io_testfile_make(&t, "io_tiny.bin", 200, 1);
  uint64_t *order = perm(t.count, 3);
  for (int direct = 0; direct <= 1; direct++) {
    sl_io_opts o = base_opts(&t, SL_IO_URING);
    o.direct = direct;
    o.pool_bytes = t.max_length + (direct ? 3 * SL_URING_ALIGN : 64);
    sl_io *io;
    sl_err e = {0};
    assert_int_equal(sl_io_open(&io, &o, &e), SL_OK);
    free(run_epoch(io, &t, order, t.count, 4));
    free(run_epoch(io, &t, order, t.count, 1));
    sl_uring_stats st;
    sl_io_get_stats(io, &st);
    assert_true(st.pool_full > 0);
    assert_true(st.reads >= 2 * (t.count - (t.count + 15) / 16)); /* 0-len */
    sl_io_close(io);
  }
  free(order);
  io_testfile_free(&t);
}

static void uring_pool_too_small(void **state) {
  io_testfile t;
  io_testfile_make(&t, "io_small.bin", 20, 1);
  sl_io_opts o = base_opts(&t, SL_IO_URING);
  o.pool_bytes = t.max_length / 2;
  sl_io *io;
  sl_err e = {0};
  assert_int_equal(sl_io_open(&io, &o, &e), SL_ECONFIG);
  assert_non_null(strstr(e.msg, "io.pool_size"));
  o = base_opts(&t, SL_IO_URING);
  o.queue_depth = 0;
  assert_int_equal(sl_io_open(&io, &o, &e), SL_ECONFIG);
  assert_non_null(strstr(e.msg, "io.queue_depth"));
  io_testfile_free(&t);
}

/* io_uring setup failure (forced): pread, said once, same bytes. */
static void uring_fallback(void **state) {
  io_testfile t;
  io_testfile_make(&t, "io_fallback.bin", 64, 1);
  int errs[] = {EPERM, ENOSYS};
  for (int k = 0; k < 2; k++) {
    for (int kind = SL_IO_URING; kind <= SL_IO_AUTO; kind++) {
      sl_io_opts o = base_opts(&t, (sl_io_kind)kind);
      o.inject_uring_errno = errs[k];
      o.mem_available = 4 << 20; /* auto picks uring */
      o.auto_share = 0.001;
      logbook book = {0};
      o.log = log_to_book;
      o.log_user = &book;
      sl_io *io;
      sl_err e = {0};
      assert_int_equal(sl_io_open(&io, &o, &e), SL_OK);
      assert_int_equal(sl_io_backend(io), SL_IO_PREAD);
      assert_int_equal(book.calls, 1);
      assert_int_equal(book.level, SL_LOG_WARN);
      assert_non_null(strstr(book.last, "falling back to pread"));
      /* The message carries the system's text for the errno. */
      assert_non_null(strstr(book.last, strerror(errs[k])));
      assert_non_null(strstr(sl_io_why(io), "io_uring_queue_init"));
      free(run_epoch(io, &t, NULL, t.count, 2));
      assert_int_equal(book.calls, 1); /* once, not per epoch */
      sl_io_close(io);
    }
  }
  /* The engine itself reports SL_EUNSUPPORTED. */
  sl_uring_opts uo = {.fd = t.fd,
                      .name = "x",
                      .count = t.count,
                      .max_length = t.max_length,
                      .locate = io_testfile_locate,
                      .locate_ctx = &t,
                      .queue_depth = 4,
                      .pool_bytes = 1 << 20,
                      .inject_init_errno = 1};
  sl_uring *u;
  sl_err e = {0};
  assert_int_equal(sl_uring_open(&u, &uo, &e), SL_EUNSUPPORTED);
  assert_null(u);
  io_testfile_free(&t);
}

static void auto_policy(void **state) {
  char why[256];
  assert_int_equal(sl_io_pick(SL_IO_AUTO, 100, 1000, 0.5, why, sizeof why),
                   SL_IO_MMAP);
  assert_non_null(strstr(why, "mmap"));
  assert_int_equal(sl_io_pick(SL_IO_AUTO, 501, 1000, 0.5, why, sizeof why),
                   SL_IO_URING);
  assert_non_null(strstr(why, "> 0.50 x available memory"));
  assert_int_equal(sl_io_pick(SL_IO_AUTO, 500, 1000, 0.5, NULL, 0), SL_IO_MMAP);
  assert_int_equal(sl_io_pick(SL_IO_PREAD, 1 << 30, 1, 0.5, why, sizeof why),
                   SL_IO_PREAD);
  assert_string_equal(sl_io_kind_name(SL_IO_URING), "uring");

  /* Through the reader: a small file with lots of memory maps. */
  io_testfile t;
  io_testfile_make(&t, "io_auto.bin", 16, 1);
  sl_io_opts o = base_opts(&t, SL_IO_AUTO);
  o.mem_available = (uint64_t)1 << 40;
  sl_io *io;
  sl_err e = {0};
  assert_int_equal(sl_io_open(&io, &o, &e), SL_OK);
  assert_int_equal(sl_io_backend(io), SL_IO_MMAP);
  sl_io_close(io);
  o.mem_available = 2 << 20; /* the file is larger than 1% of it */
  o.auto_share = 0.01;
  assert_int_equal(sl_io_open(&io, &o, &e), SL_OK);
  assert_int_equal(sl_io_backend(io), SL_IO_URING);
  sl_io_close(io);
  o.pool_bytes = 3 << 20; /* a pool larger than memory: lowered by auto */
  assert_int_equal(sl_io_open(&io, &o, &e), SL_OK);
  assert_int_equal(sl_io_backend(io), SL_IO_URING);
  assert_non_null(strstr(sl_io_why(io), "io.pool_size lowered to 512.0 KiB"));
  free(run_epoch(io, &t, NULL, t.count, 2));
  sl_io_close(io);
  o.kind = SL_IO_URING; /* ... and refused when uring was asked for */
  assert_int_equal(sl_io_open(&io, &o, &e), SL_ECONFIG);
  assert_non_null(strstr(e.msg, "io.pool_size"));
  o.kind = SL_IO_AUTO;
  o.pool_bytes = 1 << 20;
  o.mem_available = 0; /* the real /proc/meminfo */
  assert_int_equal(sl_io_open(&io, &o, &e), SL_OK);
  sl_io_close(io);
  io_testfile_free(&t);
}

static void meminfo_parse(void **state) {
  const char *dir = getenv("SLUICE_TEST_TMP");
  char p[512];
  snprintf(p, sizeof p, "%s/io_meminfo", dir && *dir ? dir : "/tmp");
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs("MemTotal:       24684292 kB\nMemFree:  1 kB\n"
        "MemAvailable:   24298352 kB\nBuffers: 2 kB\n",
        f);
  fclose(f);
  uint64_t b;
  sl_err e = {0};
  assert_int_equal(sl_io_mem_available(p, &b, &e), SL_OK);
  assert_true(b == 24298352ull * 1024);
  f = fopen(p, "w");
  assert_non_null(f);
  fputs("MemTotal:       24684292 kB\nMemFree:  1 kB\n", f);
  fclose(f);
  assert_int_equal(sl_io_mem_available(p, &b, &e), SL_EFORMAT);
  assert_non_null(strstr(e.msg, p));
  unlink(p);
  assert_int_equal(sl_io_mem_available(p, &b, &e), SL_EIO);
  assert_int_equal(sl_io_mem_available(NULL, &b, &e), SL_OK);
  assert_true(b > 0);
  uint64_t budget = 0, limit = sl_io_cgroup_limit();
  assert_int_equal(sl_io_mem_budget(&budget, &e), SL_OK);
  assert_true(budget > 0 && budget <= b + (64 << 20)); /* b was read before */
  if (limit)
    assert_true(budget <= limit);
}

/* Rewrites the file's bytes from `from` to its original size, in place
 * (the same inode: what a mapping sees). */
static void restore_file(const io_testfile *t, uint64_t from) {
  int fd = open(t->path, O_WRONLY | O_CLOEXEC);
  assert_true(fd >= 0);
  uint8_t b[4096];
  for (uint64_t p = from; p < t->size;) {
    size_t n = t->size - p < sizeof b ? (size_t)(t->size - p) : sizeof b;
    for (size_t k = 0; k < n; k++)
      b[k] = io_byte_at(p + k);
    assert_int_equal(pwrite(fd, b, n, (off_t)p), (ssize_t)n);
    p += n;
  }
  close(fd);
}

/* The file shrinks under a reader in the middle of an epoch: the samples
 * past the new end are a clear SL_EIO naming file, sample and offset (mmap:
 * the SIGBUS of the mapped page is caught, the process lives), the others
 * still read. mmap refuses the next epoch while the size differs; once the
 * file is whole again every backend reads a clean epoch. */
static void truncated_file(void **state) {
  struct {
    sl_io_kind kind;
    bool direct;
  } cases[] = {{SL_IO_PREAD, false},
               {SL_IO_URING, false},
               {SL_IO_URING, true},
               {SL_IO_MMAP, false}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    io_testfile t;
    io_testfile_make(&t, "io_trunc.bin", 64, 1);
    sl_io_opts o = base_opts(&t, cases[c].kind);
    o.direct = cases[c].direct;
    o.readahead_batches = 0; /* uring: read after the cut, not before */
    o.queue_depth = 1;
    o.pool_bytes = 3 * (size_t)t.max_length + 3 * SL_URING_ALIGN;
    sl_io *io;
    sl_err e = {0};
    assert_int_equal(sl_io_open(&io, &o, &e), SL_OK);
    uint64_t cut = t.offset[40] + 5;
    size_t cap = sl_io_buffer_bytes(io);
    assert_true(cap >= t.max_length);
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    const uint8_t *d;
    size_t len;
    /* Samples 0..9 read, then the cut, mid-epoch. */
    assert_int_equal(sl_io_start_epoch(io, NULL, NULL, 0, t.count, &e), SL_OK);
    for (uint64_t s = 0; s < 10; s++) {
      assert_int_equal(sl_io_get(io, s, buf, cap, &d, &len, &e), SL_OK);
      assert_true(io_testfile_check(&t, s, d, len));
      sl_io_put(io, s);
    }
    assert_int_equal(truncate(t.path, (off_t)cut), 0);
    int failures = 0;
    for (uint64_t s = 10; s < t.count; s++) {
      sl_status st = sl_io_get(io, s, buf, cap, &d, &len, &e);
      bool past = t.length[s] > 0 && t.offset[s] + t.length[s] > cut;
      /* uring may have read a sample ahead, before the cut: right too.
       * mmap: the rest of the page the cut falls in reads as zeros, not a
       * fault (the limit sluice.h states): a sample ending there is read. */
      uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
      bool in_page =
          cases[c].kind == SL_IO_MMAP &&
          t.offset[s] + t.length[s] <= (cut + page - 1) / page * page;
      bool early = (cases[c].kind == SL_IO_URING && st == SL_OK) || in_page;
      if (past && !early) {
        assert_int_equal(st, SL_EIO);
        assert_non_null(strstr(e.msg, "truncated"));
        assert_non_null(strstr(e.msg, t.path));
        char want[64];
        snprintf(want, sizeof want, "sample %llu ", (unsigned long long)s);
        assert_non_null(strstr(e.msg, want));
        failures++;
      } else {
        assert_int_equal(st, SL_OK);
        assert_true(past || io_testfile_check(&t, s, d, len));
      }
      sl_io_put(io, s);
      /* The same sample outside the order: the same answer. */
      sl_status st2 = sl_io_read(io, s, buf, cap, &d, &len, &e);
      assert_int_equal(st2, past && !in_page ? SL_EIO : SL_OK);
    }
    assert_true(failures > (cases[c].kind == SL_IO_URING ? 0 : 10));
    sl_status st = sl_io_start_epoch(io, NULL, NULL, 0, t.count, &e);
    if (cases[c].kind == SL_IO_MMAP) {
      assert_int_equal(st, SL_EIO);
      assert_non_null(strstr(e.msg, "changed size"));
    } else {
      assert_int_equal(st, SL_OK);
    }
    /* The fault gone, nothing is lost: a whole clean epoch. */
    restore_file(&t, cut);
    free(run_epoch(io, &t, NULL, t.count, 3));
    free(buf);
    sl_io_close(io);
    io_testfile_free(&t);
  }
}

/* SQLite's practice for I/O errors: the nth read of a reader fails (EIO,
 * or a short read), for n = 1, 2, ... until an epoch sees no fault, for
 * every backend. Each fault is exactly one SL_EIO naming the file and the
 * sample; every other sample reads right; the next epoch (the fault gone)
 * reads every sample right: nothing is lost, nothing hangs. */
static void injected_read_faults(void **state) {
  struct {
    sl_io_kind kind;
    bool direct;
  } cases[] = {{SL_IO_MMAP, false},
               {SL_IO_PREAD, false},
               {SL_IO_URING, false},
               {SL_IO_URING, true}};
  io_testfile t;
  io_testfile_make(&t, "io_inject.bin", 40, 1);
  uint64_t nonempty = 0;
  for (uint64_t s = 0; s < t.count; s++)
    nonempty += t.length[s] > 0;
  unsigned long total = 0;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    for (int k = 0; k < 2; k++) {
      int err = k ? 0 : EIO;
      uint64_t injected = 0;
      for (uint64_t nth = 1;; nth++) {
        sl_io_opts o = base_opts(&t, cases[c].kind);
        o.direct = cases[c].direct;
        o.inject = (sl_io_fault){.nth = nth, .err = err};
        sl_io *io;
        sl_err e = {0};
        assert_int_equal(sl_io_open(&io, &o, &e), SL_OK);
        size_t cap = sl_io_buffer_bytes(io);
        uint8_t *buf = malloc(cap);
        assert_non_null(buf);
        assert_int_equal(sl_io_start_epoch(io, NULL, NULL, 0, t.count, &e),
                         SL_OK);
        int failures = 0;
        for (uint64_t s = 0; s < t.count; s++) {
          const uint8_t *d;
          size_t len;
          sl_status st = sl_io_get(io, s, buf, cap, &d, &len, &e);
          if (st != SL_OK) {
            assert_int_equal(st, SL_EIO);
            char want[64];
            snprintf(want, sizeof want, "sample %llu ", (unsigned long long)s);
            assert_non_null(strstr(e.msg, want));
            assert_non_null(strstr(e.msg, t.path));
            failures++;
          } else {
            assert_true(io_testfile_check(&t, s, d, len));
          }
          sl_io_put(io, s);
        }
        assert_true(failures <= 1);
        if (failures) /* else the nth read would fall in this epoch */
          free(run_epoch(io, &t, NULL, t.count, 3));
        free(buf);
        sl_io_close(io);
        if (!failures)
          break;
        injected++;
      }
      assert_true(injected >= nonempty);
      total += injected;
    }
  }
  fprintf(stderr, "injected_read_faults: %lu read faults injected\n", total);
  io_testfile_free(&t);
}

static void misuse(void **state) {
  io_testfile t;
  io_testfile_make(&t, "io_misuse.bin", 32, 1);
  uint8_t *buf = malloc(t.max_length);
  assert_non_null(buf);
  size_t cap = t.max_length;
  for (int kind = SL_IO_MMAP; kind <= SL_IO_URING; kind++) {
    sl_io_opts o = base_opts(&t, (sl_io_kind)kind);
    sl_io *io;
    sl_err e = {0};
    const uint8_t *d;
    size_t len;
    assert_int_equal(sl_io_open(&io, &o, &e), SL_OK);
    assert_int_equal(sl_io_get(io, 0, buf, cap, &d, &len, &e), SL_ESTATE);
    assert_int_equal(sl_io_start_epoch(io, NULL, NULL, 5, 4, &e), SL_EINVAL);
    /* An order naming a sample past the end: that position fails. */
    uint64_t bad[3] = {1, 32, 2};
    assert_int_equal(sl_io_start_epoch(io, synth_order_array, bad, 0, 3, &e),
                     SL_OK);
    assert_int_equal(sl_io_get(io, 0, buf, cap, &d, &len, &e), SL_OK);
    assert_true(io_testfile_check(&t, 1, d, len));
    sl_io_put(io, 0);
    assert_int_equal(sl_io_get(io, 1, buf, cap, &d, &len, &e), SL_EINVAL);
    assert_non_null(strstr(e.msg, "sample 32"));
    sl_io_put(io, 1);
    assert_int_equal(sl_io_get(io, 2, buf, cap, &d, &len, &e), SL_OK);
    assert_true(io_testfile_check(&t, 2, d, len));
    sl_io_put(io, 2);
    /* Positions [4, 10) only: a resumed epoch. */
    assert_int_equal(sl_io_start_epoch(io, NULL, NULL, 4, 10, &e), SL_OK);
    assert_int_equal(sl_io_get(io, 10, buf, cap, &d, &len, &e), SL_EINVAL);
    assert_int_equal(sl_io_get(io, 3, buf, cap, &d, &len, &e), SL_EINVAL);
    assert_int_equal(sl_io_get(io, 5, buf, cap, &d, &len, &e), SL_OK);
    assert_true(io_testfile_check(&t, 5, d, len));
    if (kind == SL_IO_URING) { /* a position is handed out once */
      const uint8_t *d2;
      assert_int_equal(sl_io_get(io, 5, buf, cap, &d2, &len, &e), SL_ESTATE);
      assert_non_null(strstr(e.msg, "twice"));
    }
    sl_io_put(io, 5);
    sl_io_put(io, 5); /* a second put does nothing */
    /* Buffers too small for pread and the out-of-order read. */
    assert_int_equal(sl_io_read(io, 5, buf, 1, &d, &len, &e), SL_EINVAL);
    assert_non_null(strstr(e.msg, "buffer"));
    assert_int_equal(sl_io_read(io, 99, buf, cap, &d, &len, &e), SL_EINVAL);
    /* Stop mid-epoch with reads in flight, then a full epoch. */
    sl_io_stop(io);
    assert_int_equal(sl_io_get(io, 6, buf, cap, &d, &len, &e), SL_ESTATE);
    free(run_epoch(io, &t, NULL, t.count, 3));
    sl_io_close(io);
  }
  free(buf);
  sl_io_close(NULL);
  sl_uring_close(NULL);
  io_testfile_free(&t);
}

/* stop while workers are inside get: they end with SL_ESTATE (uring: also
 * those blocked on a read), nothing races (TSan), the next epoch is whole. */
typedef struct stopper {
  sl_io *io;
  uint8_t *buf;
  size_t cap;
  uint64_t n;
  atomic_uint_fast64_t *next;
} stopper;

static void *stop_worker(void *arg) {
  stopper *w = arg;
  for (;;) {
    uint64_t seq = atomic_fetch_add(w->next, 1);
    if (seq >= w->n)
      return NULL;
    const uint8_t *d;
    size_t len;
    sl_err e = {0};
    sl_status st = sl_io_get(w->io, seq, w->buf, w->cap, &d, &len, &e);
    sl_io_put(w->io, seq);
    if (st == SL_ESTATE)
      return NULL;
    assert_int_equal(st, SL_OK);
  }
}

static void stop_while_reading(void **state) {
  io_testfile t;
  io_testfile_make(&t, "io_stop.bin", 2000, 2);
  for (int kind = SL_IO_MMAP; kind <= SL_IO_URING; kind++) {
    sl_io_opts o = base_opts(&t, (sl_io_kind)kind);
    sl_io *io;
    sl_err e = {0};
    assert_int_equal(sl_io_open(&io, &o, &e), SL_OK);
    for (int round = 0; round < 3; round++) {
      atomic_uint_fast64_t next = 0;
      assert_int_equal(sl_io_start_epoch(io, NULL, NULL, 0, t.count, &e),
                       SL_OK);
      stopper w[3];
      pthread_t th[3];
      for (int i = 0; i < 3; i++) {
        w[i] =
            (stopper){io, malloc(t.max_length), t.max_length, t.count, &next};
        assert_non_null(w[i].buf);
        assert_int_equal(pthread_create(&th[i], NULL, stop_worker, &w[i]), 0);
      }
      usleep(1000 * (unsigned)round);
      sl_io_stop(io);
      for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        free(w[i].buf);
      }
    }
    free(run_epoch(io, &t, NULL, t.count, 3));
    sl_io_close(io);
  }
  io_testfile_free(&t);
}

/* ---- payloads read in part (sl_io_parts) ---- */

#define PART_HEAD 16u

/* A head of 16 bytes for samples over 64 bytes. */
static uint32_t part_head(const void *ctx, uint64_t i) {
  const io_testfile *t = ctx;
  return t->length[i] > 64 ? PART_HEAD : 0;
}

/* The range from the head's bytes (as a level record's directory says
 * where its level lies): a byte of it picks the start; every fifth sample
 * declines (the rest whole), every seventh answers out of range (read
 * whole too). */
static bool part_rest(const void *ctx, uint64_t i, const uint8_t *b, size_t n,
                      uint32_t *off, uint32_t *len) {
  const io_testfile *t = ctx;
  uint32_t l = t->length[i];
  if (i % 5 == 0)
    return false;
  *off = (uint32_t)n + b[3] % (l - (uint32_t)n);
  *len = (l - *off) / 2 + 1;
  if (i % 7 == 0)
    *len = l; /* past the payload's end */
  return true;
}

/* What a get of sample i must hold (the head and the range, or the whole
 * payload) and how many bytes that is. */
static uint32_t part_check(const io_testfile *t, uint64_t i, const uint8_t *d,
                           size_t len, int *bad) {
  uint32_t l = t->length[i], h = part_head(t, i), po = h, pl = l - h;
  if (len != l) {
    (*bad)++;
    return 0;
  }
  if (h) {
    uint8_t head[PART_HEAD];
    for (uint32_t k = 0; k < h; k++)
      head[k] = io_byte_at(t->offset[i] + k);
    if (!part_rest(t, i, head, h, &po, &pl) || pl > l - po)
      po = h, pl = l - h;
  }
  for (uint32_t k = 0; k < h; k++)
    *bad += d[k] != io_byte_at(t->offset[i] + k);
  for (uint32_t k = po; k < po + pl; k++)
    *bad += d[k] != io_byte_at(t->offset[i] + k);
  return h + pl;
}

/* Every backend reads the head, then only the range the head names, each
 * at its own offset of what get hands out; io_uring's byte counter counts
 * just those bytes (O_DIRECT reads whole payloads); a rest that declines
 * or answers outside the payload reads the payload whole. */
static void parts_head_then_range(void **state) {
  io_testfile t;
  io_testfile_make(&t, "io_parts.bin", 300, 3);
  uint64_t *order = perm(t.count, 11);
  struct {
    sl_io_kind kind;
    bool direct;
    unsigned qd;
  } cases[] = {{SL_IO_MMAP, false, 8},
               {SL_IO_PREAD, false, 8},
               {SL_IO_URING, false, 8},
               {SL_IO_URING, false, 1},
               {SL_IO_URING, true, 4}};
  uint64_t whole = 0;
  for (uint64_t i = 0; i < t.count; i++)
    whole += t.length[i];
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    sl_io_opts o = base_opts(&t, cases[c].kind);
    o.direct = cases[c].direct;
    o.queue_depth = cases[c].qd;
    o.parts = (sl_io_parts){part_head, part_rest, &t};
    sl_io *io;
    sl_err e = {0};
    assert_int_equal(sl_io_open(&io, &o, &e), SL_OK);
    assert_int_equal(sl_io_backend(io), cases[c].kind);
    size_t cap = sl_io_buffer_bytes(io);
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    assert_int_equal(
        sl_io_start_epoch(io, synth_order_array, order, 0, t.count, &e), SL_OK);
    uint64_t expect = 0;
    int bad = 0;
    for (uint64_t seq = 0; seq < t.count; seq++) {
      const uint8_t *d;
      size_t len;
      assert_int_equal(sl_io_get(io, seq, buf, cap, &d, &len, &e), SL_OK);
      expect += part_check(&t, order[seq], d, len, &bad);
      sl_io_put(io, seq);
    }
    /* Outside the order (a replacement read): in part too. */
    const uint8_t *d;
    size_t len;
    assert_int_equal(sl_io_read(io, 3, buf, cap, &d, &len, &e), SL_OK);
    part_check(&t, 3, d, len, &bad);
    assert_int_equal(bad, 0);
    assert_true(expect < whole);
    sl_uring_stats us;
    sl_io_get_stats(io, &us);
    if (cases[c].kind == SL_IO_URING)
      assert_true(cases[c].direct ? us.bytes >= whole : us.bytes == expect);
    sl_io_stop(io);
    free(buf);
    sl_io_close(io);
  }
  free(order);
  io_testfile_free(&t);
}

static void hints(void **state) {
  io_testfile t;
  io_testfile_make(&t, "io_hints.bin", 300, 4);
  sl_err e = {0};
  assert_int_equal(sl_fadvise_dontneed(t.fd, 0, 0, &e), SL_OK);
  assert_int_equal(sl_fadvise_random(t.fd, &e), SL_OK);
  uint64_t cached = UINT64_MAX;
  assert_int_equal(sl_cached_bytes(t.fd, 0, t.size, &cached, &e), SL_OK);
  assert_true(cached <= t.size + sl_page_size());
  assert_int_equal(sl_fadvise_dontneed(-1, 0, 0, &e), SL_EIO);
  assert_non_null(strstr(e.msg, "DONTNEED"));
  assert_int_equal(sl_hint_willneed(NULL, 0, &e), SL_OK);
  assert_int_equal(sl_hint_random((void *)(uintptr_t)4096, 4096, &e), SL_EIO);
  assert_int_equal(sl_cached_bytes(-1, 0, 10, &cached, &e), SL_EIO);
  io_testfile_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(all_backends_identical),
      cmocka_unit_test(uring_tiny_pool),
      cmocka_unit_test(uring_pool_too_small),
      cmocka_unit_test(uring_fallback),
      cmocka_unit_test(auto_policy),
      cmocka_unit_test(meminfo_parse),
      cmocka_unit_test(truncated_file),
      cmocka_unit_test(injected_read_faults),
      cmocka_unit_test(misuse),
      cmocka_unit_test(stop_while_reading),
      cmocka_unit_test(hints),
      cmocka_unit_test(parts_head_then_range),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
