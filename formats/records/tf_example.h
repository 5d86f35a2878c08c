/* TensorFlow's tf.train.Example (tensorflow/core/example/example.proto,
 * feature.proto) read from protobuf wire format by hand:
 *
 *   message Example  { Features features = 1; }
 *   message Features { map<string, Feature> feature = 1; }
 *     (on the wire: repeated FeatureEntry { string key = 1;
 *                                           Feature value = 2; })
 *   message Feature  { oneof kind { BytesList bytes_list = 1;
 *                                   FloatList float_list = 2;
 *                                   Int64List int64_list = 3; } }
 *   message BytesList { repeated bytes value = 1; }
 *   message FloatList { repeated float value = 1 [packed = true]; }
 *   message Int64List { repeated int64 value = 1 [packed = true]; }
 *
 * The whole record is walked and every Feature checked, not only the ones
 * asked for (keys are compared as bytes; their UTF-8 is not checked). Repeated
 * scalars may be packed (wire type 2) or not (0 for int64, 5 for float);
 * unknown fields of wire types 0, 1, 2 and 5 are skipped; groups (3, 4),
 * types 6 and 7, field number 0 and a known field of the wrong wire type
 * are errors, as is a packed run whose varints do not end exactly at its
 * length. Merging follows protobuf: occurrences of Example.features merge
 * (their entries add up); a key given twice keeps its last entry (map
 * semantics); within one entry a second occurrence of the same oneof member
 * appends to its list and one of another member replaces it.
 *
 * Thread safety: pure functions of their arguments. Time: linear in the
 * record's size; no allocation. */
#ifndef SLUICE_FORMATS_EXAMPLE_H
#define SLUICE_FORMATS_EXAMPLE_H

#include <stddef.h>
#include <stdint.h>

typedef enum sl_feature_kind {
  SL_FEATURE_NONE = 0, /* the key is absent, or its Feature sets no list */
  SL_FEATURE_BYTES,
  SL_FEATURE_FLOAT,
  SL_FEATURE_INT64
} sl_feature_kind;

typedef struct sl_feature {
  sl_feature_kind kind;
  uint64_t count;    /* values in the list (0 for an empty list) */
  size_t first_off;  /* BYTES: the first value is */
  size_t first_len;  /*   record[first_off, +first_len) */
  int64_t first_int; /* INT64: the first value */
  float first_float; /* FLOAT: the first value */
} sl_feature;

/* Parses the Example in record[0, n) and reports, for each of the nkeys
 * NUL-terminated keys, its Feature in out[k] (kind NONE when absent).
 * Returns 0, or -1 with a reason in why (cap bytes) naming the message, the
 * feature's key when inside one, and the byte offset inside the record.
 * Never reads outside record[0, n). */
int sl_example_parse(const uint8_t *record, size_t n, const char *const *keys,
                     size_t nkeys, sl_feature *out, char *why, size_t cap);

/* "BytesList", "FloatList", "Int64List" or "no value". */
const char *sl_feature_kind_name(sl_feature_kind k);

#endif
