#include "io/io_reader.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/map_guard.h"
#include "common/pread_full.h"
#include "common/url_shown.h"
#include "io/io_hints.h"
#include "io/io_select.h"

struct sl_io {
  sl_io_opts o;
  char name[256];
  sl_io_kind kind; /* MMAP, PREAD or URING */
  char why[320];
  sl_io_order_fn order;
  const void *order_ctx;
  uint64_t first, end;
  /* Cleared by stop while workers may still be in get (the loader stops
   * before it waits for them); order, first and end change only in start,
   * when no worker runs. */
  atomic_bool active;
  uint64_t ahead; /* mmap: WILLNEED this many positions ahead */
  /* mmap: sluice's SIGBUS handler is installed (checked each epoch); when
   * the application replaced it, reads go through pread instead. */
  atomic_bool guarded;
  uint8_t *map; /* mmap */
  size_t map_len;
  /* The dataset's files: o.files, or `one` built from o.fd. */
  sl_file_span one;
  sl_file_set single;
  const sl_file_set *set;
  sl_uring *uring;
  atomic_uint_fast64_t reads; /* counted only for o.inject */
};

/* Test hook (o.inject): whether this read is the one to fail. */
static bool inject_now(sl_io *io) {
  return io->o.inject.nth &&
         atomic_fetch_add(&io->reads, 1) + 1 == io->o.inject.nth;
}

static sl_status open_mmap(sl_io *io, sl_err *err) {
  if (io->o.file_size == 0)
    return SL_OK; /* nothing to map: every sample is empty */
  if (io->o.file_size > SIZE_MAX)
    return sl_err_set(err, SL_EIO, "%s: too large to map", io->name);
  if (io->o.files) { /* each file at its base in one reservation */
    sl_status st = sl_file_set_map(io->set, &io->map, &io->map_len, err);
    if (st != SL_OK)
      return sl_err_prefix(err, "%s: ", io->name);
  } else {
    io->map_len = (size_t)io->o.file_size;
    void *m = mmap(NULL, io->map_len, PROT_READ, MAP_SHARED, io->o.fd, 0);
    if (m == MAP_FAILED)
      return sl_err_errno(err, SL_EIO, errno, "%s: mmap of %zu bytes", io->name,
                          io->map_len);
    io->map = m;
  }
  sl_status st = sl_guard_install(err);
  if (st != SL_OK)
    return sl_err_prefix(err, "%s: ", io->name);
  atomic_store(&io->guarded, true);
  st = sl_hint_random(io->map, io->map_len, err);
  if (st != SL_OK)
    return sl_err_prefix(err, "%s: ", io->name);
  io->ahead = (uint64_t)io->o.readahead_batches * io->o.batch_size;
  return SL_OK;
}

static sl_status open_uring(sl_io *io, sl_err *err) {
  sl_uring_opts u = {.fd = io->o.fd,
                     .files = io->o.files,
                     .name = io->name,
                     .count = io->o.count,
                     .max_length = io->o.max_length,
                     .locate = io->o.locate,
                     .locate_ctx = io->o.locate_ctx,
                     .parts = io->o.parts,
                     .queue_depth = io->o.queue_depth,
                     .pool_bytes = io->o.pool_bytes,
                     .direct = io->o.direct,
                     .inject_init_errno = io->o.inject_uring_errno,
                     .inject = io->o.inject};
  return sl_uring_open(&io->uring, &u, err);
}

