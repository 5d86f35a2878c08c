/* On-disk layouts of sluice's dataset files, shared by readers and writers.
 * docs/FORMATS.md describes them for people; this header is the source of
 * truth for the code. Bump a *_VERSION when a layout changes: readers reject
 * versions they do not know, with a message that says to re-pack.
 *
 * LMDB (layout 3; 4 adds JPEG levels, 5 boxes; 2 had no names or targets
 * and still opens; 1 had no index chunks): one environment, normally a single
 * file (MDB_NOSUBDIR). key   "\0\0\0\0\0\0\0\5"  8-byte big-endian sample
 * index: file order = index order, keys 0..N-1 with no gaps. value
 * SL_LMDB_HDR_BYTES header (little-endian fields), the sample's name (name_len
 * bytes, no NUL), then the payload: 0  u8[4] magic "SLR1" 4  u16   layout
 * version (3) 6  u8    codec (sl_image_codec) 7  u8    channels (1 or 3) 8  u16
 * height 10  u16   width 12  i32   label (-1 = none) 16  u32   payload length
 * (= value size - 24 - name_len) 20  u16   name_len (0 in layout 2: no name) 22
 * u16   reserved, 0 key   "sluice.ix" + u32 big-endian chunk c (13 bytes): the
 * index of samples [c * S, ...), S = sl_lmdb_ix_chunk_samples(K): u8[4] magic
 *         "SLI1", u32 LE entry count (S, or the rest in the last chunk),
 *         then 16 + 4 K bytes a sample:
 *           0 u32 payload length, 4 i32 label, 8 u16 height, 10 u16 width,
 *          12 u8 codec, 13 u8 channels, 14 u16 name_len,
 *          16 f32[K] targets (little-endian IEEE 754).
 *         The same facts as the record headers (plus the targets, which
 *         only the index holds), gathered so that opening a file reads the
 *         tree and these chunks but no value: on a cold cache one random
 *         read per sample would make opening 1M samples take minutes.
 *         `sluice verify` compares them with every header.
 *   key   "sluice.bx" + u32 big-endian chunk c (13 bytes; layout 5): the
 *         boxes of every sample, in chunks of consecutive samples
 *         (formats/core/boxes.h), read into memory at open; sorts before
 *         "sluice.ix".
 *   key   "sluice.meta"      text metadata, one "name value" per line:
 *           sluice-lmdb 3 / count N / classes K / class NAME (K lines, in
 *           class order) / targets K (layout 3; absent: 0) /
 *           levels IMAGES:BYTES ... (layout 4, 5 with levels) /
 *           boxes TOTAL CHUNKS (layout 5) / writer SETTINGS
 *
 * HDF5 (layout 2; 3 adds JPEG levels, 4 boxes; 1 had no names or targets
 * and still opens): contiguous,
 * unfiltered datasets in group /samples:
 *   data        u8  [total]  records back to back: name, then payload
 *   offsets     u64 [N+1]    record i is data[offsets[i] .. offsets[i+1])
 *   name_length u16 [N]      record i's first name_length[i] bytes are its
 *                            name, the rest its payload (layout 2)
 *   label       i64 [N]
 *   shape       u32 [N][3]   height, width, channels
 *   codec       u8  [N]
 *   targets     f32 [N][K]   per-sample targets (layout 2, when K > 0)
 *   box_count   u16 [N]      sample i's boxes (layout 4)
 *   boxes       u8  [M][24]  the M boxes of all samples, sample by sample,
 *                            each as formats/core/boxes.h encodes it (layout 4)
 *   attributes of /samples: sluice_layout (u32, 2), count (u64),
 *   classes (fixed-length strings [K], absent when K = 0), num_classes
 *   (u32), target_width (u32, layout 2), writer (string). */
#ifndef SLUICE_FORMATS_LAYOUT_H
#define SLUICE_FORMATS_LAYOUT_H

#include <stdint.h>
#include <string.h>

#include "common/endian.h"
#include "formats/core/levels.h"
#include "sluice.h"

#define SL_LMDB_LAYOUT_VERSION 3u
#define SL_LMDB_LAYOUT_OLDEST 2u
/* Layout 4 = layout 3 whose samples may be codec 7 (JPEG levels,
 * formats/core/levels.h); written only when the file has levels, so a file
 * without them stays readable by builds that know layout 3. */
#define SL_LMDB_LAYOUT_LEVELS 4u
/* Layout 5 = layout 4 plus per-sample boxes (formats/core/boxes.h): "sluice.bx"
 * chunks and a "boxes TOTAL CHUNKS" metadata line. Written only when some
 * sample has a box, so a file without boxes keeps layout 3 or 4. The
 * records did not change (boxes live in their own keys, read at open like
 * the index), and the writer knows whether the file has boxes only at
 * commit, so a layout-5 file's record headers carry the record layout: 4
 * when the metadata has a "levels" line (codec 7 allowed), else 3. */
#define SL_LMDB_LAYOUT_BOXES 5u
#define SL_LMDB_BX_PREFIX "sluice.bx"
#define SL_LMDB_HDR_BYTES 24u
#define SL_LMDB_MAGIC "SLR1"
#define SL_LMDB_META_KEY "sluice.meta"
#define SL_LMDB_IX_PREFIX "sluice.ix"
#define SL_LMDB_IX_PREFIX_LEN 9u
#define SL_LMDB_IX_KEY_LEN 13u
#define SL_LMDB_IX_MAGIC "SLI1"
#define SL_LMDB_IX_CHUNK 65536u
#define SL_LMDB_IX_HDR 8u
#define SL_LMDB_IX_ENTRY 16u
#define SL_LMDB_META_HEAD "sluice-lmdb"

