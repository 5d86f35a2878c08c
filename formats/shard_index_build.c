/* Building a sharded dataset's index (formats/shard_index.h) from the
 * committed shards in a folder: `sluice index`, sl_dataset_index and
 * Python's sluice.index. Each shard is opened as the dataset it is (which
 * checks it), its settings compared with the first shard's, its index
 * entries gathered; the index is written under a temporary name and
 * renamed, so a reader sees the old index or the new one. Re-running it
 * after more shards were written adds them; a shard whose size and first
 * bytes are as the old index lists them keeps its whole-file checksum
 * instead of being read again.
 *
 * Memory: the index being built (24 + 4 × targets bytes a sample, 26 a
 * box, the names), plus one 1 MiB read buffer. */
#include "formats/shard_index_build.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/endian.h"
#include "formats/boxes.h"
#include "formats/crc32c.h"
#include "formats/shard_index.h"
#include "formats/source.h"

/* A growing byte buffer: the sections as they are gathered. */
typedef struct bytes {
  uint8_t *p;
  size_t len, cap;
} bytes;

static uint8_t *reserve(bytes *b, size_t n) {
  if (!b->p || b->cap - b->len < n) { /* allocated even for n = 0 */
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < n) {
      if (cap > SIZE_MAX / 2)
        return NULL;
      cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p)
      return NULL;
    b->p = p;
    b->cap = cap;
  }
  uint8_t *at = b->p + b->len;
  b->len += n;
  return at;
}

static bool shard_named(const char *name) {
  static const char *const ext[] = {".lmdb", ".mdb", ".h5", ".hdf5"};
  size_t n = strlen(name);
  if (name[0] == '.') /* writers' temporary files, and hidden ones */
    return false;
  for (size_t k = 0; k < sizeof ext / sizeof ext[0]; k++) {
    size_t e = strlen(ext[k]);
    if (n > e && strcmp(name + n - e, ext[k]) == 0)
      return true;
  }
  return false;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The shard files of dir (regular files by a shard's extension, not
 * hidden), sorted by name. */
static sl_status list_shards(const char *dir, char ***out, size_t *n,
                             sl_err *err) {
  *out = NULL;
  *n = 0;
  DIR *d = opendir(dir);
  if (!d)
    return sl_err_errno(err, SL_EIO, errno, "%s", dir);
  char **v = NULL;
  size_t len = 0, cap = 0;
  sl_status st = SL_OK;
  for (;;) {
    errno = 0;
    struct dirent *e = readdir(d);
    if (!e) {
      if (errno)
        st = sl_err_errno(err, SL_EIO, errno, "%s: readdir", dir);
      break;
    }
    if (!shard_named(e->d_name))
      continue;
    struct stat sb;
    if (fstatat(dirfd(d), e->d_name, &sb, 0) != 0) {
      if (errno == ENOENT) /* renamed or deleted while listed */
        continue;
      st = sl_err_errno(err, SL_EIO, errno, "%s/%s", dir, e->d_name);
      break;
    }
    if (!S_ISREG(sb.st_mode))
      continue;
    if (len == cap) {
      size_t c = cap ? cap * 2 : 64;
      char **w = realloc(v, c * sizeof *v);
      if (!w) {
        st = sl_err_set(err, SL_ENOMEM, "%s: no memory for %zu names", dir, c);
        break;
      }
      v = w;
      cap = c;
    }
    if (!(v[len] = strdup(e->d_name))) {
      st = sl_err_set(err, SL_ENOMEM, "%s: no memory", dir);
      break;
    }
    len++;
  }
  closedir(d);
  if (st != SL_OK) {
    for (size_t k = 0; k < len; k++)
      free(v[k]);
    free(v);
    return st;
  }
  if (len)
    qsort(v, len, sizeof *v, by_name);
  *out = v;
  *n = len;
  return SL_OK;
}

/* What the shards must share, from the first one. */
typedef struct shared {
  const char *first; /* its name */
  uint32_t target_width;
  char *writer;
  bool have;
} shared;

typedef struct build {
  const char *dir;
  const sl_shard_index *old; /* the index there before (NULL: none) */
  const sl_shard_rec **old_sorted;
  shared must;
  bytes recs, text_names, classes, samples, targets, box_counts, boxes;
  uint32_t nclasses, nlevels, flags;
  uint64_t count, box_total, level_images[SL_LEVELS_MAX],
      level_bytes[SL_LEVELS_MAX];
  sl_shard_index_report *rep;
} build;

static int rec_by_name(const void *a, const void *b) {
  return strcmp((*(const sl_shard_rec *const *)a)->name,
                (*(const sl_shard_rec *const *)b)->name);
}

static const sl_shard_rec *old_rec(const build *b, const char *name) {
  if (!b->old)
    return NULL;
  sl_shard_rec key = {.name = name};
  const sl_shard_rec *kp = &key;
  const sl_shard_rec **r = bsearch(&kp, b->old_sorted, (size_t)b->old->nshards,
                                   sizeof *b->old_sorted, rec_by_name);
  return r ? *r : NULL;
}

/* The class names of src, checked against those gathered so far: where
 * both name a class the names are equal; the longer table is kept. */
static sl_status merge_classes(build *b, const sl_source *src, const char *path,
                               sl_err *err) {
  uint32_t k = sl_source_class_count(src);
  size_t pos = 0;
  for (uint32_t c = 0; c < k; c++) {
    const char *mine = sl_source_class_name(src, c);
    size_t n = strlen(mine) + 1;
    if (c < b->nclasses) {
      const char *have = (const char *)b->classes.p + pos;
      if (strcmp(have, mine) != 0)
        return sl_err_set(err, SL_EFORMAT,
                          "%s: class %" PRIu32 " is \"%s\", \"%s\" in the "
                          "shards before it (%s): shards must share their "
                          "class names",
                          path, c, mine, have, b->must.first);
      pos += strlen(have) + 1;
      continue;
    }
    uint8_t *at = reserve(&b->classes, n);
    if (!at)
      return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
    memcpy(at, mine, n);
    b->nclasses = c + 1;
  }
  return SL_OK;
}

static sl_status check_shared(build *b, const sl_source *src, const char *path,
                              const char *name, sl_err *err) {
  uint32_t tw = sl_source_target_width(src);
  const char *writer = sl_source_writer_settings(src);
  if (!b->must.have) {
    b->must = (shared){.first = name, .target_width = tw, .have = true};
    if (!(b->must.writer = strdup(writer)))
      return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  } else if (tw != b->must.target_width)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: %" PRIu32 " targets a sample, %s has %" PRIu32
                      ": shards must share their target width",
                      path, tw, b->must.first, b->must.target_width);
  else if (strcmp(writer, b->must.writer) != 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: written with settings \"%.200s\", %s with "
                      "\"%.200s\": shards must share the writer's settings",
                      path, writer, b->must.first, b->must.writer);
  return merge_classes(b, src, path, err);
}

