/* The sidecar index of foreign shards at URLs, encoded and parsed
 * (formats/files/shard_sidecar.h). */
#include "formats/files/shard_sidecar.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "formats/core/crc32c.h"
#include "formats/files/shard_paths.h"

#define SHARD_REC 24u
#define SAMPLE_REC 24u
#define JOIN_REC 16u

/* The bytes after the header: options, names, shards, samples, targets,
 * joins and the checksum; UINT64_MAX past SL_SIDECAR_MAX. Every factor
 * bounded by the caller first (joins: any). */
static uint64_t body_bytes(uint64_t opts, uint64_t names, uint64_t nshards,
                           uint64_t count, uint64_t k, uint32_t flags,
                           uint64_t joins) {
  uint64_t n = opts + names + nshards * SHARD_REC;
  uint64_t per = SAMPLE_REC + 4 * k + (flags & SL_SIDECAR_NAMES ? 8 : 0);
  if (n > SL_SIDECAR_MAX || count > SL_SIDECAR_MAX / per ||
      joins > SL_SIDECAR_MAX / JOIN_REC)
    return UINT64_MAX;
  n += count * per + 4;
  if (n > SL_SIDECAR_MAX || joins * JOIN_REC > SL_SIDECAR_MAX - n)
    return UINT64_MAX;
  return n + joins * JOIN_REC;
}

sl_status sl_sidecar_encode(const sl_sidecar *s, uint8_t **buf, size_t *len,
                            sl_err *err) {
  *buf = NULL;
  *len = 0;
  size_t opts = strlen(s->opts) + 1;
  if (opts > SL_SIDECAR_OPTS_MAX)
    return sl_err_set(err, SL_ETOOBIG, "sidecar index: options too long");
  if (s->nshards == 0 || s->nshards > SL_SHARDS_MAX || s->target_width > 65535)
    return sl_err_set(err, SL_ETOOBIG,
                      "sidecar index: %" PRIu64 " shards, %" PRIu32
                      " targets a sample",
                      s->nshards, s->target_width);
  uint64_t names = 0;
  for (uint64_t k = 0; k < s->nshards; k++) {
    size_t a = strlen(s->shards[k].name) + 1, b = strlen(s->shards[k].etag) + 1;
    if (a > SL_SIDECAR_NAME_MAX || b > SL_SIDECAR_ETAG_MAX)
      return sl_err_set(err, SL_ETOOBIG,
                        "sidecar index: shard %" PRIu64 "'s URL or ETag is "
                        "too long",
                        k);
    names += a + b;
  }
  if (s->flags & ~SL_SIDECAR_NAMES)
    return sl_err_set(err, SL_EINVAL, "sidecar index: flags %#x",
                      (unsigned)s->flags);
  uint64_t body = body_bytes(opts, names, s->nshards, s->count, s->target_width,
                             s->flags, s->njoins);
  if (body == UINT64_MAX || SL_SIDECAR_HEADER + body > SIZE_MAX)
    return sl_err_set(err, SL_ETOOBIG,
                      "sidecar index: %" PRIu64 " samples of %" PRIu64
                      " shards: over %llu bytes",
                      s->count, s->nshards, SL_SIDECAR_MAX);
  size_t n = (size_t)(SL_SIDECAR_HEADER + body);
  uint8_t *p = calloc(1, n);
  if (!p)
    return sl_err_set(err, SL_ENOMEM, "sidecar index: %zu bytes", n);
  memcpy(p, SL_SIDECAR_MAGIC, 8);
  sl_put_le32(p + 8, SL_SIDECAR_VERSION);
  sl_put_le32(p + 12, s->format);
  sl_put_le32(p + 16, s->target_width);
  sl_put_le32(p + 20, (uint32_t)opts);
  sl_put_le64(p + 24, s->nshards);
  sl_put_le64(p + 32, s->count);
  sl_put_le64(p + 40, s->skipped);
  sl_put_le64(p + 48, names);
  sl_put_le64(p + 56, s->flags);
  sl_put_le64(p + 64, s->njoins);
  uint8_t *q = p + SL_SIDECAR_HEADER;
  memcpy(q, s->opts, opts);
  q += opts;
  for (uint64_t k = 0; k < s->nshards; k++) {
    size_t a = strlen(s->shards[k].name) + 1, b = strlen(s->shards[k].etag) + 1;
    memcpy(q, s->shards[k].name, a);
    memcpy(q + a, s->shards[k].etag, b);
    q += a + b;
  }
  for (uint64_t k = 0; k < s->nshards; k++, q += SHARD_REC) {
    sl_put_le64(q, s->shards[k].size);
    sl_put_le64(q + 8, s->shards[k].first);
    sl_put_le32(q + 16, s->shards[k].crc);
  }
  for (uint64_t i = 0; i < s->count; i++, q += SAMPLE_REC) {
    const sl_sample_info *e = &s->index[i];
    sl_put_le64(q, e->offset);
    sl_put_le32(q + 8, e->length);
    sl_put_le32(q + 12, (uint32_t)e->label);
    sl_put_le16(q + 16, e->height);
    sl_put_le16(q + 18, e->width);
    q[20] = e->codec;
    q[21] = e->channels;
    sl_put_le16(q + 22, s->flags & SL_SIDECAR_NAMES ? e->name_len : 0);
  }
  uint64_t nt = s->count * s->target_width;
  for (uint64_t t = 0; t < nt; t++, q += 4) {
    uint32_t u;
    memcpy(&u, &s->targets[t], 4);
    sl_put_le32(q, u);
  }
  for (uint64_t i = 0; (s->flags & SL_SIDECAR_NAMES) && i < s->count;
       i++, q += 8)
    sl_put_le64(q, s->name_off[i]);
  for (uint64_t j = 0; j < s->njoins; j++, q += JOIN_REC) {
    sl_put_le64(q, s->joins[j].sample);
    sl_put_le32(q + 8, s->joins[j].skip);
    sl_put_le32(q + 12, s->joins[j].bytes);
  }
  sl_put_le32(q, sl_crc32c(p, (size_t)(q - p)));
  *buf = p;
  *len = n;
  return SL_OK;
}

