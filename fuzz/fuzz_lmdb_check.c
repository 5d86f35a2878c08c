/* libFuzzer target: the structural check the LMDB reader runs on a file's
 * map before liblmdb walks it (formats/lmdb/lmdb_check.c): meta pages, branch
 * and leaf pages, overflow runs, a named sub-database. Seeds in
 * fuzz/corpus_lmdb (a sluice LMDB). The first input byte picks the mode
 * (thorough or not, main tree or sub-database "images").
 *
 * Every input must pass or be rejected with a message; a pass must report
 * the first value inside the file. Build and run: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/core/source_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  uint8_t mode = data[0];
  /* An exact-size copy: ASan sees any read past the file's end. */
  size_t n = size - 1;
  uint8_t *map = malloc(n ? n : 1);
  if (!map)
    return 0;
  memcpy(map, data + 1, n);
  sl_err err = {0};
  uint64_t entries = 0, first = 0;
  sl_status st =
      sl_lmdb_check(map, n, "fuzz.lmdb", (mode & 2) ? "images" : NULL, mode & 1,
                    &entries, &first, NULL, &err);
  if (st != SL_OK && err.msg[0] == '\0')
    abort(); /* a rejection always says why */
  if (st == SL_OK && entries && first >= n)
    abort();
  free(map);
  return 0;
}