sl_status sl_io_open(sl_io **out, const sl_io_opts *o, sl_err *err) {
  *out = NULL;
  if (!o->locate)
    return sl_err_set(err, SL_EINVAL, "io: no sample locator");
  sl_io *io = calloc(1, sizeof *io);
  if (!io)
    return sl_err_set(err, SL_ENOMEM, "io: reader state");
  io->o = *o;
  snprintf(io->name, sizeof io->name, "%s", o->name ? o->name : "?");
  io->o.name = io->name;
  sl_status st = SL_OK;
  if (o->files) {
    io->set = o->files;
    io->o.file_size = o->files->end;
  } else {
    io->one = (sl_file_span){.fd = o->fd, .base = 0, .size = o->file_size};
    io->single = (sl_file_set){.f = &io->one, .n = 1, .end = o->file_size};
    io->set = &io->single;
  }

  uint64_t avail = o->mem_available;
  if ((o->kind == SL_IO_AUTO || o->kind == SL_IO_URING) && avail == 0) {
    st = sl_io_mem_budget(&avail, err);
    if (st != SL_OK)
      goto fail;
  }
  io->kind = sl_io_pick(o->kind, io->o.file_size, avail, o->auto_share, io->why,
                        sizeof io->why);
  sl_log_level level = SL_LOG_INFO;
  if (io->set->lazy && io->kind == SL_IO_MMAP) {
    /* Files opened per read (a folder of a million images) cannot all be
     * mapped: pread (or uring) opens each as it reads. */
    size_t l = strlen(io->why);
    snprintf(io->why + l, sizeof io->why - l,
             "; mmap cannot map files opened one per sample (an image "
             "folder): falling back to pread");
    if (o->kind != SL_IO_AUTO)
      level = SL_LOG_WARN;
    io->kind = SL_IO_PREAD;
  }
  if (o->kind == SL_IO_AUTO && io->kind == SL_IO_URING &&
      io->o.pool_bytes > avail / 4) {
    /* auto chose uring because memory is short: keep the pool to a quarter
     * of it (at least the largest sample) rather than fail on a default. */
    size_t need = (size_t)io->o.max_length + 3 * (size_t)SL_URING_ALIGN;
    io->o.pool_bytes = avail / 4 > need ? (size_t)(avail / 4) : need;
    char a[32];
    size_t l = strlen(io->why);
    snprintf(io->why + l, sizeof io->why - l,
             "; io.pool_size lowered to %s (a quarter of it)",
             sl_format_bytes(io->o.pool_bytes, a, sizeof a));
  }
  if (io->kind == SL_IO_URING && io->o.pool_bytes > avail) {
    char a[32], b[32];
    st = sl_err_set(err, SL_ECONFIG,
                    "%s: io.pool_size %s is more than the available memory "
                    "%s (MemAvailable or the cgroup limit): lower it",
                    io->name, sl_format_bytes(io->o.pool_bytes, a, sizeof a),
                    sl_format_bytes(avail, b, sizeof b));
    goto fail;
  }
  if (io->kind == SL_IO_URING) {
    sl_err e = {0};
    st = open_uring(io, &e);
    if (st == SL_EUNSUPPORTED) { /* no io_uring here: pread, say why */
      size_t l = strlen(io->why);
      snprintf(io->why + l, sizeof io->why - l,
               "; io_uring unavailable (%s): falling back to pread", e.msg);
      io->kind = SL_IO_PREAD;
      level = SL_LOG_WARN;
      st = SL_OK;
    } else if (st != SL_OK) {
      if (err)
        *err = e;
      goto fail;
    }
  }
  if (io->kind == SL_IO_MMAP && (st = open_mmap(io, err)) != SL_OK)
    goto fail;
  if (o->log) {
    char line[640];
    snprintf(line, sizeof line, "%s: reading with %s (%s)", io->name,
             sl_io_kind_name(io->kind), io->why);
    sl_text_hide_credentials(line); /* the dataset's URL, shown */
    o->log(o->log_user, level, line);
  }
  *out = io;
  return SL_OK;
fail:
  sl_io_close(io);
  return st;
}

void sl_io_close(sl_io *io) {
  if (!io)
    return;
  sl_uring_close(io->uring);
  if (io->map)
    munmap(io->map, io->map_len);
  free(io);
}

sl_io_kind sl_io_backend(const sl_io *io) {
  return io->kind;
}

const char *sl_io_why(const sl_io *io) {
  return io->why;
}

size_t sl_io_buffer_bytes(const sl_io *io) {
  return io->o.max_length; /* mmap: the guarded copy's destination */
}

/* The head of sample's payload to read first (0: the payload whole). */
static uint32_t part_head(const sl_io *io, uint64_t sample, uint32_t len) {
  uint32_t h = io->o.parts.head ? io->o.parts.head(io->o.parts.ctx, sample) : 0;
  return h < len ? h : 0; /* a head of the whole payload: read it whole */
}

/* The range after a head of n bytes (io_uring.h's sl_io_parts): rest's
 * answer, or [n, len) when it declines or answers outside the payload. */
