/* Reading a sharded dataset's index file (formats/shards/shard_index.h). */
#include "formats/shards/shard_index.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/endian.h"
#include "common/pread_full.h"
#include "formats/core/boxes.h"
#include "formats/core/crc32c.h"
#include "sluice.h"

#define REINDEX "; re-run `sluice index` on its folder"

/* a += b * c, false on overflow. */
static bool add_mul(uint64_t *a, uint64_t b, uint64_t c) {
  if (c && b > UINT64_MAX / c)
    return false;
  uint64_t p = b * c;
  if (*a > UINT64_MAX - p)
    return false;
  *a += p;
  return true;
}

/* The next NUL-terminated string of text[*pos, len), at most max bytes; NULL
 * when it does not end inside. */
static const char *next_string(const char *text, size_t len, size_t *pos,
                               size_t max) {
  const char *s = text + *pos;
  const char *end = memchr(s, '\0', len - *pos);
  if (!end || (size_t)(end - s) > max)
    return NULL;
  *pos = (size_t)(end - text) + 1;
  return s;
}

/* A shard's name is a file in the index's folder: no path, no control
 * character, nothing that leaves the folder. */
static bool plain_name(const char *s) {
  if (!*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
    return false;
  for (; *s; s++)
    if (*s == '/' || (unsigned char)*s < 0x20 || *s == 0x7f)
      return false;
  return true;
}

static sl_status parse(sl_shard_index *ix, const char *path, sl_err *err) {
  const uint8_t *b = ix->buf;
  size_t len = ix->len;
  if (len < SL_SHARD_INDEX_HDR + 4 || memcmp(b, SL_SHARD_INDEX_MAGIC, 8) != 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: not a sluice shard index (no SLUICEIX header)",
                      path);
  uint32_t layout = sl_get_le32(b + 8);
  if (layout != SL_SHARD_INDEX_LAYOUT)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: shard index layout %" PRIu32
                      "; this build reads %u" REINDEX,
                      path, layout, SL_SHARD_INDEX_LAYOUT);
  ix->flags = sl_get_le32(b + 12);
  ix->nshards = sl_get_le64(b + 16);
  ix->count = sl_get_le64(b + 24);
  ix->box_total = sl_get_le64(b + 32);
  ix->classes = sl_get_le32(b + 40);
  ix->target_width = sl_get_le32(b + 44);
  ix->nlevels = sl_get_le32(b + 48);
  uint32_t text = sl_get_le32(b + 52);
  uint64_t stated = sl_get_le64(b + 56);
  if (stated != len)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: %zu bytes, its header says %" PRIu64
                      " (truncated or overwritten)" REINDEX,
                      path, len, stated);
  if (ix->classes > SL_CLASSES_MAX || ix->target_width > SL_TARGETS_MAX ||
      ix->nlevels > SL_LEVELS_MAX || (ix->flags & ~SL_SHARD_FLAG_LEVELS))
    return sl_err_set(
        err, SL_EFORMAT,
        "%s: header out of range (%" PRIu32 " classes, %" PRIu32
        " targets, %" PRIu32 " levels, flags %#" PRIx32 ")" REINDEX,
        path, ix->classes, ix->target_width, ix->nlevels, ix->flags);
  /* Every section's size from the header, checked against the file's
   * before anything is allocated. */
  uint64_t need = SL_SHARD_INDEX_HDR + 4 + (uint64_t)text;
  bool ok =
      add_mul(&need, ix->nshards, SL_SHARD_REC) &&
      add_mul(&need, ix->nlevels, SL_SHARD_LEVEL_REC) &&
      add_mul(&need, ix->count, SL_SHARD_SAMPLE_REC) &&
      add_mul(&need, ix->count, 4ull * ix->target_width) &&
      (ix->box_total == 0 || (add_mul(&need, ix->count, 2) &&
                              add_mul(&need, ix->box_total, SL_BOX_BYTES)));
  if (!ok || need != len)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: its counts (%" PRIu64 " shards, %" PRIu64
                      " samples, %" PRIu64 " boxes) do not fit its %zu bytes"
                      "" REINDEX,
                      path, ix->nshards, ix->count, ix->box_total, len);
  uint32_t crc = sl_get_le32(b + len - 4);
  if (sl_crc32c(b, len - 4) != crc)
    return sl_err_set(err, SL_EFORMAT, "%s: checksum mismatch" REINDEX, path);

  const uint8_t *p = b + SL_SHARD_INDEX_HDR;
  const uint8_t *recs = p;
  p += ix->nshards * SL_SHARD_REC;
  for (uint32_t k = 0; k < ix->nlevels; k++, p += SL_SHARD_LEVEL_REC) {
    ix->level_images[k] = sl_get_le64(p);
    ix->level_bytes[k] = sl_get_le64(p + 8);
  }
  const char *t = (const char *)p;
  p += text;
  ix->samples = p;
  p += ix->count * SL_SHARD_SAMPLE_REC;
  ix->targets = ix->target_width ? p : NULL;
  p += ix->count * 4ull * ix->target_width;
  if (ix->box_total) {
    ix->box_counts = p;
    p += ix->count * 2;
    ix->boxes = p;
  }

  /* nshards * 32 bytes fit in the file: calloc's count is in range. */
  if (!(ix->shards =
            calloc(ix->nshards ? (size_t)ix->nshards : 1, sizeof *ix->shards)))
    return sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " shards",
                      path, ix->nshards);
  size_t pos = 0;
  uint64_t samples = 0;
  for (uint64_t k = 0; k < ix->nshards; k++) {
    const uint8_t *r = recs + k * SL_SHARD_REC;
    sl_shard_rec *s = &ix->shards[k];
    s->size = sl_get_le64(r);
    s->samples = sl_get_le64(r + 8);
    s->head_crc = sl_get_le32(r + 16);
    s->file_crc = sl_get_le32(r + 20);
    s->version = sl_get_le32(r + 24);
    s->kind = r[28];
    s->name = next_string(t, text, &pos, NAME_MAX);
    if (!s->name || !plain_name(s->name))
      return sl_err_set(err, SL_EFORMAT,
                        "%s: shard %" PRIu64 "'s name is not a file name in "
                        "its folder" REINDEX,
                        path, k);
    if (s->kind != SL_SHARD_LMDB && s->kind != SL_SHARD_HDF5)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: shard %" PRIu64 " of kind %u" REINDEX, path, k,
                        s->kind);
    if (s->samples > ix->count - samples)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: the shards hold more than its %" PRIu64
                        " samples" REINDEX,
                        path, ix->count);
    samples += s->samples;
  }
  if (samples != ix->count)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: the shards hold %" PRIu64
                      " samples, it says %" PRIu64 "" REINDEX,
                      path, samples, ix->count);
  ix->class_blob = t + pos;
  for (uint32_t c = 0; c < ix->classes; c++)
    if (!next_string(t, text, &pos, SL_CLASS_NAME_MAX))
      return sl_err_set(err, SL_EFORMAT,
                        "%s: class %" PRIu32 "'s name is malformed" REINDEX,
                        path, c);
  ix->class_bytes = (size_t)(t + pos - ix->class_blob);
  ix->writer = next_string(t, text, &pos, SL_SETTINGS_MAX);
  if (!ix->writer || pos != text)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: its text section is malformed" REINDEX, path);
  return SL_OK;
}

