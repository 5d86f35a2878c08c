/* libFuzzer target: MXNet RecordIO's record framing and IRHeader
 * (formats/records/recordio.c), as the RecordIO reader walks a file at open and
 * as the workers join a multi-part record. Seeds in fuzz/corpus_recordio: files
 * mxrecordio.py wrote (whole records, records split inside the IRHeader and
 * into an empty middle part, flag labels).
 *
 * The input is a file: its records are walked from offset 0 as a scan
 * does; each record's parts are joined into a buffer of exactly the size
 * the walk reported, and the join must agree with it; the IRHeader must
 * leave its image inside the joined payload. Build and run: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/core/image_sniff.h"
#include "formats/records/recordio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t pos = 0;
  char why[256];
  while (pos < size) {
    sl_recio_rec r;
    if (sl_recio_walk(data + pos, size - pos, &r, NULL, 0, why, sizeof why)) {
      if (memchr(why, '\0', sizeof why) == NULL || why[0] == '\0')
        abort();
      return 0;
    }
    if (r.next == 0 || r.next > size - pos || r.span > r.next || r.parts == 0 ||
        r.data != 8 || r.joined > r.span)
      abort(); /* progress, and every byte inside the file */
    uint8_t *joined = malloc(r.joined ? (size_t)r.joined : 1);
    if (!joined)
      return 0;
    sl_recio_rec again;
    /* The span alone (as the workers read it) joins to the same bytes. */
    if (sl_recio_walk(data + pos, r.span, &again, joined, (size_t)r.joined, why,
                      sizeof why) ||
        again.joined != r.joined || again.parts != r.parts)
      abort();
    if (r.parts == 1 && memcmp(joined, data + pos + 8, (size_t)r.joined) != 0)
      abort();
    sl_irheader h;
    if (!sl_irheader_parse(joined, (size_t)r.joined, &h, why, sizeof why)) {
      if (h.bytes > r.joined)
        abort();
      for (uint32_t q = 0; q < h.flag; q++)
        (void)sl_irheader_label(joined, q);
      sl_sniff s;
      (void)sl_sniff_image(joined + h.bytes, (size_t)(r.joined - h.bytes), &s);
    }
    free(joined);
    pos += r.next;
  }
  return 0;
}
