#include "io/io_uring.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/circ_pool.h"
#include "common/mem.h"
#include "common/sync.h"
#include "io/io_hints.h"

/* A ring's memory is the kernel's, mapped and unmapped by liburing with raw
 * syscalls ThreadSanitizer does not intercept. So TSan keeps whatever it last
 * saw at those addresses (the accesses to another loader's closed ring, or
 * another loader's file mapping, on another thread) and takes this ring's
 * accesses for races with them (test_soak, four loaders at once). The kernel
 * orders them; TSan cannot know it. These brackets keep the ring's accesses
 * (liburing's inline SQ and CQ code) out of TSan's tracking; nothing else is
 * done inside them, so our own state stays checked. Elsewhere they compile
 * to nothing. */
#if defined(__SANITIZE_THREAD__)
#define SL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SL_TSAN 1
#endif
#endif
#ifdef SL_TSAN
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
#define RING_ACCESS_BEGIN()                                                    \
  (AnnotateIgnoreReadsBegin(__FILE__, __LINE__),                               \
   AnnotateIgnoreWritesBegin(__FILE__, __LINE__))
#define RING_ACCESS_END()                                                      \
  (AnnotateIgnoreWritesEnd(__FILE__, __LINE__),                                \
   AnnotateIgnoreReadsEnd(__FILE__, __LINE__))
#else
#define RING_ACCESS_BEGIN() ((void)0)
#define RING_ACCESS_END() ((void)0)
#endif

/* Completions taken off the ring at once, then handled outside the
 * ring-access bracket. */
#define HARVEST_MAX 64

enum slot_state {
  SLOT_FREE,     /* not in the window */
  SLOT_INFLIGHT, /* read submitted (or resubmitted after a short read) */
  SLOT_READY,    /* payload in its buffer */
  SLOT_FAILED,   /* read failed: error (0 = end of file) */
  SLOT_TAKEN,    /* handed to a worker by get */
  SLOT_DONE      /* put: freed once every older seq is done too */
};

typedef struct slot {
  uint64_t seq;      /* UINT64_MAX when free */
  uint64_t sample;   /* sample index read into it */
  uint64_t offset;   /* payload offset in the file (for messages) */
  uint64_t file_off; /* where the read starts (aligned down with direct) */
  size_t arena_off;  /* buffer start in the pool */
  size_t want;       /* bytes the read asks for */
  size_t need;       /* bytes that must arrive: skip + length */
  size_t got;        /* bytes arrived so far */
  size_t skip;       /* payload starts this far into the buffer */
  size_t dst;        /* the read in flight lands this far into the buffer */
  uint32_t length;   /* payload bytes */
  uint32_t head;     /* parts: the head in flight (0: the range, or whole) */
  int state;
  int error; /* errno of a failed read; 0: end of file; -1: bad sample */
  int fd;    /* a lazy file opened for this read until it ends; else -1 */
} slot;

struct sl_uring {
  sl_uring_opts o;
  char name[256];
  int fd; /* o.fd, or our O_DIRECT reopen of it */
  bool own_fd;
  struct io_uring ring;
  bool ring_ok;
  uint8_t *pool;
  size_t align; /* buffer alignment: SL_URING_ALIGN direct, 64 otherwise */
  slot *slots;
  size_t nslots;
  pthread_t thread;
  bool thread_ok, sync_ok;
  pthread_mutex_t mu;
  pthread_cond_t ready; /* a read completed, or the epoch stopped */
  pthread_cond_t space; /* reader: pool space, a new epoch, or quit */
  pthread_cond_t idle;  /* stop: no read in flight */
  /* Everything below is under mu. */
  sl_io_order_fn order;
  const void *order_ctx;
  uint64_t first, end; /* the epoch's positions */
  uint64_t gen;        /* bumped by start and stop */
  bool active, quit;
  uint64_t next_seq;    /* next seq the reader will read */
  uint64_t live_lo;     /* oldest seq whose buffer is still held */
  sl_circ_pool pool_at; /* where in pool buffers are carved (cap: its bytes) */
  unsigned inflight;    /* reads prepared and not yet completed */
  unsigned unsubmitted;
  uint64_t completions; /* counted only for o.inject */
  bool failed;          /* the ring broke: every get returns fatal */
  sl_err fatal;
  sl_uring_stats st;
};

