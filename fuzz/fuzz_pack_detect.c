/* libFuzzer target: what `sluice pack --coco` and `--voc` make of an
 * untrusted annotation file (tools/pack/pack_coco.c over libcjson,
 * tools/pack/pack_voc.c over libexpat): the input, after its first byte, is
 * written as a COCO instances JSON (first byte even) or as a VOC
 * Annotations/000001.xml (odd), and scanned (no image is read: the scan
 * only lists them). Checked beyond ASan/UBSan: a refused file says why; an
 * accepted one has every box finite with x0 <= x1, y0 <= y1 and a label
 * below its class count, and at most SL_BOXES_MAX boxes an image. Seeds in
 * fuzz/corpus_pack_detect. Build and run: fuzz/run.sh. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/core/boxes.h"
#include "tools/pack/pack_detect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int spit(const char *path, const uint8_t *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  int ok = fwrite(p, 1, n, f) == n;
  return fclose(f) == 0 && ok ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const char *tmp = getenv("TMPDIR");
  char dir[256], file[320];
  snprintf(dir, sizeof dir, "%s/fuzz_pack_detect.%ld", tmp ? tmp : "/tmp",
           (long)getpid());
  bool voc = data[0] & 1;
  mkdir(dir, 0755);
  if (voc) {
    snprintf(file, sizeof file, "%s/Annotations", dir);
    mkdir(file, 0755);
    snprintf(file, sizeof file, "%s/Annotations/000001.xml", dir);
  } else {
    snprintf(file, sizeof file, "%s/instances.json", dir);
  }
  if (spit(file, data + 1, size - 1) != 0)
    abort();
  sl_pack_inputs in;
  char ids[1024], msg[1024] = "";
  int rc =
      voc ? sl_pack_scan_voc(&in, dir, NULL, ids, sizeof ids, msg, sizeof msg)
          : sl_pack_scan_coco(&in, file, dir, ids, sizeof ids, msg, sizeof msg);
  if (rc != 0 && !msg[0])
    abort(); /* a refusal says why */
  for (size_t i = 0; rc == 0 && i < in.n; i++) {
    const sl_pack_item *it = &in.items[i];
    if (it->nboxes > SL_BOXES_MAX || (it->nboxes && !it->boxes))
      abort();
    for (uint32_t k = 0; k < it->nboxes; k++)
      if (sl_box_check(&it->boxes[k], in.nclasses))
        abort();
  }
  sl_pack_inputs_free(&in);
  unlink(file);
  return 0;
}
