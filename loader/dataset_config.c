/* sl_dataset_open (sluice.h, "Datasets"): the dataset.* keys of a config,
 * read as the loader reads them (loader/settings.h), then the dataset
 * stage's open. Here rather than in dataset/ because only the loader reads
 * the config; dataset/ takes the reader's options as a struct. */
#include "dataset/dataset_open.h"
#include "loader/settings.h"

sl_status sl_dataset_open(sl_dataset **out, const sl_config *cfg) {
  if (!cfg) {
    if (out)
      *out = NULL;
    return SL_EINVAL;
  }
  sl_settings s;
  sl_settings_read(&s, cfg);
  return sl_dataset_open_opts(out, s.dataset_path, &s.source);
}
