/* Stand-in for dataset.c while formats/ or augment/ is not part of the
 * build: sl_loader_open reports it; sl_loader_open_with still works. */
#include "loader/loader_internal.h"

sl_status sl_dataset_src_open(sl_sample_src *out, const sl_config *cfg,
                              sl_out_dtype dtype, sl_out_layout layout,
                              sl_logger *log, sl_err *err) {
  return sl_err_set(err, SL_EUNSUPPORTED,
                    "this libsluice was built without the dataset readers "
                    "and the augment pipeline");
}
