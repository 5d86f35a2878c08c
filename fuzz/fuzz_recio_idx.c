/* libFuzzer target: the .idx lines MXIndexedRecordIO writes beside a .rec
 * (formats/records/recordio.c, sl_recio_idx_next), which the RecordIO
 * reader parses from a local file or from the bytes a server sent for a
 * shard at a URL. Seeds in fuzz/corpus_recio_idx: .idx files mxrecordio.py
 * wrote, one listed backwards, one with blank and CRLF lines.
 *
 * The input is an .idx: every offset it yields must come from a line of
 * its own (the position rises, by at most SL_RECIO_IDX_LINE bytes a line,
 * and stays inside the input), and the walk ends. Build and run:
 * fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>

#include "formats/records/recordio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t pos = 0, before = 0;
  uint64_t line = 0, lines_before = 0, off = 0;
  int r;
  while ((r = sl_recio_idx_next(data, size, &pos, &line, &off)) == 1) {
    if (pos <= before || pos > size || line <= lines_before ||
        line - lines_before > pos - before)
      abort(); /* progress, inside the input, a line a byte at least */
    before = pos;
    lines_before = line;
  }
  if (r != 0 && r != -1)
    abort();
  if (r == 0 && pos != size)
    abort(); /* the end is the input's end */
  return 0;
}
