/* Opening a dataset from typed options, for sl_dataset_open
 * (loader/dataset_config.c), which reads them from a config: the dataset
 * stage takes the reader's options as a struct and never sees a config.
 *
 * Thread safety: as sl_dataset_open_file. */
#ifndef SLUICE_DATASET_DATASET_OPEN_H
#define SLUICE_DATASET_DATASET_OPEN_H

#include "formats/core/source.h"
#include "sluice.h"

/* sl_dataset_open_file with the reader's options so (dataset.format,
 * dataset.entries and the rest; NULL: the defaults). A path that is NULL or
 * "" fails with SL_ECONFIG, "dataset.path is not set", in a handle that
 * holds the message, as every failed open. */
sl_status sl_dataset_open_opts(sl_dataset **out, const char *path,
                               const sl_source_opts *so);

#endif
