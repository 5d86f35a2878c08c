/* Internal entry points of the loader, for tests and tools.
 *
 * sl_loader_open_with opens a loader on any sample source and ring backend,
 * so the pool, ring and API can be tested with synthetic samples (and a
 * poisoning or slow backend) instead of a dataset. */
#ifndef SLUICE_LOADER_INTERNAL_H
#define SLUICE_LOADER_INTERNAL_H

#include <stddef.h>

#include "common/error.h"
#include "loader/pool.h"
#include "loader/ring.h"
#include "loader/sample.h"
#include "loader/sampler.h"
#include "loader/settings.h"
#include "sluice.h"

/* The real source: the settings' dataset read through augment/'s
 * pipeline with s->aug (whose dtype/layout are u8 NHWC when the ring's
 * backend converts: sl_settings_use_backend). */
sl_status sl_sample_source_open(sl_sample_src *out, const sl_settings *s,
                                sl_logger *log, sl_err *err);

/* The datasets s->dmix lists (n >= 1) read as one, mixed by weight
 * (mix_source.c); the sampler deals them by src->members. */
sl_status sl_dmix_source_open(sl_sample_src *out, const sl_settings *s,
                              sl_logger *log, sl_err *err);

/* Picks the backend kind from device.backend and device.gpu; when auto
 * falls back to host memory, logs why once and writes the reason to note
 * ("" otherwise). */
sl_status sl_loader_choose_backend(sl_logger *log, const sl_settings *s,
                                   sl_backend_kind *kind, char *note,
                                   size_t note_len, sl_err *err);
/* Creates the ring backend of kind for samples of channels. */
sl_status sl_loader_make_backend(sl_backend_kind kind, const sl_settings *s,
                                 int channels, sl_ring_backend **be,
                                 sl_err *err);

/* As sl_loader_open, with src (taken over: closed by the loader, also on
 * error) and backend (taken over; NULL chooses by device.backend). Builds
 * the settings from cfg and calls sl_loader_open_settings. */
sl_status sl_loader_open_with(sl_loader **out, const sl_config *cfg,
                              const sl_sample_src *src,
                              sl_ring_backend *backend);
/* The same from settings already built (sl_settings_from_config); s is
 * updated with the backend's choice (sl_settings_use_backend). */
sl_status sl_loader_open_settings(sl_loader **out, sl_settings *s,
                                  const sl_sample_src *src,
                                  sl_ring_backend *backend);

/* What the settings will make the loader hold: computed by the loader at
 * open and by `sluice schedule` from the config alone. */
typedef struct sl_loader_plan {
  int max_res;
  int channels;
  size_t elem_bytes;      /* of the batch dtype */
  size_t src_elem_bytes;  /* of what workers write (1 when converting) */
  size_t batch_bytes_max; /* one batch at max_res, batch dtype */
  size_t staging_bytes;   /* one staging buffer at max_res */
  int nstaging, nslots, workers;
  size_t host_bytes;   /* staging + host slots + labels/indices */
  size_t device_bytes; /* slots in device memory (CUDA) */
} sl_loader_plan;

/* Fills plan for s with channels (3 unless known) and whether the backend
 * is on the device and converts. */
sl_status sl_loader_plan_make(const sl_settings *s, int channels,
                              bool on_device, bool converts,
                              sl_loader_plan *plan, sl_err *err);
/* Refuses a plan whose host buffers (host_bytes, targets included) exceed
 * the memory available (MemAvailable, or the memory cgroup's limit) with
 * SL_ECONFIG and the numbers, before anything is allocated; SL_OK when
 * they fit or the available memory cannot be read. In the
 * sluice_loader_dataset library (it reads /proc through io/):
 * sl_loader_open and sl_config_memory_plan call it. */
sl_status sl_loader_plan_fits(const sl_settings *s, const sl_loader_plan *p,
                              uint64_t host_bytes, sl_err *err);
/* The ring's targets: a batch's worth per staging buffer and slot. */
static inline size_t sl_loader_target_bytes(const sl_loader_plan *p,
                                            size_t batch_size, uint32_t k) {
  return batch_size * k * sizeof(float) * (size_t)(p->nstaging + p->nslots);
}
/* The ring's boxes: a batch's worth per staging buffer and slot. */
static inline size_t sl_loader_box_bytes(const sl_loader_plan *p,
                                         size_t batch_size, uint32_t cap) {
  return cap ? batch_size * (4 + 20 * (size_t)cap) *
                   (size_t)(p->nstaging + p->nslots)
             : 0;
}
/* Bytes of one sample at res in dtype (res × res × channels × element). */
size_t sl_loader_sample_bytes(sl_dtype dtype, int channels, int res);

#endif
