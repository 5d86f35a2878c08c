/* libFuzzer target: the tar member walker of the WebDataset reader
 * (formats/files/tar.c) and the .npy header parser (formats/files/npy.c). Seeds
 * in fuzz/corpus_tar: shards webdataset's TarWriter wrote (pax headers), GNU
 * long names, pax long names, a damaged checksum, a truncated member.
 *
 * Every member handed back must lie inside the input and start on a block
 * boundary, the walk must make progress and end (0) or fail with a reason
 * (-1); a member's data is also given to the .npy parser, whose accepted
 * arrays must lie inside the data. Build and run: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/files/npy.h"
#include "formats/files/tar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static sl_tar_member m; /* 4 KiB name: not on the fuzzer's stack */
  char why[SL_TAR_NAME_MAX + 200];
  uint64_t pos = 0, steps = 0;
  for (;;) {
    uint64_t before = pos;
    int rc = sl_tar_next(data, size, &pos, &m, why, sizeof why);
    if (rc < 0) {
      if (memchr(why, '\0', sizeof why) == NULL || why[0] == '\0')
        abort(); /* a rejection always says why */
      break;
    }
    if (rc == 0)
      break;
    if (pos <= before || pos > size || pos % SL_TAR_BLOCK != 0)
      abort(); /* progress, inside, on a block */
    if (m.data > size || m.size > size - m.data || m.data % SL_TAR_BLOCK)
      abort();
    if (memchr(m.name, '\0', sizeof m.name) == NULL)
      abort();
    if (++steps > size / SL_TAR_BLOCK + 1)
      abort(); /* each member takes at least a block */
    uint64_t k, at;
    if (sl_npy_f32_vector(data + m.data, m.size, &k, &at, why, sizeof why) ==
        0) {
      if (at > m.size || k * 4 != m.size - at)
        abort();
    }
  }
  return 0;
}