static void part_rest(const sl_io_parts *pp, uint64_t sample,
                      const uint8_t *bytes, uint32_t n, uint32_t len,
                      uint32_t *off, uint32_t *plen) {
  if (!pp->rest(pp->ctx, sample, bytes, n, off, plen) || *off < n ||
      *off > len || *plen > len - *off)
    *off = n, *plen = len - n;
}

/* mmap: asks the kernel to read position seq's sample now (a payload read
 * in part: its head only). Advisory. */
static void hint(sl_io *io, uint64_t seq) {
  if (seq >= io->end)
    return;
  uint64_t i = io->order ? io->order(io->order_ctx, seq) : seq;
  if (i >= io->o.count)
    return;
  uint64_t off;
  uint32_t len;
  io->o.locate(io->o.locate_ctx, i, &off, &len);
  if (off > io->map_len || len > io->map_len - off)
    return;
  uint32_t h = part_head(io, i, len);
  (void)sl_hint_willneed(io->map + off, h ? h : len, NULL);
}

/* mmap: position seq's range after its head, once the head is in (its
 * hint went out `ahead` positions earlier): the head is read under the
 * guard, and a head that cannot be read hints nothing. Advisory. */
static void hint_rest(sl_io *io, uint64_t seq) {
  if (seq >= io->end || !atomic_load(&io->guarded))
    return;
  uint64_t i = io->order ? io->order(io->order_ctx, seq) : seq;
  if (i >= io->o.count)
    return;
  uint64_t off;
  uint32_t len;
  io->o.locate(io->o.locate_ctx, i, &off, &len);
  uint32_t h = part_head(io, i, len);
  uint8_t head[256];
  size_t at;
  if (!h || h > sizeof head || off > io->map_len || len > io->map_len - off ||
      !sl_guard_copy(head, io->map + off, h, &at))
    return;
  uint32_t po, pl;
  part_rest(&io->o.parts, i, head, h, len, &po, &pl);
  (void)sl_hint_willneed(io->map + off + po, pl, NULL);
}

sl_status sl_io_start_epoch(sl_io *io, sl_io_order_fn order,
                            const void *order_ctx, uint64_t first, uint64_t end,
                            sl_err *err) {
  sl_io_stop(io);
  if (io->kind == SL_IO_URING)
    return sl_uring_start(io->uring, order, order_ctx, first, end, err);
  if (first > end)
    return sl_err_set(err, SL_EINVAL, "%s: epoch positions %llu..%llu",
                      io->name, (unsigned long long)first,
                      (unsigned long long)end);
  if (io->kind == SL_IO_MMAP) {
    /* A shrunk file turns a map access into SIGBUS: check once an epoch. */
    for (size_t k = 0; k < io->set->n; k++) {
      const sl_file_span *f = &io->set->f[k];
      struct stat sb;
      char name[512];
      if (io->o.files)
        sl_file_set_name(io->set, k, name, sizeof name);
      else
        snprintf(name, sizeof name, "%s", io->name);
      if (fstat(f->fd, &sb) != 0)
        return sl_err_errno(err, SL_EIO, errno, "%s: fstat", name);
      if ((uint64_t)sb.st_size != f->size)
        return sl_err_set(err, SL_EIO,
                          "%s: the file changed size since open (%llu -> "
                          "%llu bytes): reopen the loader",
                          name, (unsigned long long)f->size,
                          (unsigned long long)sb.st_size);
    }
    bool ready = sl_guard_ready();
    if (atomic_exchange(&io->guarded, ready) && !ready && io->o.log)
      io->o.log(io->o.log_user, SL_LOG_WARN,
                "loader.io = mmap: the application replaced sluice's SIGBUS "
                "handler; falling back to pread so that a truncated file is an "
                "error, not the death of the process");
  }
  io->order = order;
  io->order_ctx = order_ctx;
  io->first = first;
  io->end = end;
  atomic_store(&io->active, true);
  if (io->kind == SL_IO_MMAP)
    for (uint64_t s = first; s < first + 2 * io->ahead && s < end; s++) {
      hint(io, s);
      if (s < first + io->ahead && io->o.parts.head)
        hint_rest(io, s);
    }
  return SL_OK;
}