static sl_status add_samples(build *b, const sl_source *src, const char *path,
                             sl_err *err) {
  uint64_t n = sl_source_count(src);
  uint32_t tw = sl_source_target_width(src);
  bool boxed = sl_source_max_boxes(src) > 0 || b->box_total > 0;
  for (uint64_t i = 0; i < n; i++) {
    const sl_sample_info *e = sl_source_info(src, i);
    uint8_t *r = reserve(&b->samples, SL_SHARD_SAMPLE_REC);
    uint8_t *t = reserve(&b->targets, 4 * (size_t)tw);
    if (!r || !t)
      return sl_err_set(err, SL_ENOMEM, "%s: no memory for the index", path);
    sl_put_le64(r, e->offset);
    sl_put_le32(r + 8, e->length);
    sl_put_le32(r + 12, (uint32_t)e->label);
    sl_put_le16(r + 16, e->height);
    sl_put_le16(r + 18, e->width);
    r[20] = e->codec;
    r[21] = e->channels;
    sl_put_le16(r + 22, e->name_len);
    if (e->codec == SL_IMAGE_JPEG_LEVELS)
      b->flags |= SL_SHARD_FLAG_LEVELS;
    const float *tg = sl_source_targets(src, i);
    for (uint32_t q = 0; q < tw; q++) {
      uint32_t u;
      memcpy(&u, &tg[q], 4);
      sl_put_le32(t + 4 * q, u);
    }
  }
  if (boxed) {
    /* The shards before this one had no boxes: their samples' counts are
     * 0. */
    size_t have = b->box_counts.len / 2;
    uint64_t before = b->count;
    if (have < before && !reserve(&b->box_counts, (size_t)(before - have) * 2))
      return sl_err_set(err, SL_ENOMEM, "%s: no memory for boxes", path);
    memset(b->box_counts.p + have * 2, 0, (size_t)(before - have) * 2);
    for (uint64_t i = 0; i < n; i++) {
      uint32_t nb;
      const sl_box *bx = sl_source_boxes(src, i, &nb);
      uint8_t *c = reserve(&b->box_counts, 2);
      uint8_t *o = reserve(&b->boxes, (size_t)nb * SL_BOX_BYTES);
      if (!c || !o)
        return sl_err_set(err, SL_ENOMEM, "%s: no memory for boxes", path);
      sl_put_le16(c, (uint16_t)nb);
      for (uint32_t j = 0; j < nb; j++)
        sl_box_encode(o + (size_t)j * SL_BOX_BYTES, &bx[j]);
      b->box_total += nb;
    }
  }
  b->count += n;
  uint64_t images[SL_LEVELS_MAX], lb[SL_LEVELS_MAX];
  uint32_t nl = sl_source_levels(src, images, lb);
  for (uint32_t k = 0; k < nl; k++) {
    b->level_images[k] += images[k];
    b->level_bytes[k] += lb[k];
  }
  if (nl > b->nlevels)
    b->nlevels = nl;
  return SL_OK;
}

