/* The loader object, shared by loader.c (API, epochs) and loader_state.c
 * (state blob, stats). Not for use outside loader/. */
#ifndef SLUICE_LOADER_IMPL_H
#define SLUICE_LOADER_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "loader/fingerprint.h"
#include "loader/loader_internal.h"
#include "loader/pool.h"
#include "loader/ring.h"
#include "loader/sampler.h"
#include "loader/schedule.h"

/* A loader whose open failed: it holds only the message (ring NULL). */
#define SL_LOADER_FAILED(ld) ((ld)->ring == NULL)
/* Makes *out such a loader holding err (NULL when even that cannot be
 * allocated); returns err's code. */
sl_status sl_loader_open_failed(sl_loader **out, const sl_err *err);
/* What a call on it returns: SL_ESTATE, the open's message kept. */
sl_status sl_loader_not_open(sl_loader *ld);

struct sl_loader {
  sl_err err; /* last error of a call on the loader */
  sl_logger log;
  /* Settings, copied from sl_settings at open. */
  sl_schedule sched;
  sl_sampler_config sampler_cfg;
  int batch_size;
  sl_dtype dtype, src_dtype;
  sl_layout layout, src_layout;
  float mean[3], std[3];
  bool skip_bad, eval;
  uint64_t schedule_fp, augment_fp;         /* sl_settings_fingerprints */
  uint16_t augment_tags[SL_AUGMENT_GROUPS]; /* a hash of each group */
  sl_loader_plan plan;
  char backend_note[160]; /* why device.backend = auto fell back, or "" */
  /* Parts. */
  sl_sample_src src;
  sl_sampler *sampler;
  sl_ring *ring;
  sl_pool *pool;
  uint64_t nbatches;
  /* Consumer-side state. */
  bool started;
  uint64_t epoch;
  int res;
  uint64_t delivered;      /* batches of the epoch handed out (or skipped by
                              a resume): the resume point */
  uint64_t epoch_nbatches; /* of the epoch's deal (nbatches but after an
                              elastic resume) */
  /* The epoch deals the rest its npast earlier deals left (elastic
   * resumes, sampler.h), or npast 0: all of it. */
  sl_sampler_deal past[SL_SAMPLER_DEALS_MAX];
  uint32_t npast;
  uint64_t epoch_batches; /* handed out since start_epoch */
  uint64_t batches;       /* handed out since open */
  uint64_t consumer_wait_ns;
  uint64_t epoch_t0;
};

/* Starts epoch at batch `first` (0 normally; the resume point on restore)
 * of the deal ld->past and npast say (see sampler.h). */
sl_status sl_loader_start_at(sl_loader *ld, uint64_t epoch, uint64_t first);

#endif
