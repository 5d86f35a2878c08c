/* One sample of an open dataset copied into a writer, as `sluice pack
 * --from` stores it: JPEG and PNG samples as files (JPEGs rewritten
 * losslessly into the restart layout unless the writer keeps them), the
 * full-size JPEG of a level record, raw arrays and WebP decoded to pixels;
 * label, targets, name and boxes kept. Shared by `pack --from` and
 * `info --speed` (which packs a sample of a dataset to time it). */
#ifndef SLUICE_TOOLS_PACK_COPY_H
#define SLUICE_TOOLS_PACK_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "sluice.h"

/* Copies sample i of ds into w. *buf (*cap bytes, NULL/0 at first) grows
 * to the largest sample copied; the caller frees it. On failure prints
 * "sluice CMD: message" (naming from and the sample) and returns 1; 0 on
 * success. */
int sl_pack_copy_sample(const char *cmd, sl_dataset *ds, sl_writer *w,
                        uint64_t i, uint8_t **buf, size_t *cap,
                        const char *from);

#endif