void sl_io_stop(sl_io *io) {
  if (io->kind == SL_IO_URING)
    sl_uring_stop(io->uring);
  atomic_store(&io->active, false);
}

static sl_status read_full(sl_io *io, uint64_t sample, uint64_t off,
                           uint32_t len, uint8_t *buf, sl_err *err) {
  size_t done;
  long k = 0;
  int rc = sl_file_set_pread(io->set, buf, len, off, &done, &k);
  if (len && inject_now(io)) { /* test hook */
    rc = io->o.inject.err ? -1 : 1;
    errno = io->o.inject.err;
    done = len / 2;
  }
  char name[512];
  if (io->o.files && k >= 0) { /* name the file and the offset in it */
    char f[400];
    sl_file_set_name(io->set, (size_t)k, f, sizeof f);
    snprintf(name, sizeof name, "%s (offset %llu in it)", f,
             (unsigned long long)(off - io->set->f[k].base));
  } else {
    snprintf(name, sizeof name, "%s", io->name);
  }
  if (rc < 0)
    return sl_err_errno(
        err, SL_EIO, errno, "%s: sample %llu (offset %llu, %u bytes): read",
        name, (unsigned long long)sample, (unsigned long long)off, len);
  if (rc > 0)
    return sl_err_set(err, SL_EIO,
                      "%s: sample %llu (offset %llu, %u bytes): the file "
                      "ends at byte %llu, before the sample does; was it "
                      "truncated? re-create it with `sluice pack`",
                      name, (unsigned long long)sample, (unsigned long long)off,
                      len, (unsigned long long)(off + done));
  return SL_OK;
}

/* mmap: the sample's bytes copied out of the map under the SIGBUS guard
 * (common/map_guard.h): a page past a shrunk file's end, or one the disk cannot
 * read, is SL_EIO for this sample instead of the death of the process. The
 * copy costs a memcpy of the payload; the decode that follows reads it
 * from the worker's buffer, which the map cannot pull away. */
static sl_status copy_mapped(sl_io *io, uint64_t sample, uint64_t off,
                             uint32_t len, uint8_t *buf, sl_err *err) {
  size_t at;
  bool ok = sl_guard_copy(buf, io->map + off, len, &at);
  if (ok && len && inject_now(io)) { /* test hook: as a fault mid-copy */
    ok = false;
    at = len / 2;
  }
  if (ok)
    return SL_OK;
  struct stat sb;
  long k = sl_file_set_find(io->set, off, len);
  int fd = k >= 0 ? io->set->f[k].fd : io->o.fd;
  char name[512];
  if (io->o.files && k >= 0) {
    char f[400];
    sl_file_set_name(io->set, (size_t)k, f, sizeof f);
    snprintf(name, sizeof name, "%s (offset %llu in it)", f,
             (unsigned long long)(off - io->set->f[k].base));
  } else {
    snprintf(name, sizeof name, "%s", io->name);
  }
  long long now = fstat(fd, &sb) == 0 ? (long long)sb.st_size : -1;
  return sl_err_set(
      err, SL_EIO,
      "%s: sample %llu (offset %llu, %u bytes): the mapped "
      "page at byte %llu cannot be read (SIGBUS): the file is "
      "now %lld bytes, was %llu at open; was it truncated or "
      "rewritten in place, or did the disk fail? re-create it "
      "with `sluice pack` and reopen the loader",
      name, (unsigned long long)sample, (unsigned long long)off, len,
      (unsigned long long)(off + at), now,
      (unsigned long long)(k >= 0 ? io->set->f[k].size : io->o.file_size));
}

/* Bytes [rel, rel + n) of the payload at off into buf + rel: out of the
 * map under the guard, else by pread. */
static sl_status read_span(sl_io *io, uint64_t sample, uint64_t off,
                           uint32_t rel, uint32_t n, uint8_t *buf,
                           sl_err *err) {
  if (io->kind == SL_IO_MMAP && atomic_load(&io->guarded))
    return copy_mapped(io, sample, off + rel, n, buf + rel, err);
  return read_full(io, sample, off + rel, n, buf + rel, err);
}

