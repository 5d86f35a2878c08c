/* libFuzzer target: the EXIF orientation readers `sluice pack` runs on
 * every photo it packs (tools/pack/pack_exif.c): a JPEG's APP1 segment walk and
 * a PNG's chunk walk, then the TIFF IFD0 walk. Seeds in fuzz/corpus_exif:
 * JPEGs with little- and big-endian EXIF, a PNG with eXIf before IDAT.
 *
 * Every input must give an orientation in 1..8 (1 for anything unreadable)
 * without reading outside it. Build and run: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/pack/pack_image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact-size copy: ASan sees any read past the end. */
  uint8_t *b = malloc(size ? size : 1);
  if (!b)
    return 0;
  memcpy(b, data, size);
  int j = sl_exif_orientation(b, size);
  int p = sl_png_exif_orientation(b, size);
  if (j < 1 || j > 8 || p < 1 || p > 8)
    abort();
  free(b);
  return 0;
}
