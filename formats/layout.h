/* On-disk layouts of sluice's dataset files, shared by readers and writers.
 * docs/FORMATS.md describes them for people; this header is the source of
 * truth for the code. Bump a *_VERSION when a layout changes: readers reject
 * versions they do not know, with a message that says to re-pack.
 *
 * LMDB (layout 2; 1 had no index chunks): one environment, normally a single
 * file (MDB_NOSUBDIR). key   "\0\0\0\0\0\0\0\5"  8-byte big-endian sample
 * index: file order = index order, keys 0..N-1 with no gaps. value
 * SL_LMDB_HDR_BYTES header (little-endian fields), then the payload: 0  u8[4]
 * magic "SLR1" 4  u16   layout version (2) 6  u8    codec (sl_codec) 7  u8
 * channels (1 or 3) 8  u16   height 10  u16   width 12  i32   label (-1 = none)
 *          16  u32   payload length (must equal value size - 24)
 *          20  u32   reserved, 0
 *   key   "sluice.ix" + u32 big-endian chunk c (13 bytes): the index of
 *         samples [c * 65536, ...): u8[4] magic "SLI1", u32 LE entry count
 *         (65536, or the rest in the last chunk), then 16 bytes a sample:
 *           0 u32 payload length, 4 i32 label, 8 u16 height, 10 u16 width,
 *          12 u8 codec, 13 u8 channels, 14 u16 reserved 0.
 *         The same facts as the record headers, gathered so that opening
 *         a file reads the tree and these chunks but no value: on a cold
 *         cache one random read per sample would make opening 1M samples
 *         take minutes. `sluice verify` compares them with every header.
 *   key   "sluice.meta"      text metadata, one "name value" per line:
 *           sluice-lmdb 2 / count N / classes K / class NAME (K lines, in
 *           class order) / writer SETTINGS
 *
 * HDF5 (layout 1): contiguous, unfiltered datasets in group /samples:
 *   data    u8  [total]  payloads back to back
 *   offsets u64 [N+1]    payload i is data[offsets[i] .. offsets[i+1])
 *   label   i64 [N]
 *   shape   u32 [N][3]   height, width, channels
 *   codec   u8  [N]
 *   attributes of /samples: sluice_layout (u32, 1), count (u64),
 *   classes (fixed-length strings [K], absent when K = 0), num_classes
 *   (u32), writer (string). */
#ifndef SLUICE_FORMATS_LAYOUT_H
#define SLUICE_FORMATS_LAYOUT_H

#include <stdint.h>
#include <string.h>

#include "common/endian.h"

#define SL_LMDB_LAYOUT_VERSION 2u
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

#define SL_HDF5_LAYOUT_VERSION 1u
#define SL_HDF5_GROUP "/samples"

/* The codec byte of a record, index entry or HDF5 row: an sl_codec of
 * codecs/codec.h (1 JPEG, 2 PNG, 3 raw). Formats sits below codecs, so it
 * checks only what the layout needs: the byte's range, and that a raw
 * payload holds height * width * channels bytes. loader/dataset.c, which
 * sees both headers, asserts that the numbers agree. */
#define SL_LAYOUT_CODEC_FIRST 1u
#define SL_LAYOUT_CODEC_LAST 3u
#define SL_LAYOUT_CODEC_RAW 3u

/* Longest class name a writer accepts (bytes, without the NUL). */
#define SL_CLASS_NAME_MAX 255u
/* Most classes a file may declare. */
#define SL_CLASSES_MAX (1u << 20)

/* The fields of one record's header. */
typedef struct sl_record_hdr {
  uint16_t version;
  uint8_t codec;
  uint8_t channels;
  uint16_t height;
  uint16_t width;
  int32_t label;
  uint32_t length;
} sl_record_hdr;

/* One 16-byte entry of an LMDB index chunk. */
static inline void sl_ix_entry_encode(uint8_t out[SL_LMDB_IX_ENTRY],
                                      const sl_record_hdr *h) {
  sl_put_le32(out, h->length);
  sl_put_le32(out + 4, (uint32_t)h->label);
  sl_put_le16(out + 8, h->height);
  sl_put_le16(out + 10, h->width);
  out[12] = h->codec;
  out[13] = h->channels;
  sl_put_le16(out + 14, 0);
}

static inline void sl_ix_entry_decode(const uint8_t in[SL_LMDB_IX_ENTRY],
                                      sl_record_hdr *h) {
  h->version = SL_LMDB_LAYOUT_VERSION;
  h->length = sl_get_le32(in);
  h->label = (int32_t)sl_get_le32(in + 4);
  h->height = sl_get_le16(in + 8);
  h->width = sl_get_le16(in + 10);
  h->codec = in[12];
  h->channels = in[13];
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
  sl_put_le32(out + 20, 0);
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
  return 0;
}

#endif
