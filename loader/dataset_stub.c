/* Weak stand-in for dataset.c, for programs that link the loader without
 * the dataset readers and the pipeline (and for builds without them):
 * sl_loader_open reports it; sl_loader_open_with still works. Where
 * dataset.c is linked (libsluice, the CLI), its definition wins. */
#include "loader/loader_internal.h"

__attribute__((weak)) sl_status
sl_dataset_src_open(sl_sample_src *out, const sl_config *cfg,
                    sl_out_dtype dtype, sl_out_layout layout, sl_logger *log,
                    sl_err *err) {
  return sl_err_set(err, SL_EUNSUPPORTED,
                    "this libsluice was built without the dataset readers "
                    "and the augment pipeline");
}
