/* libFuzzer target: the Caffe Datum parser (formats/lmdb/datum.c) and the image
 * header sniffer the foreign LMDB reader runs on every value at open
 * (formats/core/image_sniff.c). Seeds in fuzz/corpus_datum: raw, encoded,
 * AnnotatedDatum, packed and unpacked float_data, negative labels.
 *
 * Every input must parse or be rejected with a reason; a parsed Datum's
 * data field must lie inside the input, and sl_datum_floats must write
 * exactly the count the parse reported. Build and run: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/core/image_sniff.h"
#include "formats/lmdb/datum.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sl_datum d;
  char why[256];
  if (sl_datum_parse(data, size, &d, why, sizeof why) != 0) {
    if (memchr(why, '\0', sizeof why) == NULL || why[0] == '\0')
      abort(); /* a rejection always says why */
    return 0;
  }
  if (d.has_data && (d.data_off > size || d.data_len > size - d.data_off))
    abort();
  if (d.floats > size / 4)
    abort(); /* each float takes at least 4 bytes of the input */
  if (d.floats) {
    float *f = malloc((size_t)d.floats * sizeof *f);
    if (f) {
      if (sl_datum_floats(data, size, f, d.floats) != d.floats)
        abort();
      free(f);
    }
  }
  if (d.has_data) {
    sl_sniff s;
    (void)sl_sniff_image(data + d.data_off, d.data_len, &s);
  }
  return 0;
}