static void *reader_main(void *arg);

static size_t round_up(size_t v, size_t a) {
  return (v + a - 1) / a * a;
}

/* Largest pool allocation one sample of `len` bytes can take. */
static size_t max_alloc(const sl_uring_opts *o, size_t align) {
  size_t span = o->max_length;
  if (o->direct)
    span += 2 * (size_t)SL_URING_ALIGN; /* widened to block boundaries */
  return round_up(span ? span : 1, align);
}

sl_status sl_uring_open(sl_uring **out, const sl_uring_opts *opts,
                        sl_err *err) {
  *out = NULL;
  if (opts->queue_depth < 1 || opts->queue_depth > 4096)
    return sl_err_set(err, SL_ECONFIG,
                      "io.queue_depth %u: must be between 1 and 4096",
                      opts->queue_depth);
  if (!opts->locate)
    return sl_err_set(err, SL_EINVAL, "io_uring: no sample locator");
  if (opts->files && opts->direct)
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "io.direct reads one file, and this dataset is %zu "
                      "files",
                      opts->files->n);
  size_t align = opts->direct ? SL_URING_ALIGN : 64;
  size_t need = max_alloc(opts, align);
  if (opts->pool_bytes < need)
    return sl_err_set(err, SL_ECONFIG,
                      "io.pool_size %zu bytes cannot hold the largest sample "
                      "of %s (%u bytes, %zu with alignment): raise it",
                      opts->pool_bytes, opts->name ? opts->name : "the file",
                      opts->max_length, need);
  sl_uring *u = calloc(1, sizeof *u);
  if (!u)
    return sl_err_set(err, SL_ENOMEM, "io_uring: engine state");
  u->o = *opts;
  snprintf(u->name, sizeof u->name, "%s", opts->name ? opts->name : "?");
  u->o.name = u->name;
  u->fd = opts->fd;
  u->align = align;
  sl_status st = SL_OK;

  /* The ring first: when it cannot exist, fail before allocating the pool
   * so the caller's fallback is cheap. */
  int rc = opts->inject_init_errno
               ? -opts->inject_init_errno
               : io_uring_queue_init(opts->queue_depth, &u->ring, 0);
  if (rc < 0) {
    st = sl_err_errno(err, SL_EUNSUPPORTED, -rc,
                      "io_uring_queue_init(queue depth %u)", opts->queue_depth);
    goto fail;
  }
  u->ring_ok = true;

  /* Our own open file description: O_DIRECT when asked, and read-ahead
   * advice (RANDOM: read what is asked, no more) that does not change the
   * caller's descriptor. Buffered reads keep the caller's fd when /proc is
   * missing. */
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", opts->fd);
  int fd =
      opts->files
          ? -1 /* the caller's fds, one per file */
          : open(path, O_RDONLY | O_CLOEXEC | (opts->direct ? O_DIRECT : 0));
  if (fd < 0 && opts->direct) {
    st = sl_err_errno(err, SL_EIO, errno,
                      "%s: reopen with O_DIRECT (io.direct=true) failed; "
                      "the filesystem may not support it",
                      u->name);
    goto fail;
  }
  if (fd >= 0) {
    u->fd = fd;
    u->own_fd = true;
    sl_err ignored;
    if (!opts->direct) /* advisory: no read-ahead; failing it costs speed */
      (void)sl_fadvise_random(fd, &ignored);
  }

  u->pool_at.cap = opts->pool_bytes / align * align;
  size_t ns = u->pool_at.cap / 4096;
  if (ns < 2 * (size_t)opts->queue_depth)
    ns = 2 * (size_t)opts->queue_depth;
  if (ns > 65536)
    ns = 65536;
  u->nslots = ns;
  u->slots = calloc(ns, sizeof *u->slots);
  u->pool = sl_alloc_touched(u->pool_at.cap, SL_URING_ALIGN);
  if (!u->slots || !u->pool) {
    st = sl_err_set(err, SL_ENOMEM, "io_uring: pool of %zu bytes",
                    u->pool_at.cap);
    goto fail;
  }
  for (size_t i = 0; i < ns; i++) {
    u->slots[i].seq = UINT64_MAX;
    u->slots[i].fd = -1;
  }

  rc = sl_sync_init(&u->mu,
                    (pthread_cond_t *[]){&u->ready, &u->space, &u->idle}, 3);
  if (rc != 0) {
    st = sl_err_errno(err, SL_ETHREAD, rc, "io_uring: mutex/condition init");
    goto fail;
  }
  u->sync_ok = true;
  rc = pthread_create(&u->thread, NULL, reader_main, u);
  if (rc != 0) {
    st = sl_err_errno(err, SL_ETHREAD, rc, "io_uring: reader thread");
    goto fail;
  }
  u->thread_ok = true;
  *out = u;
  return SL_OK;