sl_status sl_io_read(sl_io *io, uint64_t sample, void *buf, size_t cap,
                     const uint8_t **data, size_t *len, sl_err *err) {
  *data = NULL;
  *len = 0;
  if (sample >= io->o.count)
    return sl_err_set(err, SL_EINVAL, "%s: sample %llu of %llu", io->name,
                      (unsigned long long)sample,
                      (unsigned long long)io->o.count);
  uint64_t off;
  uint32_t l;
  io->o.locate(io->o.locate_ctx, sample, &off, &l);
  if (io->kind == SL_IO_MMAP) {
    if (off > io->map_len || l > io->map_len - off)
      return sl_err_set(err, SL_EIO,
                        "%s: sample %llu (offset %llu, %u bytes) lies past "
                        "the mapped %zu bytes",
                        io->name, (unsigned long long)sample,
                        (unsigned long long)off, l, io->map_len);
  }
  if (cap < l || (!buf && l))
    return sl_err_set(err, SL_EINVAL,
                      "%s: sample %llu: buffer of %zu bytes < %u", io->name,
                      (unsigned long long)sample, cap, l);
  /* A payload read in part: its head, then the one range rest gives, each
   * at its own offset of buf. */
  uint32_t h = part_head(io, sample, l), po = 0, pl = l;
  if (h)
    pl = h;
  sl_status st = read_span(io, sample, off, 0, pl, buf, err);
  if (st == SL_OK && h) {
    part_rest(&io->o.parts, sample, buf, h, l, &po, &pl);
    st = read_span(io, sample, off, po, pl, buf, err);
  }
  if (st != SL_OK)
    return st;
  *data = l ? buf : (const uint8_t *)"";
  *len = l;
  return SL_OK;
}

/* mmap and pread: position seq's checks and read-ahead hint; its sample. */
static sl_status position(sl_io *io, uint64_t seq, uint64_t *sample,
                          sl_err *err) {
  if (!atomic_load(&io->active))
    return sl_err_set(err, SL_ESTATE, "%s: no epoch started", io->name);
  if (seq < io->first || seq >= io->end)
    return sl_err_set(
        err, SL_EINVAL, "%s: position %llu outside the epoch's %llu..%llu",
        io->name, (unsigned long long)seq, (unsigned long long)io->first,
        (unsigned long long)io->end - 1);
  *sample = io->order ? io->order(io->order_ctx, seq) : seq;
  if (io->kind == SL_IO_MMAP && io->ahead) {
    /* A payload read in part: the head two distances ahead, its range
     * one distance ahead (the head is in by then). */
    hint(io, seq + (io->o.parts.head ? 2 : 1) * io->ahead);
    if (io->o.parts.head)
      hint_rest(io, seq + io->ahead);
  }
  return SL_OK;
}

sl_status sl_io_skip(sl_io *io, uint64_t seq, sl_err *err) {
  uint64_t sample = 0;
  if (io->kind == SL_IO_URING)
    return sl_err_set(err, SL_EINVAL,
                      "%s: uring reads every position (get, then put)",
                      io->name);
  return position(io, seq, &sample, err);
}

sl_status sl_io_get(sl_io *io, uint64_t seq, void *buf, size_t cap,
                    const uint8_t **data, size_t *len, sl_err *err) {
  *data = NULL;
  *len = 0;
  if (io->kind == SL_IO_URING)
    return sl_uring_get(io->uring, seq, data, len, err);
  uint64_t sample = 0; /* set by position on SL_OK (gcc -O3 cannot tell) */
  sl_status st = position(io, seq, &sample, err);
  if (st != SL_OK)
    return st;
  if (sample >= io->o.count)
    return sl_err_set(err, SL_EINVAL,
                      "%s: epoch position %llu is sample %llu, but the file "
                      "has %llu samples",
                      io->name, (unsigned long long)seq,
                      (unsigned long long)sample,
                      (unsigned long long)io->o.count);
  return sl_io_read(io, sample, buf, cap, data, len, err);
}

void sl_io_put(sl_io *io, uint64_t seq) {
  if (io->kind == SL_IO_URING)
    sl_uring_put(io->uring, seq);
}

void sl_io_get_stats(sl_io *io, sl_uring_stats *out) {
  if (io->kind == SL_IO_URING)
    sl_uring_get_stats(io->uring, out);
  else
    *out = (sl_uring_stats){0};
}
