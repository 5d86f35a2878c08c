/* What the pickle and msgpack value readers (formats/lmdb/pickle_value.h,
 * formats/lmdb/msgpack_value.h) find in one LMDB value: where the image file's
 * bytes lie inside it, and the label beside them. The bytes must be
 * contiguous in the value so that reads after open fetch them straight
 * from the file, as for a Caffe Datum's data field. */
#ifndef SLUICE_FORMATS_VALUE_RECORD_H
#define SLUICE_FORMATS_VALUE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sl_value_record {
  size_t image_off; /* the image bytes: value[image_off, +image_len) */
  size_t image_len;
  bool has_label; /* an int beside the image (None or absent: false) */
  int64_t label;
} sl_value_record;

#endif