sl_status sl_shard_index_parse(sl_shard_index *ix, uint8_t *buf, size_t len,
                               const char *path, sl_err *err) {
  memset(ix, 0, sizeof *ix);
  ix->buf = buf;
  ix->len = len;
  sl_status st = parse(ix, path, err);
  if (st != SL_OK)
    sl_shard_index_free(ix);
  return st;
}

sl_status sl_shard_index_load(sl_shard_index *ix, const char *path,
                              sl_err *err) {
  memset(ix, 0, sizeof *ix);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s", path);
  struct stat sb;
  sl_status st = SL_OK;
  uint8_t *buf = NULL;
  size_t len = 0;
  if (fstat(fd, &sb) != 0)
    st = sl_err_errno(err, SL_EIO, errno, "%s: stat", path);
  else if (!S_ISREG(sb.st_mode))
    st = sl_err_set(err, SL_EFORMAT, "%s: not a regular file", path);
  else if ((uint64_t)sb.st_size > SIZE_MAX / 2)
    st = sl_err_set(err, SL_ETOOBIG, "%s: %" PRIu64 " bytes", path,
                    (uint64_t)sb.st_size);
  else {
    len = (size_t)sb.st_size;
    buf = malloc(len ? len : 1);
    size_t got;
    int rc;
    if (!buf)
      st = sl_err_set(err, SL_ENOMEM, "%s: no memory for its %zu bytes", path,
                      len);
    else if ((rc = sl_pread_full(fd, buf, len, 0, &got)) != 0)
      st = rc < 0 ? sl_err_errno(err, SL_EIO, errno, "%s: read", path)
                  : sl_err_set(err, SL_EIO,
                               "%s: ends at %zu bytes while read (%zu at stat)",
                               path, got, len);
  }
  close(fd);
  if (st != SL_OK) {
    free(buf);
    return st;
  }
  return sl_shard_index_parse(ix, buf, len, path, err);
}

void sl_shard_index_free(sl_shard_index *ix) {
  free(ix->shards);
  free(ix->buf);
  memset(ix, 0, sizeof *ix);
}

void sl_shard_index_sample(const sl_shard_index *ix, uint64_t i,
                           uint64_t *offset, uint32_t *length, int32_t *label,
                           uint16_t *height, uint16_t *width, uint8_t *codec,
                           uint8_t *channels, uint16_t *name_len) {
  const uint8_t *r = ix->samples + i * SL_SHARD_SAMPLE_REC;
  *offset = sl_get_le64(r);
  *length = sl_get_le32(r + 8);
  *label = (int32_t)sl_get_le32(r + 12);
  *height = sl_get_le16(r + 16);
  *width = sl_get_le16(r + 18);
  *codec = r[20];
  *channels = r[21];
  *name_len = sl_get_le16(r + 22);
}

sl_status sl_shard_crc(int fd, uint64_t size, bool whole, const char *path,
                       uint32_t *crc, sl_err *err) {
  uint64_t n = whole || size < SL_SHARD_HEAD_BYTES ? size : SL_SHARD_HEAD_BYTES;
  size_t cap = n < (1u << 20) ? (size_t)n : (1u << 20);
  uint8_t *buf = malloc(cap ? cap : 1);
  if (!buf)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  uint32_t c = 0;
  sl_status st = SL_OK;
  for (uint64_t off = 0; off < n && st == SL_OK;) {
    size_t run = n - off < cap ? (size_t)(n - off) : cap, got;
    int rc = sl_pread_full(fd, buf, run, off, &got);
    if (rc < 0)
      st = sl_err_errno(err, SL_EIO, errno, "%s: read at offset %" PRIu64, path,
                        off);
    else if (rc > 0)
      st = sl_err_set(err, SL_EIO,
                      "%s: ends at %" PRIu64 " bytes, %" PRIu64 " expected",
                      path, off + got, size);
    else {
      c = sl_crc32c_update(c, buf, run);
      off += run;
    }
  }
  free(buf);
  *crc = c;
  return st;
}