fail:
  sl_uring_close(u);
  return st;
}

void sl_uring_close(sl_uring *u) {
  if (!u)
    return;
  if (u->thread_ok) {
    sl_uring_stop(u);
    pthread_mutex_lock(&u->mu);
    u->quit = true;
    pthread_cond_signal(&u->space);
    pthread_mutex_unlock(&u->mu);
    pthread_join(u->thread, NULL);
  }
  if (u->sync_ok)
    sl_sync_destroy(&u->mu,
                    (pthread_cond_t *[]){&u->ready, &u->space, &u->idle}, 3);
  if (u->ring_ok) {
    io_uring_queue_exit(&u->ring);
  }
  if (u->own_fd)
    close(u->fd);
  sl_free_aligned(u->pool);
  free(u->slots);
  free(u);
}

sl_status sl_uring_start(sl_uring *u, sl_io_order_fn order,
                         const void *order_ctx, uint64_t first, uint64_t end,
                         sl_err *err) {
  sl_uring_stop(u);
  if (first > end)
    return sl_err_set(err, SL_EINVAL, "%s: epoch positions %llu..%llu", u->name,
                      (unsigned long long)first, (unsigned long long)end);
  pthread_mutex_lock(&u->mu);
  if (u->failed) {
    if (err)
      *err = u->fatal;
    pthread_mutex_unlock(&u->mu);
    return err ? err->code : SL_ESTATE;
  }
  u->order = order;
  u->order_ctx = order_ctx;
  u->first = first;
  u->end = end;
  u->next_seq = u->live_lo = first;
  u->gen++;
  u->active = true;
  pthread_cond_signal(&u->space);
  pthread_mutex_unlock(&u->mu);
  return SL_OK;
}

void sl_uring_stop(sl_uring *u) {
  pthread_mutex_lock(&u->mu);
  u->active = false;
  u->gen++;
  pthread_cond_broadcast(&u->ready);
  pthread_cond_signal(&u->space);
  while (u->inflight > 0)
    pthread_cond_wait(&u->idle, &u->mu);
  for (size_t i = 0; i < u->nslots; i++) {
    if (u->slots[i].fd >= 0) /* a lazy file whose read never completed */
      close(u->slots[i].fd);
    u->slots[i].fd = -1;
    u->slots[i].seq = UINT64_MAX;
    u->slots[i].state = SLOT_FREE;
  }
  u->order = NULL;
  u->first = u->end = 0;
  u->next_seq = u->live_lo = 0;
  u->pool_at.head = u->pool_at.tail = 0;
  pthread_mutex_unlock(&u->mu);
}