#define SL_HDF5_LAYOUT_VERSION 2u
#define SL_HDF5_LAYOUT_OLDEST 1u
#define SL_HDF5_LAYOUT_LEVELS 3u /* layout 2 plus codec 7, as LMDB's 4 */
/* Layout 4 = layout 3 plus the datasets box_count and boxes; written only
 * when some sample has a box. */
#define SL_HDF5_LAYOUT_BOXES 4u
#define SL_HDF5_GROUP "/samples"

/* The codec byte of a record, index entry or HDF5 row: an sl_image_codec of
 * sluice.h, the one list of codecs (1 JPEG, 2 PNG, 3 raw HWC; 4 raw CHW
 * planes in RGB order, 5 in BGR order, which the Caffe reader gives raw
 * Datums; 6 WebP; 7 JPEG levels). Formats checks only what the layout
 * needs: the byte's range, and that a raw payload holds height * width *
 * channels bytes. */
#define SL_LAYOUT_CODEC_FIRST SL_IMAGE_JPEG
#define SL_LAYOUT_CODEC_LAST SL_IMAGE_JPEG_LEVELS

/* Codec 7's level record: formats/core/levels.h. */

/* SL_CLASS_NAME_MAX, SL_CLASSES_MAX and SL_TARGETS_MAX come from sluice.h;
 * the longest sample name (bytes, without the NUL): a source path. */
#define SL_NAME_MAX ((unsigned)SL_SAMPLE_NAME_MAX)

/* The fields of one record's header. */
typedef struct sl_record_hdr {
  uint16_t version;
  uint8_t codec;
  uint8_t channels;
  uint16_t height;
  uint16_t width;
  int32_t label;
  uint32_t length;
  uint16_t name_len;
} sl_record_hdr;

/* Little-endian IEEE 754 floats (targets). */
static inline void sl_put_lef32(uint8_t *p, float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  sl_put_le32(p, u);
}
static inline float sl_get_lef32(const uint8_t *p) {
  uint32_t u = sl_get_le32(p);
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Bytes of one index-chunk entry, and samples per chunk: 65536, halved
 * until a chunk is at most 16 MiB (so wide targets do not make one value
 * of gigabytes). Layout 2 files have K = 0: 65536 × 16 bytes. */
static inline size_t sl_lmdb_ix_entry_bytes(uint32_t targets) {
  return SL_LMDB_IX_ENTRY + 4 * (size_t)targets;
}
static inline uint64_t sl_lmdb_ix_chunk_samples(uint32_t targets) {
  uint64_t n = SL_LMDB_IX_CHUNK;
  while (n > 1 && n * sl_lmdb_ix_entry_bytes(targets) > (16u << 20))
    n /= 2;
  return n;
}

/* The fixed 16-byte part of an LMDB index chunk entry. */
static inline void sl_ix_entry_encode(uint8_t out[SL_LMDB_IX_ENTRY],
                                      const sl_record_hdr *h) {
  sl_put_le32(out, h->length);
  sl_put_le32(out + 4, (uint32_t)h->label);
  sl_put_le16(out + 8, h->height);
  sl_put_le16(out + 10, h->width);
  out[12] = h->codec;
  out[13] = h->channels;
  sl_put_le16(out + 14, h->name_len);
}

static inline void sl_ix_entry_decode(const uint8_t in[SL_LMDB_IX_ENTRY],
                                      uint16_t version, sl_record_hdr *h) {
  h->version = version;
  h->length = sl_get_le32(in);
  h->label = (int32_t)sl_get_le32(in + 4);
  h->height = sl_get_le16(in + 8);
  h->width = sl_get_le16(in + 10);
  h->codec = in[12];
  h->channels = in[13];
  h->name_len = version >= 3 ? sl_get_le16(in + 14) : 0;
}

static inline void sl_record_hdr_encode(uint8_t out[SL_LMDB_HDR_BYTES],
                                        const sl_record_hdr *h) {
  memcpy(out, SL_LMDB_MAGIC, 4);
  sl_put_le16(out + 4, h->version);
  out[6] = h->codec;
  out[7] = h->channels;
  sl_put_le16(out + 8, h->height);
  sl_put_le16(out + 10, h->width);
  sl_put_le32(out + 12, (uint32_t)h->label);
  sl_put_le32(out + 16, h->length);
  sl_put_le16(out + 20, h->name_len);
  sl_put_le16(out + 22, 0);
}

/* Returns 0 and fills h when the magic matches, -1 otherwise. */
static inline int sl_record_hdr_decode(const uint8_t in[SL_LMDB_HDR_BYTES],
                                       sl_record_hdr *h) {
  if (memcmp(in, SL_LMDB_MAGIC, 4) != 0)
    return -1;
  h->version = sl_get_le16(in + 4);
  h->codec = in[6];
  h->channels = in[7];
  h->height = sl_get_le16(in + 8);
  h->width = sl_get_le16(in + 10);
  h->label = (int32_t)sl_get_le32(in + 12);
  h->length = sl_get_le32(in + 16);
  h->name_len = h->version >= 3 ? sl_get_le16(in + 20) : 0;
  return 0;
}

#endif
