/* The sidecar index of a set of foreign shards (WebDataset tars, TFRecord
 * and RecordIO files) at URLs:
 * what opening the set walks every shard for, written once, so that later
 * opens read it instead of the shards (formats/files/shards_remote.c).
 *
 * Layout (little-endian, version 2; version 1, written before RecordIO
 * was read at URLs, is read too: its header is 64 bytes, without the
 * joins count, and it has no joins):
 *   0   "SLSIDECR"
 *   8   u32 version, u32 format (sl_format_kind), u32 target width K,
 *       u32 opts bytes (the reader's options in words, NUL-terminated)
 *   24  u64 shards, u64 samples, u64 skipped, u64 name bytes, u64 flags
 *       (bit 0: the samples' names section; no other bit is set)
 *   64  u64 joins (RecordIO's multi-part records)
 *   72  the options; the names: each shard's URL as shown (no
 *       credentials: common/url_shown.h) then its ETag ("" when none),
 *       NUL-terminated; shards × 24 bytes: u64 size, u64 first
 *       sample, u32 crc32c of the whole shard, u32 0; samples × 24 bytes:
 *       u64 offset in its shard, u32 length, i32 label, u16 height, u16
 *       width, u8 codec, u8 channels, u16 name length; samples × K float32
 *       targets; with flag bit 0, samples × u64: the offset in its shard
 *       of each sample's name (TFRecord's image/filename); joins × 16
 *       bytes, samples rising: u64 sample, u32 IRHeader bytes before the
 *       image once joined, u32 the image's bytes
 *   end u32 crc32c of every byte before it
 *
 * Size: 24 bytes a sample, 4·K more with targets, 8 more with names, 16
 * a multi-part record, 24 a shard plus its URL and ETag, 76 in all.
 *
 * The parser takes hostile bytes: every count is bounded (SL_SIDECAR_MAX
 * bytes in all, SL_SHARDS_MAX shards, K up to 65535), the sizes must add
 * up to the buffer's, the checksum must hold, the names must be
 * NUL-terminated strings of bounded length, the first samples must
 * rise and the joins' samples must rise below the count. Sample entries are
 * checked against their shard by the source that takes them
 * (sl_source_check_entry). Thread safety: pure functions. */
#ifndef SLUICE_FORMATS_SHARD_SIDECAR_H
#define SLUICE_FORMATS_SHARD_SIDECAR_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "formats/core/source.h"

#define SL_SIDECAR_MAGIC "SLSIDECR"
#define SL_SIDECAR_VERSION 2u
#define SL_SIDECAR_HEADER 72u    /* version 2's */
#define SL_SIDECAR_HEADER_V1 64u /* version 1's: no joins count */
#define SL_SIDECAR_MAX (4ull << 30)
#define SL_SIDECAR_OPTS_MAX 4096u
#define SL_SIDECAR_NAME_MAX 2048u /* a shard's URL, NUL included */
#define SL_SIDECAR_ETAG_MAX 80u
#define SL_SIDECAR_NAMES 1u /* flags: the names section is there */

/* A multi-part RecordIO record (as source_impl.h's sl_recio_join). */
typedef struct sl_sidecar_join {
  uint64_t sample;
  uint32_t skip, bytes;
} sl_sidecar_join;

/* One shard, as written and as parsed (name and etag point into the
 * parsed buffer). */
typedef struct sl_sidecar_shard {
  const char *name, *etag;
  uint64_t size, first;
  uint32_t crc;
} sl_sidecar_shard;

/* What a sidecar holds. Encoding: every field given, index[i].offset
 * relative to its shard; parsed: samples and targets point into the
 * buffer (decode entries with sl_sidecar_sample), shards allocated
 * (sl_sidecar_free). */
typedef struct sl_sidecar {
  uint32_t format, target_width, flags;
  const char *opts;
  uint64_t nshards, count, skipped;
  sl_sidecar_shard *shards;
  const sl_sample_info *index;  /* encoding only */
  const float *targets;         /* encoding only: count × K */
  const uint64_t *name_off;     /* encoding with SL_SIDECAR_NAMES: count,
                                   offsets in each sample's shard */
  uint64_t njoins;              /* RecordIO's multi-part records */
  const sl_sidecar_join *joins; /* encoding only: njoins, samples rising */
  const uint8_t *samples_raw;   /* parsed: count × 24 bytes */
  const uint8_t *targets_raw;   /* parsed: count × K × 4 bytes */
  const uint8_t *names_raw;     /* parsed: count × 8 bytes, or NULL */
  const uint8_t *joins_raw;     /* parsed: njoins × 16 bytes */
} sl_sidecar;

/* The encoded bytes of s into a malloc'd *buf (*len). Errors: SL_ETOOBIG
 * (over SL_SIDECAR_MAX, a name or the options too long), SL_ENOMEM. */
sl_status sl_sidecar_encode(const sl_sidecar *s, uint8_t **buf, size_t *len,
                            sl_err *err);
/* Parses buf[0, len) (kept by the caller while s is used); what names the
 * sidecar in messages. Errors: SL_EFORMAT naming what and the field,
 * SL_ENOMEM. */
sl_status sl_sidecar_parse(sl_sidecar *s, const uint8_t *buf, size_t len,
                           const char *what, sl_err *err);
void sl_sidecar_free(sl_sidecar *s);
/* Sample i < count of a parsed sidecar: its entry (offset in its shard),
 * its K targets into t (when K > 0) and its name's offset in its shard
 * into *name_at (0 without the names section; name_at may be NULL). */
void sl_sidecar_sample(const sl_sidecar *s, uint64_t i, sl_sample_info *e,
                       float *t, uint64_t *name_at);
/* Join j < njoins of a parsed sidecar (its sample below count, rising). */
sl_sidecar_join sl_sidecar_join_at(const sl_sidecar *s, uint64_t j);

#endif
