/* The index of a sharded dataset: a folder of shards, each a complete
 * sluice LMDB or HDF5 file (written by any process, in any order), and one
 * file, SL_SHARD_INDEX_NAME, that `sluice index` builds from them and that
 * lists the shards in order with every sample's index entry, so that
 * opening the set reads this one file and no shard's contents. Readers
 * check each shard's size and first bytes against it at open; `sluice
 * verify` checks whole-file checksums. docs/SHARDS.md describes it for
 * people; this header is the code's source of truth.
 *
 * Layout 1, little-endian, sections back to back:
 *   header, 64 bytes:
 *      0 u8[8] magic "SLUICEIX"   8 u32 layout (1)   12 u32 flags
 *        (bit 0: some shard may hold JPEG levels, codec 7)
 *     16 u64 shards S   24 u64 samples N   32 u64 boxes M (all samples')
 *     40 u32 classes K  44 u32 target width T   48 u32 levels L
 *     52 u32 text bytes X   56 u64 the index file's size in bytes
 *   shards, S × 32: u64 size, u64 samples, u32 crc32c of the first
 *     min(size, SL_SHARD_HEAD_BYTES) bytes, u32 crc32c of the whole file,
 *     u32 the shard's layout version, u8 kind (1 LMDB, 2 HDF5), u8[3] 0
 *   levels, L × 16: u64 images, u64 payload bytes (summed over shards)
 *   text, X bytes: S shard file names, K class names, then the writer's
 *     settings, each NUL-terminated
 *   samples, N × 24: u64 offset in its shard, u32 length, i32 label,
 *     u16 height, u16 width, u8 codec, u8 channels, u16 name_len (the
 *     name's bytes precede the payload, as in the shard)
 *   targets, N × T f32
 *   when M > 0: box counts, N × u16; boxes, M × 24 (formats/core/boxes.h)
 *   u32 crc32c of every byte before it
 * Shards hold their samples in index order: shard 0's first, then shard
 * 1's. Every count is checked against the file's size before anything is
 * allocated: a hostile index costs memory bounded by its own size. */
#ifndef SLUICE_FORMATS_SHARD_INDEX_H
#define SLUICE_FORMATS_SHARD_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "formats/core/levels.h"

#define SL_SHARD_INDEX_NAME "sluice.index"
#define SL_SHARD_INDEX_MAGIC "SLUICEIX"
#define SL_SHARD_INDEX_LAYOUT 1u
#define SL_SHARD_INDEX_HDR 64u
#define SL_SHARD_REC 32u
#define SL_SHARD_LEVEL_REC 16u
#define SL_SHARD_SAMPLE_REC 24u
#define SL_SHARD_HEAD_BYTES                                                    \
  8192u /* LMDB's two meta pages; HDF5's                                       \
           superblock and root group */
#define SL_SHARD_FLAG_LEVELS 1u

enum { SL_SHARD_LMDB = 1, SL_SHARD_HDF5 = 2 };

typedef struct sl_shard_rec {
  const char *name; /* a file name in the index's folder (no '/') */
  uint64_t size, samples;
  uint32_t head_crc, file_crc, version;
  uint8_t kind;
} sl_shard_rec;

/* An index in memory: the counts and the sections, which point into buf
 * (owned) once parsed. */
typedef struct sl_shard_index {
  uint32_t flags, classes, target_width, nlevels;
  uint64_t nshards, count, box_total;
  sl_shard_rec *shards; /* nshards */
  uint64_t level_images[SL_LEVELS_MAX], level_bytes[SL_LEVELS_MAX];
  const char *class_blob; /* classes names, NUL-terminated, back to back */
  size_t class_bytes;
  const char *writer;
  const uint8_t *samples, *targets, *box_counts, *boxes;
  uint8_t *buf;
  size_t len;
} sl_shard_index;

/* Parses the len bytes of buf (malloc'd; ix owns it from the call on,
 * whatever the result). path names the index in messages: the sharded
 * reader's index fetched from a URL, the fuzz target. Errors: SL_EFORMAT
 * (bad magic, layout, sizes, checksum, names: the message says which and to
 * re-run `sluice index`), SL_ENOMEM. */
sl_status sl_shard_index_parse(sl_shard_index *ix, uint8_t *buf, size_t len,
                               const char *path, sl_err *err);
/* Reads and parses the index file at path. Errors as parse, SL_EIO. */
sl_status sl_shard_index_load(sl_shard_index *ix, const char *path,
                              sl_err *err);
void sl_shard_index_free(sl_shard_index *ix);

/* Sample i's index entry fields, as laid out (i < ix->count). */
void sl_shard_index_sample(const sl_shard_index *ix, uint64_t i,
                           uint64_t *offset, uint32_t *length, int32_t *label,
                           uint16_t *height, uint16_t *width, uint8_t *codec,
                           uint8_t *channels, uint16_t *name_len);

/* crc32c of the first SL_SHARD_HEAD_BYTES (or size) bytes of fd; with
 * whole, of all size bytes (1 MiB reads). path names it in errors. */
sl_status sl_shard_crc(int fd, uint64_t size, bool whole, const char *path,
                       uint32_t *crc, sl_err *err);

#endif
