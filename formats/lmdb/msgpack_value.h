/* A reader of msgpack LMDB values as tensorpack's LMDBSerializer writes
 * them: msgpack.dumps([image, label], use_bin_type=True), where image is
 * the image file's bytes (bin, or raw str from msgpack writers before the
 * bin type) or, through msgpack_numpy, a 1-D uint8 numpy array:
 * {b'nd': True, b'type': '|u1', b'kind': b'', b'shape': [n], b'data': bin}.
 * The label is an int or nil; further items are ignored; bytes alone are
 * an image without a label. Any other array (dtype, rank) is refused,
 * naming it.
 *
 * Bounds: nesting at most SL_MSGPACK_MAX_DEPTH; every length checked
 * against the value's end; time linear in the value's size; no allocation.
 *
 * Thread safety: pure functions of their arguments. */
#ifndef SLUICE_FORMATS_MSGPACK_VALUE_H
#define SLUICE_FORMATS_MSGPACK_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/lmdb/value_record.h"

#define SL_MSGPACK_MAX_DEPTH 32

/* Parses value[0, n), which must be one msgpack object spanning it.
 * Returns 0 and fills r, or -1 with a reason in why (cap bytes) naming
 * the offset inside the value. Never reads outside value[0, n). */
int sl_msgpack_parse(const uint8_t *value, size_t n, sl_value_record *r,
                     char *why, size_t cap);

/* Steps *at over one msgpack object of p[0, n); false when p[*at, n) does
 * not start with a well-formed one (nested deeper than
 * SL_MSGPACK_MAX_DEPTH counts as malformed). */
bool sl_msgpack_skip(const uint8_t *p, size_t n, size_t *at);

#endif
