/* The loader's settings: a config read once, validated, into typed values.
 *
 * sl_loader_open builds one sl_settings at its top and everything below it
 * (backend choice, memory plan, sample source, sampler, pool, ring, the
 * state blob's fingerprints) takes that struct, never the sl_config. The
 * stages below the loader get their parts as their own option structs
 * (aug, mix, source, io): io/, formats/ and augment/ never see a config.
 * settings.c is the one file of the library that reads option values;
 * the experimental planning calls (plan_api.c) and the other entry points
 * that take a config (sl_dataset_open, sl_augment_policy_draw) build a
 * settings struct the same way.
 *
 * Thread safety: the functions fill the caller's struct and touch nothing
 * else (the config is only read); any thread may call them. No memory is
 * allocated; the strings (dataset path, source options) point into the
 * config and are valid while it is and unchanged. */
#ifndef SLUICE_LOADER_SETTINGS_H
#define SLUICE_LOADER_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "augment/mix.h"
#include "augment/pipeline.h"
#include "common/error.h"
#include "formats/core/source.h"
#include "io/io_reader.h"
#include "loader/config.h"
#include "loader/dmix_spec.h"
#include "loader/fetch_ahead.h"
#include "loader/sampler.h"
#include "loader/schedule.h"

/* The recipe's keys, augment.auto .. augment.num_classes in options.def. */
#define SL_SETTINGS_RECIPE_KEYS                                                \
  (SL_OPT_AUGMENT_NUM_CLASSES - SL_OPT_AUGMENT_AUTO + 1)

typedef struct sl_device_settings {
  sl_backend_kind backend; /* device.backend */
  int gpu;                 /* device.gpu */
  uint64_t vram_budget;    /* device.vram_budget */
  int staging;             /* device.staging: pinned host batches */
  int prefetch;            /* device.prefetch: slots ahead of the consumer */
} sl_device_settings;

typedef struct sl_settings {
  /* loader.* */
  int batch_size;
  int workers; /* loader.workers: 0 = the online CPUs */
  bool eval;   /* loader.mode = eval */
  bool skip_bad;
  int max_boxes; /* loader.max_boxes: 0 = the dataset's largest count */
  /* The sampler's settings (eval: sequential, never drops); count is 0,
   * the source's count is filled in at open. */
  sl_sampler_config sampler;
  sl_schedule sched; /* resolution.*, and loader.mode */
  /* The batch as the consumer gets it: augment.dtype, .layout, .mean and
   * .std (one value repeated for each channel). */
  sl_dtype dtype;
  sl_layout layout;
  float mean[3], std[3];
  /* What the workers write: the augment stage's parameters (eval: center
   * crop, no flip, no recipe ops). dtype and layout are the batch's until
   * sl_settings_use_backend says the backend converts (then u8 NHWC). */
  sl_aug_params aug;
  bool converts; /* the ring's backend converts on the device */
  /* Batch mixing, all off in eval; classes is augment.num_classes, 0 for
   * the dataset's class count (known once it is open). */
  sl_mix_params mix;
  /* The recipe's keys (SL_SETTINGS_RECIPE_KEYS of them, from augment.auto)
   * as the config's canonical text (sl_config_get's): the augmentation
   * fingerprint of the state blob hashes these bytes. Empty when the key
   * could not be written (never for the options of today). */
  char recipe_text[SL_SETTINGS_RECIPE_KEYS][256];
  /* dataset.* */
  const char *dataset_path; /* "" when unset */
  /* dataset.mix, .weights (n 0: one dataset, dataset_path) and
   * .mix_labels = offset. */
  sl_dmix_spec dmix;
  bool dmix_offset_labels;
  bool dmix_member;     /* a dataset of a mix is opened (its classes counted) */
  uint64_t chunk_cache; /* dataset.chunk_cache, bytes */
  sl_source_opts source;
  /* The configured part of the reader's options (loader.io, io.*, the
   * log callback; batch_size is loader.batch_size); the file part comes
   * from sl_io_opts_from_source once the dataset is open. */
  sl_io_opts io;
  bool level_only; /* io.level_only: a level record's chosen level only */
  sl_fetch_ahead_opts fetch_ahead; /* io.prefetch_shards, io.fetch_threads */
  bool remote_ranges;              /* io.remote_read = ranges */
  unsigned range_requests;         /* io.range_requests */
  sl_device_settings device;
  sl_log_fn log; /* sl_config_set_log's callback (NULL: none) */
  void *log_user;
} sl_settings;

/* Validates cfg (sl_config_validate's checks, the message in err; cfg is
 * not written) and reads it into s. SL_OK, or SL_ECONFIG with the key and
 * value named in err. */
sl_status sl_settings_from_config(sl_settings *s, const sl_config *cfg,
                                  sl_err *err);

/* Reads cfg into s without validating it: for a config already validated,
 * or for callers that never did (the values are then whatever was set). */
void sl_settings_read(sl_settings *s, const sl_config *cfg);

/* Records whether the ring's backend converts on the device: the workers
 * then write u8 NHWC (aug.dtype, aug.layout) and the device makes the
 * batch's dtype and layout, so u8 crosses PCIe. */
void sl_settings_use_backend(sl_settings *s, bool converts);

#endif
