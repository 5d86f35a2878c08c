/* libFuzzer target: the pickle and msgpack value readers of the foreign
 * LMDB walk (formats/lmdb/pickle_value.c, formats/lmdb/msgpack_value.c) and the
 * value sniffer beside them (formats/lmdb/value_sniff.c). The first byte picks
 * the reader (even: pickle, odd: msgpack); the rest is the value. Seeds in
 * fuzz/corpus_pickle: what pickle.dumps (protocols 2-5, tuples, lists,
 * bytearrays, __reduce__, numpy arrays) and msgpack / msgpack_numpy wrote
 * for (image bytes, label) records, each behind its mode byte.
 *
 * Every input must parse or be rejected with a reason; a parsed record's
 * image bytes must lie inside the value. Build and run: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/lmdb/msgpack_value.h"
#include "formats/lmdb/pickle_value.h"
#include "formats/lmdb/value_sniff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const uint8_t *v = data + 1;
  size_t n = size - 1;
  sl_value_record r;
  char why[256];
  int rc = data[0] & 1 ? sl_msgpack_parse(v, n, &r, why, sizeof why)
                       : sl_pickle_parse(v, n, &r, why, sizeof why);
  if (rc != 0) {
    if (memchr(why, '\0', sizeof why) == NULL || why[0] == '\0')
      abort(); /* a rejection always says why */
  } else if (r.image_off > n || r.image_len > n - r.image_off) {
    abort();
  }
  if (n > 0) {
    char kind[64];
    (void)sl_value_sniff(v, n, kind, sizeof kind);
  }
  size_t at = 0;
  if (sl_msgpack_skip(v, n, &at) && at > n)
    abort();
  return 0;
}