void sl_sidecar_free(sl_sidecar *s) {
  if (s) {
    free(s->shards);
    s->shards = NULL;
  }
}

/* The NUL-terminated string at *p (below end), at most cap bytes with its
 * NUL; NULL when it runs past either. */
static const char *take_string(const uint8_t **p, const uint8_t *end,
                               size_t cap) {
  size_t room = (size_t)(end - *p);
  const uint8_t *z = memchr(*p, 0, room < cap ? room : cap);
  if (!z)
    return NULL;
  const char *s = (const char *)*p;
  *p = z + 1;
  return s;
}

sl_status sl_sidecar_parse(sl_sidecar *s, const uint8_t *buf, size_t len,
                           const char *what, sl_err *err) {
  memset(s, 0, sizeof *s);
  if (len < SL_SIDECAR_HEADER_V1 + 4 || memcmp(buf, SL_SIDECAR_MAGIC, 8) != 0)
    return sl_err_set(err, SL_EFORMAT, "%s: not a sidecar index (%zu bytes)",
                      what, len);
  uint32_t version = sl_get_le32(buf + 8);
  if (version != SL_SIDECAR_VERSION && version != 1)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: sidecar index version %" PRIu32
                      " (this build reads 1 to %u)",
                      what, version, SL_SIDECAR_VERSION);
  uint64_t header = version == 1 ? SL_SIDECAR_HEADER_V1 : SL_SIDECAR_HEADER;
  if (len < header + 4)
    return sl_err_set(err, SL_EFORMAT, "%s: not a sidecar index (%zu bytes)",
                      what, len);
  if (len > SL_SIDECAR_MAX ||
      sl_get_le32(buf + len - 4) != sl_crc32c(buf, len - 4))
    return sl_err_set(err, SL_EFORMAT,
                      "%s: the sidecar index's checksum does not hold "
                      "(damaged or cut short)",
                      what);
  s->format = sl_get_le32(buf + 12);
  s->target_width = sl_get_le32(buf + 16);
  uint32_t opts = sl_get_le32(buf + 20);
  s->nshards = sl_get_le64(buf + 24);
  s->count = sl_get_le64(buf + 32);
  s->skipped = sl_get_le64(buf + 40);
  uint64_t names = sl_get_le64(buf + 48), flags = sl_get_le64(buf + 56);
  s->flags = (uint32_t)flags;
  s->njoins = version == 1 ? 0 : sl_get_le64(buf + 64);
  if (opts == 0 || opts > SL_SIDECAR_OPTS_MAX || s->nshards == 0 ||
      s->nshards > SL_SHARDS_MAX || s->target_width > 65535 ||
      names > SL_SIDECAR_MAX || (flags & ~(uint64_t)SL_SIDECAR_NAMES) != 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: sidecar index header out of bounds (%" PRIu64
                      " shards, %" PRIu32 " targets, %" PRIu32
                      " bytes of options)",
                      what, s->nshards, s->target_width, opts);
  uint64_t body = body_bytes(opts, names, s->nshards, s->count, s->target_width,
                             s->flags, s->njoins);
  if (body == UINT64_MAX || header + body != len)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: sidecar index of %zu bytes, its header adds up to "
                      "another size",
                      what, len);
  const uint8_t *p = buf + header, *end = p + opts;
  if (p[opts - 1] != 0 || memchr(p, 0, opts) != p + opts - 1)
    return sl_err_set(err, SL_EFORMAT, "%s: sidecar index options malformed",
                      what);
  s->opts = (const char *)p;
  p = end;
  end = p + names;
  s->shards = calloc((size_t)s->nshards, sizeof *s->shards);
  if (!s->shards)
    return sl_err_set(err, SL_ENOMEM, "%s: %" PRIu64 " shards", what,
                      s->nshards);
  for (uint64_t k = 0; k < s->nshards; k++) {
    s->shards[k].name = take_string(&p, end, SL_SIDECAR_NAME_MAX);
    s->shards[k].etag =
        s->shards[k].name ? take_string(&p, end, SL_SIDECAR_ETAG_MAX) : NULL;
    if (!s->shards[k].etag || !s->shards[k].name[0]) {
      sl_sidecar_free(s);
      return sl_err_set(err, SL_EFORMAT,
                        "%s: sidecar index: shard %" PRIu64 "'s name malformed",
                        what, k);
    }
  }
  if (p != end) {
    sl_sidecar_free(s);
    return sl_err_set(err, SL_EFORMAT,
                      "%s: sidecar index: bytes after the shards' names", what);
  }
  for (uint64_t k = 0; k < s->nshards; k++, p += SHARD_REC) {
    sl_sidecar_shard *h = &s->shards[k];
    h->size = sl_get_le64(p);
    h->first = sl_get_le64(p + 8);
    h->crc = sl_get_le32(p + 16);
    uint64_t prev = k ? s->shards[k - 1].first : 0;
    if (sl_get_le32(p + 20) != 0 || h->first < prev || h->first > s->count ||
        (k == 0 && h->first != 0)) {
      sl_status st = sl_err_set(err, SL_EFORMAT,
                                "%s: sidecar index: shard %" PRIu64
                                "'s first sample %" PRIu64 " out of order",
                                what, k, h->first);
      sl_sidecar_free(s);
      return st;
    }
  }
  s->samples_raw = p;
  s->targets_raw = p + s->count * SAMPLE_REC;
  s->names_raw = s->flags & SL_SIDECAR_NAMES
                     ? s->targets_raw + s->count * s->target_width * 4
                     : NULL;
  s->joins_raw = s->targets_raw + s->count * s->target_width * 4 +
                 (s->names_raw ? s->count * 8 : 0);
  for (uint64_t j = 0; j < s->njoins; j++) {
    uint64_t i = sl_get_le64(s->joins_raw + j * JOIN_REC);
    if (i >= s->count ||
        (j > 0 && i <= sl_get_le64(s->joins_raw + (j - 1) * JOIN_REC))) {
      sl_sidecar_free(s);
      return sl_err_set(err, SL_EFORMAT,
                        "%s: sidecar index: multi-part record %" PRIu64
                        "'s sample %" PRIu64 " out of order or past %" PRIu64,
                        what, j, i, s->count);
    }
  }
  return SL_OK;
}

