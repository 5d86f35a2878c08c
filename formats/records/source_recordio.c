/* Indexing MXNet RecordIO files of image records (formats/records/recordio.h):
 * im2rec's .rec (with its .idx) and InsightFace's face sets.
 *
 * At open, one file at a time (sl_rec_file: a source of many shards calls
 * these per shard): the records' offsets come from the .idx beside the file
 * (`PREFIX.idx` for `PREFIX.rec`; lines `key<TAB>offset` as
 * MXIndexedRecordIO writes them, in their order; read whole, at most
 * SL_RECIO_IDX_MAX bytes; at a URL, fetched beside the shard: see
 * source_rec_remote.c) or, without one, from a
 * walk of the framing; then each record is walked from its offset, its
 * IRHeader parsed and its image's header sniffed. A whole record's index
 * entry points at the image file inside it, so reads after open fetch the
 * image and nothing else. A record the writer split into parts (its payload
 * held the magic at a 4-byte aligned offset) is not contiguous: its entry
 * spans the parts from the first header, and the workers join them into
 * their scratch (sl_source_unfilter; 16 bytes a multi-part record in
 * src->joins). Opening joins each such record once, in a buffer of the
 * largest one's size (bounded by the file's size), freed before open
 * returns.
 *
 * Labels: IRHeader flag 0: its label, which must be an integer; flag K > 0:
 * the K float labels are the sample's targets (K must be the same for
 * every sample) and the first, when an integer, its label (else -1). Plus
 * dataset.label_offset. Records without image bytes (InsightFace's header
 * and identity records) are not samples: skipped and counted. */
#include "formats/core/source_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/map_guard.h"
#include "formats/core/layout.h"
#include "formats/records/recordio.h"

/* ---- offsets --------------------------------------------------------------
 */

typedef struct u64vec {
  uint64_t *v;
  uint64_t n, cap;
} u64vec;

static int push(u64vec *a, uint64_t x) {
  if (a->n == a->cap) {
    uint64_t cap = a->cap ? a->cap * 2 : 1024;
    uint64_t *v = cap > SIZE_MAX / 8 ? NULL : realloc(a->v, (size_t)cap * 8);
    if (!v)
      return -1;
    a->v = v;
    a->cap = cap;
  }
  a->v[a->n++] = x;
  return 0;
}

/* The offsets an .idx lists (idx[0, len), named what in messages). */
static sl_status parse_idx(const sl_rec_file *f, const char *what,
                           const uint8_t *idx, size_t len, u64vec *out,
                           sl_err *err) {
  size_t pos = 0;
  uint64_t line = 0, v = 0;
  int r;
  while ((r = sl_recio_idx_next(idx, len, &pos, &line, &v)) == 1)
    if (push(out, v) != 0)
      return sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " offsets",
                        what, out->n + 1);
  if (r < 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: line %" PRIu64 " is not `key<TAB>offset` of at "
                      "most %u bytes (the index MXIndexedRecordIO writes "
                      "beside %s)",
                      what, line, SL_RECIO_IDX_LINE, f->path);
  return SL_OK;
}

/* A local .idx file read whole, then parsed. Memory: its bytes (at most
 * SL_RECIO_IDX_MAX) while parsing. */