sl_status sl_uring_get(sl_uring *u, uint64_t seq, const uint8_t **data,
                       size_t *len, sl_err *err) {
  *data = NULL;
  *len = 0;
  pthread_mutex_lock(&u->mu);
  sl_status st = SL_OK;
  uint64_t gen = u->gen;
  if (!u->active) {
    st = sl_err_set(err, SL_ESTATE, "%s: io_uring: no epoch started", u->name);
    goto out;
  }
  if (seq < u->first || seq >= u->end) {
    st = sl_err_set(err, SL_EINVAL,
                    "%s: io_uring: position %llu outside the epoch's "
                    "%llu..%llu",
                    u->name, (unsigned long long)seq,
                    (unsigned long long)u->first,
                    (unsigned long long)u->end - 1);
    goto out;
  }
  slot *s = &u->slots[seq % u->nslots];
  bool waited = false;
  for (;;) {
    if (u->gen != gen || !u->active) {
      st = sl_err_set(err, SL_ESTATE, "%s: io_uring: epoch stopped", u->name);
      goto out;
    }
    if (u->failed) {
      if (err)
        *err = u->fatal;
      st = u->fatal.code;
      goto out;
    }
    if (seq < u->live_lo ||
        (s->seq == seq && (s->state == SLOT_TAKEN || s->state == SLOT_DONE))) {
      st = sl_err_set(err, SL_ESTATE, "%s: io_uring: seq %llu taken twice",
                      u->name, (unsigned long long)seq);
      goto out;
    }
    if (s->seq == seq && (s->state == SLOT_READY || s->state == SLOT_FAILED))
      break;
    waited = true;
    pthread_cond_wait(&u->ready, &u->mu);
  }
  if (waited)
    u->st.waits++;
  if (s->state == SLOT_FAILED) {
    if (s->error < 0)
      st = sl_err_set(err, SL_EINVAL,
                      "%s: epoch position %llu is sample %llu, but the file "
                      "has %llu samples",
                      u->name, (unsigned long long)seq,
                      (unsigned long long)s->sample,
                      (unsigned long long)u->o.count);
    else if (s->error)
      st = sl_err_errno(err, SL_EIO, s->error,
                        "%s: sample %llu (offset %llu, %u bytes): read",
                        u->name, (unsigned long long)s->sample,
                        (unsigned long long)s->offset, s->length);
    else
      st = sl_err_set(err, SL_EIO,
                      "%s: sample %llu (offset %llu, %u bytes): the file ends "
                      "at byte %llu, before the sample does; was it "
                      "truncated? re-create it with `sluice pack`",
                      u->name, (unsigned long long)s->sample,
                      (unsigned long long)s->offset, s->length,
                      (unsigned long long)(s->file_off + s->got));
    long k = u->o.files && s->error >= 0
                 ? sl_file_set_find(u->o.files, s->offset, s->length)
                 : -1;
    if (k >= 0) { /* name the file of a many-file dataset */
      char name[512];
      sl_file_set_name(u->o.files, (size_t)k, name, sizeof name);
      sl_err_prefix(err, "%s (offset %llu in it): ", name,
                    (unsigned long long)(s->offset - u->o.files->f[k].base));
    }
  } else {
    *data = u->pool + s->arena_off + s->skip;
    *len = s->length;
  }
  s->state = SLOT_TAKEN;
out:
  pthread_mutex_unlock(&u->mu);
  return st;
}

void sl_uring_put(sl_uring *u, uint64_t seq) {
  pthread_mutex_lock(&u->mu);
  slot *s = &u->slots[seq % u->nslots];
  if (!u->active || s->seq != seq || s->state != SLOT_TAKEN) {
    pthread_mutex_unlock(&u->mu); /* stale or double put: nothing held */
    return;
  }
  s->state = SLOT_DONE;
  bool freed = false;
  while (u->live_lo < u->next_seq) {
    slot *o = &u->slots[u->live_lo % u->nslots];
    if (o->state != SLOT_DONE)
      break;
    o->state = SLOT_FREE;
    o->seq = UINT64_MAX;
    u->live_lo++;
    freed = true;
  }
  if (u->live_lo < u->next_seq)
    u->pool_at.tail = u->slots[u->live_lo % u->nslots].arena_off;
  else
    u->pool_at.head = u->pool_at.tail = 0;
  if (freed)
    pthread_cond_signal(&u->space);
  pthread_mutex_unlock(&u->mu);
}

void sl_uring_get_stats(sl_uring *u, sl_uring_stats *out) {
  pthread_mutex_lock(&u->mu);
  *out = u->st;
  pthread_mutex_unlock(&u->mu);
}

/* ---- the reader thread (everything below runs with mu held) ---- */

static void fail_ring(sl_uring *u, int errnum, const char *what) {
  if (!u->failed)
    sl_err_errno(&u->fatal, SL_EIO, errnum, "%s: io_uring: %s", u->name, what);
  u->failed = true;
  pthread_cond_broadcast(&u->ready);
}

/* Closes the lazy file a slot's read opened, once the read has ended. */
static void done_file(slot *s) {
  if (s->fd >= 0)
    close(s->fd); /* read-only: close cannot lose data */
  s->fd = -1;
}

/* Opens the lazy file holding slot s's sample (files opened per read: an
 * image folder). The open is synchronous, in the reader thread; the read
 * is the ring's. Returns 0, or an errno. */