void sl_sidecar_sample(const sl_sidecar *s, uint64_t i, sl_sample_info *e,
                       float *t, uint64_t *name_at) {
  const uint8_t *q = s->samples_raw + i * SAMPLE_REC;
  *e = (sl_sample_info){
      .offset = sl_get_le64(q),
      .length = sl_get_le32(q + 8),
      .label = (int32_t)sl_get_le32(q + 12),
      .height = sl_get_le16(q + 16),
      .width = sl_get_le16(q + 18),
      .codec = q[20],
      .channels = q[21],
      .name_len = s->names_raw ? sl_get_le16(q + 22) : 0,
  };
  if (name_at)
    *name_at = s->names_raw ? sl_get_le64(s->names_raw + i * 8) : 0;
  const uint8_t *r = s->targets_raw + i * s->target_width * 4;
  for (uint32_t k = 0; k < s->target_width; k++) {
    uint32_t u = sl_get_le32(r + 4 * k);
    memcpy(&t[k], &u, 4);
  }
}

sl_sidecar_join sl_sidecar_join_at(const sl_sidecar *s, uint64_t j) {
  const uint8_t *q = s->joins_raw + j * JOIN_REC;
  return (sl_sidecar_join){sl_get_le64(q), sl_get_le32(q + 8),
                           sl_get_le32(q + 12)};
}
