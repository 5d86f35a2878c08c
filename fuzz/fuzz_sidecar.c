/* libFuzzer target: the sidecar index parser of foreign shards at URLs
 * (formats/files/shard_sidecar.c), which reads a file of the cache folder
 * before the set's shards are opened. Seeds in fuzz/corpus_sidecar:
 * sidecars the WebDataset remote tests wrote (version 1) and one of
 * RecordIO shards with a multi-part record (version 2, recordio_joins_v2).
 *
 * The sidecar checks its checksum and that its sections add up to its
 * size before anything else, which random bytes never pass: when the
 * input's first byte is odd, the harness writes the magic and version,
 * small counts drawn from the input whose sections add up to its size,
 * and the checksum into a copy first, so the fuzzer reaches the names,
 * the shard records, the samples and (version 2) RecordIO's joins; the
 * second byte's low bit picks version 1's shorter header. Every sample
 * and join of a parsed sidecar is then decoded. Build and run:
 * fuzz/run.sh. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/endian.h"
#include "formats/core/crc32c.h"
#include "formats/files/shard_sidecar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Header fields whose sections add up to size, from the input's bytes. */
static void make_sound(uint8_t *buf, size_t size) {
  bool v1 = buf[1] & 1;
  uint32_t opts = 1 + buf[20] % 32, k = buf[16] % 3;
  uint64_t nshards = 1 + buf[24] % 4;
  uint64_t header = v1 ? SL_SIDECAR_HEADER_V1 : SL_SIDECAR_HEADER;
  uint64_t fixed = header + 4 + opts + nshards * 24;
  if (size < fixed)
    return;
  uint64_t names = buf[40] & 1; /* the names section, or not */
  uint64_t rest = size - fixed, per = 24 + 4 * k + 8 * names;
  uint64_t count = buf[32] % 8;
  if (count > rest / per)
    count = rest / per;
  uint64_t joins = v1 ? 0 : buf[64] % 4;
  if (joins > (rest - count * per) / 16)
    joins = (rest - count * per) / 16;
  memcpy(buf, SL_SIDECAR_MAGIC, 8);
  sl_put_le32(buf + 8, v1 ? 1 : SL_SIDECAR_VERSION);
  sl_put_le32(buf + 16, k);
  sl_put_le32(buf + 20, opts);
  sl_put_le64(buf + 24, nshards);
  sl_put_le64(buf + 32, count);
  sl_put_le64(buf + 48, rest - count * per - joins * 16);
  sl_put_le64(buf + 56, names);
  if (!v1)
    sl_put_le64(buf + 64, joins);
  sl_put_le32(buf + size - 4, sl_crc32c(buf, size - 4));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *buf = malloc(size ? size : 1);
  if (!buf)
    return 0;
  memcpy(buf, data, size);
  if (size >= SL_SIDECAR_HEADER + 4 && (data[0] & 1))
    make_sound(buf, size);
  sl_sidecar s;
  sl_err err = {0};
  if (sl_sidecar_parse(&s, buf, size, "fuzz", &err) == SL_OK) {
    float *t = malloc(((size_t)s.target_width + 1) * sizeof *t);
    for (uint64_t i = 0; t && i < s.count; i++) {
      sl_sample_info e;
      uint64_t at;
      sl_sidecar_sample(&s, i, &e, t, &at);
    }
    free(t);
    for (uint64_t j = 0; j < s.njoins; j++) {
      sl_sidecar_join a = sl_sidecar_join_at(&s, j);
      if (a.sample >= s.count ||
          (j > 0 && a.sample <= sl_sidecar_join_at(&s, j - 1).sample))
        abort();
    }
    for (uint64_t k = 0; k < s.nshards; k++)
      if (!s.shards[k].name[0] || strlen(s.shards[k].etag) >= 80 ||
          s.shards[k].first > s.count)
        abort();
    sl_sidecar_free(&s);
  } else if (memchr(err.msg, '\0', sizeof err.msg) == NULL || !err.msg[0]) {
    abort();
  }
  free(buf);
  return 0;
}
