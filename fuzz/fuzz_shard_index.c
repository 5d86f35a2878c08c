/* libFuzzer target: the sharded dataset's index parser
 * (formats/shards/shard_index.c), which reads sluice.index before any shard is
 * opened. Seeds in fuzz/corpus_shard_index: indexes `sluice index` wrote.
 *
 * The index checks its own size and crc32c before anything else, which
 * random bytes never pass: when the input's first byte is odd, the harness
 * writes the magic, the layout, the stated size and the crc32c into a copy
 * first, so the fuzzer reaches the sections behind them. Every sample
 * entry of a parsed index is then read. Build and run: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "formats/core/crc32c.h"
#include "formats/shards/shard_index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put_le(uint8_t *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *buf = malloc(size ? size : 1);
  if (!buf)
    return 0;
  memcpy(buf, data, size);
  if (size >= SL_SHARD_INDEX_HDR + 4 && (data[0] & 1)) {
    memcpy(buf, SL_SHARD_INDEX_MAGIC, 8);
    put_le(buf + 8, SL_SHARD_INDEX_LAYOUT, 4);
    put_le(buf + 56, size, 8);
    put_le(buf + size - 4, sl_crc32c(buf, size - 4), 4);
  }
  sl_shard_index ix;
  memset(&ix, 0, sizeof ix);
  sl_err err = {0};
  if (sl_shard_index_parse(&ix, buf, size, "fuzz", &err) == SL_OK) {
    for (uint64_t i = 0; i < ix.count; i++) {
      uint64_t off;
      uint32_t len;
      int32_t label;
      uint16_t h, w, nl;
      uint8_t codec, ch;
      sl_shard_index_sample(&ix, i, &off, &len, &label, &h, &w, &codec, &ch,
                            &nl);
    }
    for (uint64_t k = 0; k < ix.nshards; k++)
      if (!ix.shards[k].name || strlen(ix.shards[k].name) == 0)
        abort();
  } else if (memchr(err.msg, '\0', sizeof err.msg) == NULL || !err.msg[0]) {
    abort();
  }
  sl_shard_index_free(&ix);
  return 0;
}
