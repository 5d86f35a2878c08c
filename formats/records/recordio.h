/* MXNet RecordIO (dmlc-core's recordio.h, the .rec files im2rec and
 * InsightFace write) read by hand: the record framing and the image
 * record's IRHeader (mxnet/recordio.py: pack, unpack).
 *
 * A record is one or more parts, each
 *   u32 magic 0xced7230a, u32 lrecord = cflag << 29 | length,
 *   length bytes, zero padding to a multiple of 4,
 * all little-endian. cflag 0 is a whole record; a payload that holds the
 * magic at a 4-byte aligned position was split there by the writer into
 * parts of cflag 1 (first), 2 (middle) and 3 (last), the magic itself left
 * out: the reader joins the parts, putting the magic back between them.
 *
 * An image record's payload is an IRHeader (struct 'IfQQ', 24 bytes:
 * u32 flag, f32 label, u64 id, u64 id2), then, when flag > 0, flag f32
 * labels (the header's own label is then unused), then the image file.
 *
 * Thread safety: pure functions. Time: linear in the bytes walked. */
#ifndef SLUICE_FORMATS_RECORDIO_H
#define SLUICE_FORMATS_RECORDIO_H

#include <stddef.h>
#include <stdint.h>

#define SL_RECIO_MAGIC 0xced7230au
#define SL_IRHEADER_BYTES 24

/* One record, as walked from its first part's header. */
typedef struct sl_recio_rec {
  uint64_t data;   /* the first part's data, from the record's start (8) */
  uint64_t span;   /* from the record's start to its last part's data end */
  uint64_t next;   /* from the record's start to the next record (padded) */
  uint64_t joined; /* payload bytes once joined */
  uint64_t parts;  /* 1 for a whole record */
} sl_recio_rec;

/* Walks the record at p[0, avail) (p: its first part's header). With out
 * (cap bytes, at least r->joined: walk once without out to learn it) the
 * joined payload is written there. Returns NULL, or a reason (in why, cap
 * bytes) naming the part and its offset from p. */
const char *sl_recio_walk(const uint8_t *p, uint64_t avail, sl_recio_rec *r,
                          uint8_t *out, size_t cap, char *why, size_t why_cap);

typedef struct sl_irheader {
  uint32_t flag; /* 0: label below; else flag float labels follow */
  float label;
  uint64_t id, id2;
  uint64_t bytes; /* 24 + 4 × flag: where the image starts */
} sl_irheader;

/* Parses the IRHeader at the start of payload[0, n). Returns NULL or a
 * reason (flag labels past the payload's end). */
const char *sl_irheader_parse(const uint8_t *payload, size_t n, sl_irheader *h,
                              char *why, size_t why_cap);

/* Float label q < h->flag of the payload (little-endian f32). */
float sl_irheader_label(const uint8_t *payload, uint32_t q);

/* The .idx MXIndexedRecordIO writes beside a .rec: lines
 * `key<whitespace>offset` (the key any run of bytes but space, tab and
 * NUL; the offset decimal; blank lines skipped), each at most
 * SL_RECIO_IDX_LINE bytes with its newline. */
#define SL_RECIO_IDX_LINE 511u
#define SL_RECIO_IDX_MAX (1ull << 30) /* bytes of one .idx read at open */

/* The next offset of idx[*pos, len): 1 with *offset (and *pos past its
 * line), 0 at the end, -1 for a line that is not `key offset` or is
 * longer than SL_RECIO_IDX_LINE. *line counts the lines read (the bad one
 * included). */
int sl_recio_idx_next(const uint8_t *idx, size_t len, size_t *pos,
                      uint64_t *line, uint64_t *offset);

/* The name of the .idx beside a RecordIO file (a path or URL):
 * PREFIX.idx for PREFIX.rec, NAME.idx for another NAME, into buf. Returns
 * 0, or -1 when it does not fit in cap bytes. */
int sl_recio_idx_name(const char *path, char *buf, size_t cap);

#endif