static sl_status add_shard(build *b, const char *name, sl_err *err) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", b->dir, name) >= (int)sizeof path)
    return sl_err_set(err, SL_EINVAL, "%s/%s: path too long", b->dir, name);
  sl_source *src;
  sl_status st =
      sl_source_open(&src, path, SL_FORMAT_AUTO, SL_SOURCE_PREAD, err);
  if (st != SL_OK)
    return st;
  const char *fmt = sl_source_format_name(src);
  uint8_t kind = strcmp(fmt, "lmdb") == 0   ? SL_SHARD_LMDB
                 : strcmp(fmt, "hdf5") == 0 ? SL_SHARD_HDF5
                                            : 0;
  if (!kind || strcmp(sl_source_layout_name(src), "sluice") != 0)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: a %s file of %s entries, not a shard (a sluice "
                    "LMDB or HDF5 file, as sl_writer and `sluice pack` "
                    "write)",
                    path, fmt, sl_source_layout_name(src));
  if (st == SL_OK)
    st = check_shared(b, src, path, name, err);
  uint64_t size = sl_source_file_size(src);
  uint32_t head = 0, whole = 0;
  if (st == SL_OK)
    st = sl_shard_crc(sl_source_fd(src), size, false, path, &head, err);
  const sl_shard_rec *old = st == SL_OK ? old_rec(b, name) : NULL;
  if (old && old->size == size && old->head_crc == head)
    whole = old->file_crc;
  else if (st == SL_OK) {
    st = sl_shard_crc(sl_source_fd(src), size, true, path, &whole, err);
    b->rep->checksummed++;
  }
  if (st == SL_OK)
    st = add_samples(b, src, path, err);
  if (st == SL_OK) {
    uint8_t *r = reserve(&b->recs, SL_SHARD_REC);
    uint8_t *t = reserve(&b->text_names, strlen(name) + 1);
    if (!r || !t)
      st = sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
    else {
      memset(r, 0, SL_SHARD_REC);
      sl_put_le64(r, size);
      sl_put_le64(r + 8, sl_source_count(src));
      sl_put_le32(r + 16, head);
      sl_put_le32(r + 20, whole);
      sl_put_le32(r + 24, sl_source_layout_version(src));
      r[28] = kind;
      memcpy(t, name, strlen(name) + 1);
      b->rep->bytes += size;
    }
  }
  sl_source_close(src);
  return st;
}

/* The index's bytes, from the gathered sections. */
static sl_status assemble(build *b, uint64_t nshards, bytes *out,
                          const char *path, sl_err *err) {
  size_t wlen = strlen(b->must.writer ? b->must.writer : "") + 1;
  size_t text = b->text_names.len + b->classes.len + wlen;
  if (b->box_total && b->box_counts.len / 2 < b->count) {
    size_t have = b->box_counts.len / 2;
    if (!reserve(&b->box_counts, (size_t)(b->count - have) * 2))
      return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
    memset(b->box_counts.p + have * 2, 0, (size_t)(b->count - have) * 2);
  }
  if (text > UINT32_MAX)
    return sl_err_set(err, SL_ETOOBIG, "%s: %zu bytes of names", path, text);
  size_t total = SL_SHARD_INDEX_HDR + b->recs.len +
                 (size_t)b->nlevels * SL_SHARD_LEVEL_REC + text +
                 b->samples.len + b->targets.len +
                 (b->box_total ? b->box_counts.len + b->boxes.len : 0) + 4;
  uint8_t *h = reserve(out, total);
  if (!h)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory for %zu bytes", path,
                      total);
  memset(h, 0, SL_SHARD_INDEX_HDR);
  memcpy(h, SL_SHARD_INDEX_MAGIC, 8);
  sl_put_le32(h + 8, SL_SHARD_INDEX_LAYOUT);
  sl_put_le32(h + 12, b->flags);
  sl_put_le64(h + 16, nshards);
  sl_put_le64(h + 24, b->count);
  sl_put_le64(h + 32, b->box_total);
  sl_put_le32(h + 40, b->nclasses);
  sl_put_le32(h + 44, b->must.target_width);
  sl_put_le32(h + 48, b->nlevels);
  sl_put_le32(h + 52, (uint32_t)text);
  sl_put_le64(h + 56, total);
  uint8_t *p = h + SL_SHARD_INDEX_HDR;