static int open_file(sl_uring *u, slot *s) {
  const sl_file_set *fs = u->o.files;
  long k = sl_file_set_find(fs, s->offset, s->length);
  if (k < 0)
    return EINVAL;
  if (fs->f[k].fd >= 0)
    return 0;
  int fd = fs->open ? fs->open(fs->ctx, (size_t)k) : -1;
  if (fd < 0)
    return fs->open ? errno : EBADF;
  s->fd = fd;
  return 0;
}

/* Prepares the read of what s still lacks. */
static bool prep_read(sl_uring *u, slot *s, size_t index) {
  uint8_t *dst = u->pool + s->arena_off + s->dst + s->got;
  unsigned len = (unsigned)(s->want - s->got);
  uint64_t off = s->file_off + s->got;
  int fd = u->fd;
  if (u->o.files) { /* the file holding the sample, at its local offset */
    long k = sl_file_set_find(u->o.files, s->offset, s->length);
    if (k < 0) { /* the index was checked at open: a bug, not a disk */
      fail_ring(u, EINVAL, "a sample lies in no single file");
      return false;
    }
    fd = s->fd >= 0 ? s->fd : u->o.files->f[k].fd;
    off -= u->o.files->f[k].base;
  }
  RING_ACCESS_BEGIN();
  struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
  if (sqe) {
    io_uring_prep_read(sqe, fd, dst, len, off);
    io_uring_sqe_set_data64(sqe, index);
  }
  RING_ACCESS_END();
  if (!sqe) {
    fail_ring(u, EBUSY, "no free submission entry");
    done_file(s);
    return false;
  }
  u->inflight++;
  u->unsubmitted++;
  u->st.reads++;
  return true;
}

/* Prepares reads for the next seqs while depth, slots and pool allow. */
static void queue_reads(sl_uring *u) {
  while (u->active && !u->failed && u->next_seq < u->end &&
         u->inflight < u->o.queue_depth &&
         u->next_seq - u->live_lo < u->nslots) {
    uint64_t seq = u->next_seq;
    uint64_t sample = u->order ? u->order(u->order_ctx, seq) : seq;
    uint64_t off = 0;
    uint32_t length = 0;
    bool valid = sample < u->o.count;
    if (valid)
      u->o.locate(u->o.locate_ctx, sample, &off, &length);
    uint64_t start = off, end = off + length;
    if (u->o.direct) {
      start = off / SL_URING_ALIGN * SL_URING_ALIGN;
      end = (end + SL_URING_ALIGN - 1) / SL_URING_ALIGN * SL_URING_ALIGN;
    }
    size_t want = (size_t)(end - start);
    uint32_t head = valid && !u->o.direct && u->o.parts.head
                        ? u->o.parts.head(u->o.parts.ctx, sample)
                        : 0;
    if (head >= length)
      head = 0; /* all of it: read it whole */
    size_t at;
    if (!sl_circ_pool_alloc(&u->pool_at, u->live_lo == u->next_seq,
                            round_up(want ? want : 1, u->align), &at)) {
      u->st.pool_full++;
      return;
    }
    size_t index = (size_t)(seq % u->nslots);
    slot *s = &u->slots[index];
    *s = (slot){.seq = seq,
                .sample = sample,
                .offset = off,
                .file_off = start,
                .arena_off = at,
                .want = head ? head : want,
                .need = head ? head : (size_t)(off - start) + length,
                .skip = (size_t)(off - start),
                .length = length,
                .head = head,
                .state = SLOT_INFLIGHT,
                .fd = -1};
    u->next_seq++;
    if (!valid) {
      s->state = SLOT_FAILED;
      s->error = -1; /* the order's sample is out of range */
      pthread_cond_broadcast(&u->ready);
    } else if (length == 0) {
      s->state = SLOT_READY;
      pthread_cond_broadcast(&u->ready);
    } else if (u->o.files && u->o.files->lazy &&
               (s->error = open_file(u, s)) != 0) {
      s->state = SLOT_FAILED; /* named like a failed read */
      pthread_cond_broadcast(&u->ready);
    } else if (!prep_read(u, s, index)) {
      return;
    }
  }
}

