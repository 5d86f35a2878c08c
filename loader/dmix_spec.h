/* dataset.mix and dataset.weights read into a list: which datasets a mixed
 * loader reads and by what weight (dmix_order.h says what a weight does).
 *
 * Thread safety: pure. Memory: the spec holds a copy of the paths' text
 * (SL_DMIX_TEXT_MAX bytes), no allocation. */
#ifndef SLUICE_LOADER_DMIX_SPEC_H
#define SLUICE_LOADER_DMIX_SPEC_H

#include <stdint.h>

#include "common/error.h"
#include "loader/dmix_member.h"

#define SL_DMIX_TEXT_MAX 8192

/* dataset.mix_labels (the order of its choices in options.def). */
typedef enum sl_dmix_labels {
  SL_DMIX_LABELS_SHARED,
  SL_DMIX_LABELS_OFFSET
} sl_dmix_labels;

typedef struct sl_dmix_spec {
  uint32_t n;                    /* datasets; 0: no mix (dataset.mix unset) */
  uint32_t path_at[SL_DMIX_MAX]; /* offsets into text: a copy of the spec
                                    stays whole */
  double weight[SL_DMIX_MAX];
  char text[SL_DMIX_TEXT_MAX];
} sl_dmix_spec;

/* Reads paths (dataset.mix: a comma list, blanks around items ignored) and
 * weights (dataset.weights: a number > 0 per path). paths "" gives n 0
 * and needs weights "". Errors (SL_ECONFIG, naming the key and the item):
 * an empty item, more than SL_DMIX_MAX paths, text too long, a weight
 * that is not a finite number > 0, or counts that differ. */
/* The k-th path. */
static inline const char *sl_dmix_spec_path(const sl_dmix_spec *s, uint32_t k) {
  return s->text + s->path_at[k];
}

sl_status sl_dmix_spec_parse(sl_dmix_spec *out, const char *paths,
                             const char *weights, sl_err *err);

#endif