#define PUT(src, n)                                                            \
  do {                                                                         \
    if (n)                                                                     \
      memcpy(p, src, n);                                                       \
    p += n;                                                                    \
  } while (0)
  PUT(b->recs.p, b->recs.len);
  for (uint32_t k = 0; k < b->nlevels; k++, p += SL_SHARD_LEVEL_REC) {
    sl_put_le64(p, b->level_images[k]);
    sl_put_le64(p + 8, b->level_bytes[k]);
  }
  PUT(b->text_names.p, b->text_names.len);
  PUT(b->classes.p, b->classes.len);
  PUT(b->must.writer ? b->must.writer : "", wlen);
  PUT(b->samples.p, b->samples.len);
  PUT(b->targets.p, b->targets.len);
  if (b->box_total) {
    PUT(b->box_counts.p, b->box_counts.len);
    PUT(b->boxes.p, b->boxes.len);
  }
#undef PUT
  sl_put_le32(p, sl_crc32c(h, total - 4));
  return SL_OK;
}

/* Writes the index under a temporary name, syncs it and renames it over
 * path: readers see the old index or the new one, whole. */
static sl_status write_atomic(const char *dir, const char *path,
                              const bytes *data, sl_err *err) {
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s/." SL_SHARD_INDEX_NAME ".tmp.%ld", dir,
               (long)getpid()) >= (int)sizeof tmp)
    return sl_err_set(err, SL_EINVAL, "%s: path too long", dir);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s", tmp);
  sl_status st = SL_OK;
  for (size_t off = 0; off < data->len && st == SL_OK;) {
    ssize_t n = write(fd, data->p + off, data->len - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      st = sl_err_errno(err, SL_EIO, n < 0 ? errno : ENOSPC, "%s: write", tmp);
    else
      off += (size_t)n;
  }
  if (st == SL_OK && fsync(fd) != 0)
    st = sl_err_errno(err, SL_EIO, errno, "%s: fsync", tmp);
  if (close(fd) != 0 && st == SL_OK)
    st = sl_err_errno(err, SL_EIO, errno, "%s: close", tmp);
  if (st == SL_OK && rename(tmp, path) != 0)
    st = sl_err_errno(err, SL_EIO, errno, "%s: rename to %s", tmp, path);
  if (st != SL_OK) {
    unlink(tmp);
    return st;
  }
  /* The rename itself reaches the disk with the folder. */
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s", dir);
  if (fsync(dfd) != 0)
    st = sl_err_errno(err, SL_EIO, errno, "%s: fsync", dir);
  close(dfd);
  return st;
}

sl_status sl_shard_index_build(const char *dir, sl_shard_index_report *rep,
                               sl_err *err) {
  sl_shard_index_report unused;
  if (!rep)
    rep = &unused;
  memset(rep, 0, sizeof *rep);
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/" SL_SHARD_INDEX_NAME, dir) >=
      (int)sizeof path)
    return sl_err_set(err, SL_EINVAL, "%s: path too long", dir);
  char **names;
  size_t n;
  sl_status st = list_shards(dir, &names, &n, err);
  if (st != SL_OK)
    return st;
  build b = {.dir = dir, .rep = rep};
  sl_shard_index old;
  sl_err ignored = {0};
  /* An old index that cannot be read is rebuilt from scratch. */
  if (sl_shard_index_load(&old, path, &ignored) == SL_OK) {
    b.old = &old;
    b.old_sorted =
        malloc((old.nshards ? (size_t)old.nshards : 1) * sizeof *b.old_sorted);
    if (!b.old_sorted)
      st = sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
    for (uint64_t k = 0; st == SL_OK && k < old.nshards; k++)
      b.old_sorted[k] = &old.shards[k];
    if (st == SL_OK)
      qsort(b.old_sorted, (size_t)old.nshards, sizeof *b.old_sorted,
            rec_by_name);
  }
  if (st == SL_OK && n == 0)
    st = sl_err_set(err, SL_EINVAL,
                    "%s: no shards (files named *.lmdb, *.mdb, *.h5 or "
                    "*.hdf5)",
                    dir);
  for (size_t k = 0; st == SL_OK && k < n; k++)
    st = add_shard(&b, names[k], err);
  bytes out = {0};
  if (st == SL_OK)
    st = assemble(&b, n, &out, path, err);
  if (st == SL_OK)
    st = write_atomic(dir, path, &out, err);
  if (st == SL_OK) {
    rep->shards = n;
    rep->samples = b.count;
    rep->index_bytes = out.len;
  }
  free(out.p);
  for (size_t k = 0; k < n; k++)
    free(names[k]);
  free(names);
  if (b.old) {
    free(b.old_sorted);
    sl_shard_index_free(&old);
  }
  free(b.must.writer);
  free(b.recs.p);
  free(b.text_names.p);
  free(b.classes.p);
  free(b.samples.p);
  free(b.targets.p);
  free(b.box_counts.p);
  free(b.boxes.p);
  return st;
}
