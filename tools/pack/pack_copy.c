/* See pack_copy.h: one sample of a dataset into a writer, through the public
 * API only (sl_dataset_*, sl_writer_*). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "sluice.h"
#include "tools/pack/pack_copy.h"

static int fail_ds(const char *cmd, sl_dataset *ds) {
  fprintf(stderr, "sluice %s: %s\n", cmd, sl_dataset_errmsg(ds));
  return 1;
}

static int fail_w(const char *cmd, sl_writer *w) {
  fprintf(stderr, "sluice %s: %s\n", cmd, sl_writer_errmsg(w));
  return 1;
}

int sl_pack_copy_sample(const char *cmd, sl_dataset *ds, sl_writer *w,
                        uint64_t i, uint8_t **buf, size_t *cap,
                        const char *from) {
  sl_sample_meta m;
  if (sl_dataset_info(ds, i, &m) != SL_OK)
    return fail_ds(cmd, ds);
  if (m.label < -1) {
    fprintf(stderr,
            "sluice %s: %s: sample %" PRIu64 " has label %" PRId32
            "; sluice's layout stores class indexes >= 0 or -1 (none)\n",
            cmd, from, i, m.label);
    return 1;
  }
  bool file = m.codec == SL_IMAGE_JPEG || m.codec == SL_IMAGE_PNG ||
              m.codec == SL_IMAGE_JPEG_LEVELS;
  size_t need =
      file ? (size_t)m.stored_bytes : (size_t)m.width * m.height * m.channels;
  if (need > *cap) {
    uint8_t *b = realloc(*buf, need);
    if (!b) {
      fprintf(stderr, "sluice %s: no memory for %zu bytes\n", cmd, need);
      return 1;
    }
    *buf = b;
    *cap = need;
  }
  char name[SL_SAMPLE_NAME_MAX + 1] = "";
  if (m.name_bytes && sl_dataset_name(ds, i, name, sizeof name) != SL_OK)
    return fail_ds(cmd, ds);
  size_t len;
  sl_status st = file ? sl_dataset_read(ds, i, *buf, *cap, &len)
                      : sl_dataset_decode(ds, i, *buf, *cap, &len);
  if (st != SL_OK)
    return fail_ds(cmd, ds);
  const uint8_t *bytes = *buf;
  if (m.codec == SL_IMAGE_JPEG_LEVELS && /* its full-size JPEG */
      !sl_image_level(*buf, len, 0, &bytes, &len, NULL, NULL)) {
    fprintf(stderr,
            "sluice %s: %s: sample %" PRIu64 ": damaged level "
            "record\n",
            cmd, from, i);
    return 1;
  }
  /* Boxes (a sluice file's) travel with their image. */
  const sl_box *boxes = NULL;
  uint32_t nboxes = 0;
  if (sl_dataset_boxes(ds, i, &boxes, &nboxes) != SL_OK)
    return fail_ds(cmd, ds);
  if (!file && nboxes) {
    fprintf(stderr,
            "sluice %s: %s: sample %" PRIu64 ": a raw image with boxes "
            "(sl_writer_add_pixels takes none)\n",
            cmd, from, i);
    return 1;
  }
  st = file ? sl_writer_add_annotated(w, bytes, len, m.label, m.targets, name,
                                      boxes, nboxes)
            : sl_writer_add_pixels(w, *buf, m.width, m.height, m.channels,
                                   m.label, m.targets, name);
  return st == SL_OK ? 0 : fail_w(cmd, w);
}