/* One completion: done, resubmit the rest of a short read, or failed. */
static void complete(sl_uring *u, uint64_t index, int res) {
  slot *s = &u->slots[index];
  u->inflight--;
  if (u->o.inject.nth && ++u->completions == u->o.inject.nth)
    res = u->o.inject.err ? -u->o.inject.err : 0; /* test hook */
  if (res == -EINTR || res == -EAGAIN) {
    prep_read(u, s, (size_t)index);
    return;
  }
  if (res < 0) {
    s->state = SLOT_FAILED;
    s->error = -res;
    done_file(s);
    return;
  }
  s->got += (size_t)res;
  u->st.bytes += (uint64_t)res;
  if (s->got >= s->need && s->head) {
    /* The head is in: read the one range it says (sl_io_parts), at its
     * own offset of the buffer. */
    const uint8_t *b = u->pool + s->arena_off;
    uint32_t n = s->head, po, pl;
    if (!u->o.parts.rest(u->o.parts.ctx, s->sample, b, n, &po, &pl) || po < n ||
        po > s->length || pl > s->length - po)
      po = n, pl = s->length - n;
    s->head = 0;
    s->file_off = s->offset + po;
    s->dst = po;
    s->got = 0;
    s->want = s->need = pl;
    if (pl == 0) {
      s->state = SLOT_READY;
      done_file(s);
    } else {
      prep_read(u, s, (size_t)index);
    }
  } else if (s->got >= s->need) {
    s->state = SLOT_READY;
    done_file(s);
  } else if (res == 0 || (u->o.direct && s->got % SL_URING_ALIGN != 0)) {
    s->state = SLOT_FAILED; /* end of file before the payload's end */
    s->error = 0;
    done_file(s);
  } else {
    prep_read(u, s, (size_t)index); /* short read: ask for the rest */
  }
}

static void *reader_main(void *arg) {
  sl_uring *u = arg;
  pthread_mutex_lock(&u->mu);
  while (!u->quit) {
    queue_reads(u);
    if (u->unsubmitted > 0) {
      unsigned pending = u->unsubmitted;
      pthread_mutex_unlock(&u->mu);
      RING_ACCESS_BEGIN();
      int rc = io_uring_submit(&u->ring);
      RING_ACCESS_END();
      pthread_mutex_lock(&u->mu);
      if (rc >= 0) {
        u->unsubmitted -= (unsigned)rc < pending ? (unsigned)rc : pending;
      } else if (rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
        /* Nothing of these will complete: stop counting them. */
        u->inflight -= u->unsubmitted;
        u->unsubmitted = 0;
        fail_ring(u, -rc, "submit");
      }
    }
    if (u->inflight == u->unsubmitted) {
      if (u->inflight == 0)
        pthread_cond_broadcast(&u->idle);
      if (u->unsubmitted == 0)
        pthread_cond_wait(&u->space, &u->mu);
      continue;
    }
    pthread_mutex_unlock(&u->mu);
    struct io_uring_cqe *cqe = NULL;
    RING_ACCESS_BEGIN();
    int rc = io_uring_wait_cqe(&u->ring, &cqe);
    RING_ACCESS_END();
    pthread_mutex_lock(&u->mu);
    if (rc < 0) {
      if (rc != -EINTR && rc != -EAGAIN) {
        /* The ring is broken: no completion will come. */
        fail_ring(u, -rc, "wait for a completion");
        u->inflight = u->unsubmitted = 0;
        pthread_cond_broadcast(&u->idle);
      }
      continue;
    }
    struct {
      uint64_t index;
      int res;
    } done[HARVEST_MAX];
    unsigned head, seen = 0;
    RING_ACCESS_BEGIN();
    io_uring_for_each_cqe(&u->ring, head, cqe) {
      if (seen == HARVEST_MAX)
        break; /* the rest on the next turn: wait_cqe returns at once */
      done[seen].index = io_uring_cqe_get_data64(cqe);
      done[seen].res = cqe->res;
      seen++;
    }
    io_uring_cq_advance(&u->ring, seen);
    RING_ACCESS_END();
    for (unsigned i = 0; i < seen; i++)
      complete(u, done[i].index, done[i].res);
    pthread_cond_broadcast(&u->ready);
    if (u->inflight == 0)
      pthread_cond_broadcast(&u->idle);
  }
  pthread_mutex_unlock(&u->mu);
  return NULL;
}