static sl_status read_idx(const sl_rec_file *f, const char *idx_path,
                          u64vec *out, sl_err *err) {
  int fd = open(idx_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s", idx_path);
  struct stat sb;
  sl_status st = SL_OK;
  if (fstat(fd, &sb) != 0)
    st = sl_err_errno(err, SL_EIO, errno, "%s: stat", idx_path);
  else if ((uint64_t)sb.st_size > SL_RECIO_IDX_MAX)
    st = sl_err_set(err, SL_ETOOBIG,
                    "%s: an index of %lld bytes (at most %llu read beside a "
                    "RecordIO file)",
                    idx_path, (long long)sb.st_size, SL_RECIO_IDX_MAX);
  size_t n = st == SL_OK ? (size_t)sb.st_size : 0, have = 0;
  uint8_t *buf = st == SL_OK ? malloc(n ? n : 1) : NULL;
  if (st == SL_OK && !buf)
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory for %zu bytes", idx_path, n);
  while (st == SL_OK && have < n) {
    ssize_t r = pread(fd, buf + have, n - have, (off_t)have);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      st = sl_err_errno(err, SL_EIO, r < 0 ? errno : EIO, "%s: read", idx_path);
    else
      have += (size_t)r;
  }
  close(fd);
  if (st == SL_OK)
    st = parse_idx(f, idx_path, buf, n, out, err);
  free(buf);
  return st;
}

/* The framing walked from offset 0, under common/map_guard.h's guard
 * (guarded below): what it allocates is in c->a, which the caller frees
 * whether the walk returned or a fault jumped out of it. */
typedef struct offsets_call {
  sl_source *src;
  const sl_rec_file *f;
  u64vec a;
  sl_err *err;
  sl_status st;
} offsets_call;

static void walk_offsets(void *ctx) {
  offsets_call *c = ctx;
  const sl_rec_file *f = c->f;
  uint64_t pos = 0;
  char why[200];
  while (c->st == SL_OK && pos < f->size) { /* 8 bytes read a part */
    sl_recio_rec r;
    const char *bad = sl_recio_walk(f->map + pos, f->size - pos, &r, NULL, 0,
                                    why, sizeof why);
    if (bad && !c->src->on_bad) {
      c->st = sl_err_set(c->err, SL_EFORMAT,
                         "%s: RecordIO record %" PRIu64 " at offset %" PRIu64
                         ": %s",
                         f->path, c->a.n, pos, bad);
      break;
    }
    if (push(&c->a, pos) != 0)
      c->st =
          sl_err_set(c->err, SL_ENOMEM, "%s: no memory for %" PRIu64 " offsets",
                     f->path, c->a.n);
    if (bad) /* verify: the rest cannot be framed; append reports it */
      break;
    pos += r.next;
  }
}

/* fn(ctx) run with the faults on f's mapping caught: a file that shrinks
 * while it is walked (copied over, truncated) is SL_EIO naming it and the
 * offset, not the death of the process by SIGBUS. *st is fn's status. */
static sl_status guarded(const sl_rec_file *f, void (*fn)(void *), void *ctx,
                         const sl_status *st, const char *pass, sl_err *err) {
  if (f->size == 0) {
    fn(ctx);
    return *st;
  }
  sl_status g = sl_guard_install(err);
  if (g != SL_OK)
    return g;
  size_t at = 0;
  if (!sl_guard_call(fn, ctx, f->map, (size_t)f->size, &at))
    return sl_err_set(err, SL_EIO,
                      "%s: offset %zu cannot be read (SIGBUS) "
                      "while %s: the file shrank (truncated or copied over) "
                      "since it was opened, or a disk error; it was %" PRIu64
                      " bytes",
                      f->path, at, pass, f->size);
  return *st;
}

/* The offsets: from the .idx's bytes (idx_path reads a local one when
 * idx is NULL) or a walk of the framing. */
static sl_status offsets(sl_source *src, const sl_rec_file *f,
                         const char *idx_path, const uint8_t *idx,
                         size_t idx_len, uint64_t **out, uint64_t *records,
                         sl_err *err) {
  offsets_call c = {src, f, {0}, err, SL_OK};
  sl_status st;
  *out = NULL;
  *records = 0;
  if (idx)
    st = parse_idx(f, idx_path, idx, idx_len, &c.a, err);
  else if (idx_path)
    st = read_idx(f, idx_path, &c.a, err);
  else
    st = guarded(f, walk_offsets, &c, &c.st, "its RecordIO records were framed",
                 err);
  if (st != SL_OK) {
    free(c.a.v);
    return st;
  }
  *out = c.a.v;
  *records = c.a.n;
  return SL_OK;
}

sl_status sl_recordio_offsets(sl_source *src, const sl_rec_file *f,
                              const char *idx_path, uint64_t **out,
                              uint64_t *records, sl_err *err) {
  return offsets(src, f, idx_path, NULL, 0, out, records, err);
}

sl_status sl_recordio_offsets_in(sl_source *src, const sl_rec_file *f,
                                 const char *idx_name, const uint8_t *idx,
                                 size_t idx_len, uint64_t **out,
                                 uint64_t *records, sl_err *err) {
  return offsets(src, f, idx ? idx_name : NULL, idx, idx_len, out, records,
                 err);
}

/* ---- records --------------------------------------------------------------
 */

/* A float label as a class index: an integer in int32. */
static bool class_index(float v, int64_t *out) {
  if (!isfinite(v) || floorf(v) != v || v < -2147483648.0f ||
      v >= 2147483648.0f)
    return false;
  *out = (int64_t)v;
  return true;
}

typedef struct rio_walk {
  sl_source *src;
  const sl_rec_file *f;
  uint64_t capacity; /* index entries allocated */
  uint8_t *tmp;      /* a multi-part record joined */
  size_t tmp_cap;
  uint64_t joins_cap;
  bool width_known;
} rio_walk;

/* Labels and targets of sample i from its IRHeader; NULL or a reason. */
static const char *take_labels(rio_walk *w, uint64_t i, const uint8_t *pl,
                               const sl_irheader *h, char *why, size_t cap) {
  sl_source *src = w->src;
  int64_t label = -1;
  bool from_file = false;
  if (!w->width_known) { /* the first sample fixes the width */
    w->width_known = true;
    if (h->flag > SL_TARGETS_MAX) {
      snprintf(why, cap, "%" PRIu32 " float labels (at most %u)", h->flag,
               (unsigned)SL_TARGETS_MAX);
      return why;
    }
    /* Rows come from the index (or the files' records): bounded by the
     * files' bytes, as each row's labels are in a sound file. */
    if (sl_source_alloc_targets(src, w->capacity, h->flag,
                                sl_source_bytes_held(src), why, cap) != 0)
      return why;
  } else if (h->flag != src->target_width) {
    if (h->flag == src->targets_refused)
      snprintf(why, cap,
               "%" PRIu32 " float labels, not read: the first sample's were "
               "refused",
               h->flag);
    else
      snprintf(why, cap,
               "IRHeader flag %" PRIu32 ": %" PRIu32 " float labels where the "
               "first sample has %" PRIu32 " (every sample must have the same "
               "count)",
               h->flag, h->flag, src->target_width);
    return why;
  }
  if (h->flag == 0) {
    if (!class_index(h->label, &label)) {
      snprintf(why, cap, "IRHeader label %g is not a class index (an integer)",
               (double)h->label);
      return why;
    }
    from_file = true;
  } else {
    float *t = src->targets + i * src->target_width;
    for (uint32_t q = 0; q < h->flag; q++)
      t[q] = sl_irheader_label(pl, q);
    from_file = class_index(t[0], &label);
    if (!from_file)
      label = -1;
  }
  if (from_file) {
    label += src->label_offset;
    if (label < -1 || label > INT32_MAX) {
      snprintf(why, cap,
               "label %" PRId64 " (with dataset.label_offset %" PRId32
               ") is outside [-1, 2^31)",
               label, src->label_offset);
      return why;
    }
  }
  src->index[i].label = (int32_t)label;
  return NULL;
}

static int add_join(rio_walk *w, uint64_t i, uint64_t skip, uint64_t bytes) {
  sl_source *src = w->src;
  if (src->njoins == w->joins_cap) {
    uint64_t cap = w->joins_cap ? w->joins_cap * 2 : 16;
    sl_recio_join *j = realloc(src->joins, (size_t)cap * sizeof *j);
    if (!j)
      return -1;
    src->joins = j;
    w->joins_cap = cap;
  }
  src->joins[src->njoins++] =
      (sl_recio_join){i, (uint32_t)skip, (uint32_t)bytes};
  return 0;
}

/* The record at off: its sample appended, or skipped without image bytes.
 * *fatal gets an error that is not the record's (no memory). */
static sl_status take_record(rio_walk *w, uint64_t k, uint64_t off,
                             uint64_t limit, sl_err *err) {
  sl_source *src = w->src;
  const sl_rec_file *f = w->f;
  char why[300], where[600];
  sl_rec_where(src, f, k, off, where, sizeof where);
  const char *bad = NULL;
  sl_recio_rec r = {0};
  sl_irheader h = {0};
  const uint8_t *pl = NULL;
  if (off >= f->size) {
    snprintf(why, sizeof why,
             "offset past the end of the file (%" PRIu64 " bytes)", f->size);
    bad = why;
  } else if (limit <= off) {
    snprintf(why, sizeof why, "offset listed twice in the index");
    bad = why;
  } else if (!(bad = sl_recio_walk(f->map + off, limit - off, &r, NULL, 0, why,
                                   sizeof why))) {
    if (r.parts == 1) {
      pl = f->map + off + r.data;
    } else {
      if (r.joined > w->tmp_cap) {
        uint8_t *t = r.joined > SIZE_MAX ? NULL : realloc(w->tmp, r.joined);
        if (!t)
          return sl_err_set(err, SL_ENOMEM,
                            "%s: %s: no memory to join a multi-part record of "
                            "%" PRIu64 " bytes",
                            src->path, where, r.joined);
        w->tmp = t;
        w->tmp_cap = (size_t)r.joined;
      }
      bad = sl_recio_walk(f->map + off, limit - off, &r, w->tmp, w->tmp_cap,
                          why, sizeof why);
      pl = w->tmp;
    }
  }
  if (!bad)
    bad = sl_irheader_parse(pl, (size_t)r.joined, &h, why, sizeof why);
  if (!bad && r.joined == h.bytes) {
    src->skipped++; /* no image: InsightFace's header/identity records */
    return SL_OK;
  }
  uint64_t i = src->count++;
  sl_sample_info *e = &src->index[i];
  uint64_t ilen = r.joined - h.bytes;
  if (!bad && (ilen > UINT32_MAX || r.span > UINT32_MAX)) {
    snprintf(why, sizeof why, "record of %" PRIu64 " bytes (at most 4 GiB)",
             r.span);
    bad = why;
  }
  if (!bad)
    bad = sl_source_take_image(pl + h.bytes, (size_t)ilen,
                               f->base + off + r.data + h.bytes, e, why,
                               sizeof why);
  if (!bad)
    bad = take_labels(w, i, pl, &h, why, sizeof why);
  if (!bad && r.parts > 1) { /* the entry spans the parts */
    e->offset = f->base + off;
    e->length = (uint32_t)r.span;
    if (add_join(w, i, h.bytes, ilen) != 0)
      return sl_err_set(err, SL_ENOMEM,
                        "%s: no memory for %" PRIu64 " multi-part records",
                        src->path, src->njoins + 1);
    if (r.joined > src->join_scratch)
      src->join_scratch = r.joined;
  }
  if (bad) {
    memset(e, 0, sizeof *e);
    return sl_source_bad_entry(src, i, where, bad, err);
  }
  return sl_source_check_entry(src, i, where, err);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The first index of v[0, n) not below x. */
static uint64_t lower_bound(const uint64_t *v, uint64_t n, uint64_t x) {
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (v[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The records walked in the index's order, under the guard: the sorted
 * offsets and the join buffer live in the call (freed by the caller), the
 * rest in src. */
typedef struct append_call {
  rio_walk w;
  const uint64_t *offsets;
  uint64_t *sorted, records;
  sl_err *err;
  sl_status st;
} append_call;

static void walk_records(void *ctx) {
  append_call *c = ctx;
  const sl_rec_file *f = c->w.f;
  for (uint64_t k = 0; k < c->records && c->st == SL_OK; k++) {
    uint64_t p = lower_bound(c->sorted, c->records, c->offsets[k]);
    uint64_t limit = p + 1 < c->records ? c->sorted[p + 1] : f->size;
    c->st = take_record(&c->w, k, c->offsets[k],
                        limit < f->size ? limit : f->size, c->err);
  }
}

sl_status sl_recordio_append(sl_source *src, const sl_rec_file *f,
                             const uint64_t *offsets, uint64_t records,
                             uint64_t capacity, sl_err *err) {
  append_call c = {
      {src, f, capacity, NULL, 0, src->njoins, src->count > 0 || src->targets},
      offsets,
      NULL,
      records,
      err,
      SL_OK};
  /* Each record is walked only up to the next offset listed (an .idx may
   * list them in any order): records that overlap are damage, and the
   * walks read each byte of the file once at most, however hostile the
   * index. Memory: a sorted copy of the offsets while appending. */
  c.sorted = malloc(records ? (size_t)records * 8 : 1);
  if (!c.sorted)
    return sl_err_set(err, SL_ENOMEM,
                      "%s: no memory for %" PRIu64 " record offsets", f->path,
                      records);
  memcpy(c.sorted, offsets, (size_t)records * 8);
  qsort(c.sorted, (size_t)records, 8, cmp_u64);
  sl_status st = guarded(f, walk_records, &c, &c.st,
                         "its RecordIO records were indexed", err);
  free(c.sorted);
  free(c.w.tmp);
  return st;
}

const sl_recio_join *sl_recio_find_join(const sl_source *src, uint64_t i) {
  uint64_t lo = 0, hi = src->njoins;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (src->joins[mid].sample == i)
      return &src->joins[mid];
    if (src->joins[mid].sample < i)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* PREFIX.idx beside PREFIX.rec (FILE.idx beside another name), when it is
 * there. */
sl_status sl_recordio_idx_beside(const char *path, char *buf, size_t cap,
                                 bool *found, sl_err *err) {
  if (sl_recio_idx_name(path, buf, cap) != 0)
    return sl_err_set(err, SL_EINVAL, "%s: path too long", path);
  struct stat sb;
  *found = stat(buf, &sb) == 0 && S_ISREG(sb.st_mode);
  if (!*found && errno != ENOENT && errno != ENOTDIR)
    return sl_err_errno(err, SL_EIO, errno, "%s", buf);
  return SL_OK;
}

sl_status sl_source_index_recordio(sl_source *src, sl_err *err) {
  sl_rec_file f = {src->path, src->map, src->file_size, 0};
  src->entries = SL_ENTRIES_IMAGES; /* not sluice's: no repack hint */
  char idx[PATH_MAX];
  bool has_idx = false;
  sl_status st =
      sl_recordio_idx_beside(src->path, idx, sizeof idx, &has_idx, err);
  uint64_t *off = NULL, n = 0;
  if (st == SL_OK)
    st = sl_recordio_offsets(src, &f, has_idx ? idx : NULL, &off, &n, err);
  if (st == SL_OK && n == 0)
    st = sl_err_set(err, SL_EFORMAT, "%s: a RecordIO file of no records%s%s",
                    src->path, has_idx ? " (by its index " : "",
                    has_idx ? idx : "");
  if (st == SL_OK)
    st = sl_source_alloc_index(src, n, err);
  if (st == SL_OK) {
    src->count = 0; /* samples appended so far */
    st = sl_recordio_append(src, &f, off, n, n, err);
  }
  if (st == SL_OK && src->count == 0)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: no image records among its %" PRIu64 " records",
                    src->path, n);
  free(off);
  return st;
}

sl_status sl_recio_unfilter(const sl_source *src, uint64_t i, const uint8_t *in,
                            size_t len, uint8_t *scratch, const uint8_t **out,
                            size_t *out_len, sl_err *err) {
  const sl_recio_join *j = sl_recio_find_join(src, i);
  if (!j) {
    *out = in;
    *out_len = len;
    return SL_OK;
  }
  sl_recio_rec r;
  char why[200];
  const char *bad = sl_recio_walk(in, len, &r, scratch,
                                  (size_t)src->join_scratch, why, sizeof why);
  if (!bad && r.joined < (uint64_t)j->skip + j->bytes) {
    snprintf(why, sizeof why, "joins to %" PRIu64 " bytes, not %" PRIu64,
             r.joined, (uint64_t)j->skip + j->bytes);
    bad = why;
  }
  if (bad)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: sample %" PRIu64 ": multi-part RecordIO record at "
                      "offset %" PRIu64 ": %s (changed since open?)",
                      src->path, i, src->index[i].offset, bad);
  *out = scratch + j->skip;
  *out_len = j->bytes;
  return SL_OK;
}
