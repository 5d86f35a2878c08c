/* The typed options of the stages below the loader, built from the config
 * and the open dataset. Only the loader reads the config: io/, formats/ and
 * augment/ take these structs and never see an sl_config.
 *
 * Thread safety: each function fills the caller's struct and touches nothing
 * else; any thread may call them. No memory is allocated. */
#ifndef SLUICE_LOADER_STAGE_OPTIONS_H
#define SLUICE_LOADER_STAGE_OPTIONS_H

#include "augment/mix.h"
#include "augment/pipeline.h"
#include "formats/source.h"
#include "io/io_reader.h"
#include "loader/config.h"

/* The augment stage's parameters from a validated config (augment.*,
 * decode.max_pixels): channels 3, and mean/std of one value repeated for
 * each channel. loader.mode = eval takes a center crop and no flip. */
void sl_aug_params_from_config(sl_aug_params *p, const sl_config *cfg);

/* Batch mixing (augment.mixup, .cutmix, .mix_prob, .mix_switch_prob,
 * .label_smoothing, .num_classes; classes from the dataset when
 * num_classes is 0); all off with loader.mode = eval. */
void sl_mix_params_from_config(sl_mix_params *p, const sl_config *cfg,
                               uint32_t dataset_classes);

/* The source's options from dataset.format, .layout, .channel_order,
 * .label_file and .lmdb_db (pointers into cfg: valid while cfg is). */
void sl_source_opts_from_config(sl_source_opts *o, const sl_config *cfg);

/* The configured part of the reader's options (loader.io, io.*, the log
 * callback); batch_size is the loader's (the mmap hint distance). The file
 * part comes from sl_io_opts_from_source. */
void sl_io_opts_from_config(sl_io_opts *o, const sl_config *cfg,
                            unsigned batch_size);

/* Fills the file part of o (fd, name, file_size, count, max_length,
 * locate) from an open source; name is the path for messages. src must
 * outlive the reader opened with o. */
void sl_io_opts_from_source(sl_io_opts *o, const sl_source *src,
                            const char *name);

#endif
