/* The public loader API: open, epochs, next/release, close. The pieces are
 * the sampler (order), the schedule (resolution), the pool (workers) and the
 * ring (staging, slots, mover); this file wires them and keeps the
 * consumer's bookkeeping. State blob and stats live in loader_state.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/dtype.h"
#include "common/mem.h"
#include "loader/cuda/device_arith.h"
#include "loader/cuda/device_select.h"
#include "loader/cuda/ring_cuda.h"
#include "loader/fingerprint.h"
#include "loader/loader_impl.h"

size_t sl_loader_sample_bytes(sl_dtype dtype, int channels, int res) {
  return sl_dtype_bytes(dtype) * (size_t)channels * (size_t)res * (size_t)res;
}

static int online_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

sl_status sl_loader_plan_make(const sl_settings *s, int channels,
                              bool on_device, bool converts,
                              sl_loader_plan *plan, sl_err *err) {
  memset(plan, 0, sizeof *plan);
  sl_dtype dtype = s->dtype;
  size_t bs = (size_t)s->batch_size;
  plan->max_res = sl_schedule_max(&s->sched);
  plan->channels = channels;
  plan->elem_bytes = sl_loader_sample_bytes(dtype, 1, 1);
  plan->src_elem_bytes = converts ? 1 : plan->elem_bytes;
  size_t px = (size_t)plan->max_res * (size_t)plan->max_res * (size_t)channels;
  if (!sl_mul_size(px * plan->elem_bytes, bs, &plan->batch_bytes_max) ||
      !sl_mul_size(px * plan->src_elem_bytes, bs, &plan->staging_bytes))
    return sl_err_set(err, SL_ETOOBIG,
                      "loader.batch_size %zu at resolution "
                      "%d overflows the address space",
                      bs, plan->max_res);
  plan->nstaging = s->device.staging;
  plan->nslots = s->device.prefetch;
  plan->workers = s->workers > 0 ? s->workers : online_cpus();
  size_t meta = bs * 12 * (size_t)(plan->nstaging + plan->nslots);
  plan->host_bytes = plan->staging_bytes * (size_t)plan->nstaging + meta;
  if (on_device) {
    /* A landing buffer only when the device converts after the copy: u8
     * NHWC lands in its slot directly (as ring_cuda.c allocates). */
    int landing =
        converts && sl_device_needs_landing(dtype, s->layout, channels);
    int fit = 0;
    sl_status st =
        sl_device_ring_slots(s->device.vram_budget, plan->staging_bytes,
                             plan->batch_bytes_max, landing, &fit, err);
    if (st != SL_OK)
      return st;
    if (fit < plan->nslots)
      plan->nslots = fit;
    sl_device_ring_need(plan->staging_bytes, plan->batch_bytes_max, landing,
                        plan->nslots, &plan->device_bytes, err);
  } else {
    plan->host_bytes += plan->batch_bytes_max * (size_t)plan->nslots;
  }
  return SL_OK;
}

/* ---- Open / close
 * ------------------------------------------------------------ */

sl_status sl_loader_choose_backend(sl_logger *log, const sl_settings *s,
                                   sl_backend_kind *kind, char *note,
                                   size_t note_len, sl_err *err) {
  sl_device_choice choice;
  sl_status st =
      sl_device_choose(s->device.backend, s->device.gpu, &choice, err);
  if (st != SL_OK)
    return st;
  if (note_len > 0) { /* truncated to note_len - 1 bytes if need be */
    size_t n = strnlen(choice.fallback_reason, note_len - 1);
    memcpy(note, choice.fallback_reason, n);
    note[n] = '\0';
  }
  if (choice.fallback_reason[0])
    sl_logf(log, SL_LOG_INFO, "device.backend = auto: using host memory: %s",
            choice.fallback_reason);
  *kind = choice.backend;
  return SL_OK;
}

sl_status sl_loader_make_backend(sl_backend_kind kind, const sl_settings *s,
                                 int channels, sl_ring_backend **be,
                                 sl_err *err) {
  if (kind != SL_BACKEND_CUDA)
    return sl_ring_backend_host_create(be, err);
  sl_cuda_ring_params p;
  memset(&p, 0, sizeof p);
  p.gpu = s->device.gpu;
  p.vram_budget = s->device.vram_budget;
  p.dtype = s->dtype;
  p.layout = s->layout;
  p.channels = channels;
  memcpy(p.mean, s->mean, sizeof p.mean);
  memcpy(p.std, s->std, sizeof p.std);
  return sl_ring_backend_cuda_create(be, &p, err);
}

static void take_settings(sl_loader *ld, const sl_settings *s) {
  ld->sched = s->sched;
  ld->batch_size = s->batch_size;
  ld->dtype = s->dtype;
  ld->layout = s->layout;
  ld->skip_bad = s->skip_bad;
  ld->eval = s->eval;
  memcpy(ld->mean, s->mean, sizeof ld->mean);
  memcpy(ld->std, s->std, sizeof ld->std);
  ld->sampler_cfg = s->sampler;
  sl_settings_fingerprints(s, ld->src.box_capacity, &ld->schedule_fp,
                           &ld->augment_fp, ld->augment_tags);
}

/* The box fields took sl_batch's reserved words and a padding hole. */
_Static_assert(sizeof(void *) != 8 || sizeof(sl_batch) == 160,
               "sl_batch keeps its size");
_Static_assert(sizeof(void *) != 8 || offsetof(sl_batch, ready) == 56,
               "sl_batch keeps its offsets");

/* The ring's batch op: the source's batch mixing. */
static void mix_batch(void *user, const sl_ring_epoch_view *ep, uint64_t k,
                      void *data, int mix_pixels, const int32_t *labels,
                      float *targets, sl_mix_note *note) {
  const sl_sample_src *src = user;
  sl_mix_batch b = {ep->epoch,
                    k,
                    mix_pixels ? data : NULL,
                    ep->n,
                    ep->height,
                    ep->width,
                    ep->channels,
                    (int)ep->dtype,
                    (int)ep->layout,
                    labels,
                    targets};
  src->batch_mix(src->ctx, &b, note);
}

/* Floats of targets a batch carries per sample. */
static uint32_t batch_target_width(const sl_sample_src *src) {
  return src->batch_mix ? src->soft_width : src->target_width;
}

static sl_status open_parts(sl_loader *ld, sl_settings *s, sl_ring_backend *be,
                            sl_err *err) {
  sl_status st;
  if (!be) {
    sl_backend_kind kind;
    if ((st = sl_loader_choose_backend(&ld->log, s, &kind, ld->backend_note,
                                       sizeof ld->backend_note, err)) !=
            SL_OK ||
        (st = sl_loader_make_backend(kind, s, ld->src.channels, &be, err)) !=
            SL_OK)
      return st;
  }
  bool on_device = be->ops->on_device, converts = be->ops->converts;
  sl_settings_use_backend(s, converts);
  st = sl_loader_plan_make(s, ld->src.channels, on_device, converts, &ld->plan,
                           err);
  if (st != SL_OK) {
    be->ops->destroy(be);
    return st;
  }
  ld->plan.host_bytes += sl_loader_target_bytes(
      &ld->plan, (size_t)ld->batch_size, batch_target_width(&ld->src));
  ld->plan.host_bytes += sl_loader_box_bytes(&ld->plan, (size_t)ld->batch_size,
                                             ld->src.box_capacity);
  ld->sampler_cfg.count = ld->src.count;
  /* quasi_random blocks of whole compressed chunks: each chunk is then
   * decompressed about once an epoch (its samples are read within one run
   * of quasi_window blocks), given a chunk cache of two runs' chunks. */
  uint64_t bs = ld->src.block_samples, *qb = &ld->sampler_cfg.quasi_block;
  if (ld->sampler_cfg.order == SL_ORDER_QUASI && bs > 1 && *qb % bs != 0 &&
      *qb <= UINT64_MAX - bs)
    *qb = (*qb + bs - 1) / bs * bs;
  /* quasi_random over shards: a block per shard, whatever its count, so a
   * rank reads each of its shards front to back. */
  ld->sampler_cfg.file_first = ld->src.file_first;
  ld->sampler_cfg.nfiles = ld->src.nfiles;
  ld->sampler_cfg.nmembers = ld->src.nmembers; /* a mix deals its members */
  ld->sampler_cfg.members = ld->src.members;
  if ((st = sl_sampler_create(&ld->sampler, &ld->sampler_cfg, err)) != SL_OK) {
    be->ops->destroy(be);
    return st;
  }
  ld->nbatches = sl_sampler_batches(ld->sampler);
  ld->src_dtype = s->aug.dtype;
  ld->src_layout = s->aug.layout;
  sl_ring_config rc = {.nstaging = ld->plan.nstaging,
                       .nslots = ld->plan.nslots,
                       .staging_bytes = ld->plan.staging_bytes,
                       .slot_bytes = ld->plan.batch_bytes_max,
                       .batch_size = ld->batch_size,
                       .target_width = batch_target_width(&ld->src),
                       .box_capacity = ld->src.box_capacity,
                       .batch_op = ld->src.batch_mix ? mix_batch : NULL,
                       .batch_user = &ld->src};
  if ((st = sl_ring_create(&ld->ring, &rc, be, err)) != SL_OK)
    return st;
  sl_pool_config pc = {.workers = ld->plan.workers,
                       .max_res = ld->plan.max_res,
                       .batch_size = ld->batch_size,
                       .seed = ld->sampler_cfg.seed,
                       .skip_bad = ld->skip_bad,
                       .src = &ld->src,
                       .sampler = ld->sampler,
                       .ring = ld->ring,
                       .log = &ld->log};
  return sl_pool_create(&ld->pool, &pc, err);
}

sl_status sl_loader_open_with(sl_loader **out, const sl_config *cfg,
                              const sl_sample_src *src,
                              sl_ring_backend *backend) {
  if (out)
    *out = NULL;
  if (!out || !cfg || !src) {
    if (src && src->close)
      src->close(src->ctx);
    if (backend)
      backend->ops->destroy(backend);
    return SL_EINVAL;
  }
  sl_err err;
  sl_err_clear(&err);
  sl_settings s;
  if (sl_settings_from_config(&s, cfg, &err) != SL_OK) {
    if (src->close)
      src->close(src->ctx);
    if (backend)
      backend->ops->destroy(backend);
    return sl_loader_open_failed(out, &err);
  }
  return sl_loader_open_settings(out, &s, src, backend);
}

sl_status sl_loader_open_settings(sl_loader **out, sl_settings *s,
                                  const sl_sample_src *src,
                                  sl_ring_backend *backend) {
  *out = NULL;
  sl_err err;
  sl_err_clear(&err);
  sl_loader *ld = calloc(1, sizeof *ld);
  if (!ld) {
    if (src->close)
      src->close(src->ctx);
    if (backend)
      backend->ops->destroy(backend);
    sl_err_set(&err, SL_ENOMEM, "sl_loader_open: out of memory");
    return sl_loader_open_failed(out, &err);
  }
  ld->src = *src;
  ld->log.fn = s->log;
  ld->log.user = s->log_user;
  int e = pthread_mutex_init(&ld->log.mu, NULL);
  if (e != 0) {
    if (src->close)
      src->close(src->ctx);
    if (backend)
      backend->ops->destroy(backend);
    free(ld);
    sl_err_errno(&err, SL_ETHREAD, e, "sl_loader_open: pthread_mutex_init");
    return sl_loader_open_failed(out, &err);
  }
  take_settings(ld, s);
  sl_status st = open_parts(ld, s, backend, &err);
  if (st != SL_OK) {
    sl_loader_close(ld);
    return sl_loader_open_failed(out, &err);
  }
  sl_logf(&ld->log, SL_LOG_INFO,
          "loader open: %llu samples, %llu batches/epoch of %d, %d workers, "
          "%s backend, %zu bytes of host buffers",
          (unsigned long long)ld->src.count, (unsigned long long)ld->nbatches,
          ld->batch_size, ld->plan.workers, sl_ring_backend_name(ld->ring),
          ld->plan.host_bytes);
  *out = ld;
  return SL_OK;
}

sl_status sl_loader_open_failed(sl_loader **out, const sl_err *err) {
  sl_loader *ld = calloc(1, sizeof *ld);
  if (ld && pthread_mutex_init(&ld->log.mu, NULL) != 0) {
    free(ld);
    ld = NULL;
  }
  if (ld)
    ld->err = *err;
  *out = ld;
  return err->code;
}

static sl_status not_open(sl_loader *ld) {
  if (!strstr(ld->err.msg, "the loader did not open"))
    sl_err_prefix(&ld->err, "the loader did not open: ");
  ld->err.code = SL_ESTATE;
  return SL_ESTATE;
}

void sl_loader_close(sl_loader *ld) {
  if (!ld)
    return;
  if (ld->ring)
    sl_ring_abort(ld->ring);
  sl_pool_destroy(ld->pool); /* joins workers before the ring goes */
  sl_ring_destroy(ld->ring);
  sl_sampler_destroy(ld->sampler);
  if (ld->src.close)
    ld->src.close(ld->src.ctx);
  pthread_mutex_destroy(&ld->log.mu);
  free(ld);
}

/* ---- Epochs ----------------------------------------------------------------
 */

sl_status sl_loader_not_open(sl_loader *ld) {
  return not_open(ld);
}

sl_status sl_loader_start_at(sl_loader *ld, uint64_t epoch, uint64_t first) {
  if (ld->started) {
    sl_ring_abort(ld->ring);
    sl_pool_stop(ld->pool);
  }
  sl_sampler_set_epoch(ld->sampler, epoch);
  if (ld->npast) {
    sl_status st =
        sl_sampler_set_rest(ld->sampler, ld->past, ld->npast, &ld->err);
    if (st != SL_OK) {
      ld->started = false; /* the pool is stopped: nothing to save */
      return st;
    }
  }
  uint64_t nb = sl_sampler_batches(ld->sampler);
  int res = sl_schedule_res(&ld->sched, epoch);
  size_t ch = (size_t)ld->src.channels;
  sl_ring_epoch ep;
  memset(&ep, 0, sizeof ep);
  ep.epoch = epoch;
  ep.first_batch = first;
  ep.nbatches = nb;
  ep.src_sample_bytes = sl_loader_sample_bytes(ld->src_dtype, (int)ch, res);
  ep.dst_sample_bytes = sl_loader_sample_bytes(ld->dtype, (int)ch, res);
  ep.copy.n = ld->batch_size;
  ep.copy.height = res;
  ep.copy.width = res;
  ep.copy.channels = (int)ch;
  ep.copy.src_dtype = ld->src_dtype;
  ep.copy.src_layout = ld->src_layout;
  ep.copy.dst_dtype = ld->dtype;
  ep.copy.dst_layout = ld->layout;
  memcpy(ep.copy.mean, ld->mean, sizeof ld->mean);
  memcpy(ep.copy.std, ld->std, sizeof ld->std);
  sl_ring_reset(ld->ring, &ep);
  uint64_t bs = (uint64_t)ld->batch_size;
  /* Before the workers wake: the epoch's clock must cover all their work. */
  ld->epoch_t0 = sl_now_ns();
  sl_pool_start(ld->pool, epoch, first * bs, nb * bs, res, ep.src_sample_bytes);
  ld->started = true;
  ld->epoch = epoch;
  ld->res = res;
  ld->delivered = first;
  ld->epoch_nbatches = nb;
  ld->epoch_batches = 0;
  return SL_OK;
}

sl_status sl_loader_start_epoch(sl_loader *ld, uint64_t epoch) {
  if (!ld)
    return SL_EINVAL;
  if (SL_LOADER_FAILED(ld))
    return not_open(ld);
  sl_err_clear(&ld->err);
  ld->npast = 0;
  return sl_loader_start_at(ld, epoch, 0);
}

sl_status sl_loader_next(sl_loader *ld, sl_batch *b) {
  if (!ld || !b)
    return SL_EINVAL;
  if (SL_LOADER_FAILED(ld))
    return not_open(ld);
  sl_err_clear(&ld->err);
  memset(b, 0, sizeof *b);
  sl_ring_batch rb;
  uint64_t waited = 0;
  sl_status st = sl_ring_next(ld->ring, &rb, &waited, &ld->err);
  ld->consumer_wait_ns += waited;
  if (st != SL_OK)
    return st;
  b->data = rb.data;
  b->labels = rb.labels;
  b->indices = rb.indices;
  b->targets = rb.targets;
  b->target_width = batch_target_width(&ld->src);
  b->box_capacity = ld->src.box_capacity;
  b->boxes = rb.boxes;
  b->box_labels = rb.box_labels;
  b->box_counts = rb.box_counts;
  b->mix_kind = rb.mix.kind;
  b->mix_lambda = rb.mix.kind ? rb.mix.lambda : 1.0f;
  memcpy(b->mix_box, rb.mix.box, sizeof b->mix_box);
  b->n = (uint32_t)ld->batch_size;
  b->valid = (uint32_t)sl_sampler_valid(ld->sampler, rb.index);
  b->height = b->width = (uint32_t)ld->res;
  b->channels = (uint32_t)ld->src.channels;
  b->dtype = (sl_dtype)ld->dtype;
  b->layout = (sl_layout)ld->layout;
  b->on_device = sl_ring_on_device(ld->ring);
  b->ready = rb.ready;
  b->bytes = rb.bytes;
  b->epoch = rb.epoch;
  b->index = rb.index;
  b->slot = (uint64_t)rb.generation << 32 | (uint32_t)rb.slot;
  ld->delivered = rb.index + 1;
  ld->epoch_batches++;
  ld->batches++;
  return SL_OK;
}

sl_status sl_loader_unget(sl_loader *ld, sl_batch *b) {
  if (!ld || !b)
    return SL_EINVAL;
  if (SL_LOADER_FAILED(ld))
    return not_open(ld);
  sl_err_clear(&ld->err);
  sl_status st = sl_ring_unget(ld->ring, (int)(uint32_t)b->slot,
                               (uint32_t)(b->slot >> 32), b->labels, &ld->err);
  if (st != SL_OK)
    return st;
  ld->delivered = b->index;
  ld->epoch_batches--;
  ld->batches--;
  memset(b, 0, sizeof *b);
  return SL_OK;
}

sl_status sl_batch_release(sl_loader *ld, sl_batch *b, void *stream) {
  if (!ld || !b)
    return SL_EINVAL;
  if (SL_LOADER_FAILED(ld))
    return not_open(ld);
  sl_err_clear(&ld->err);
  return sl_ring_release(ld->ring, (int)(uint32_t)b->slot,
                         (uint32_t)(b->slot >> 32), b->labels, stream,
                         &ld->err);
}

uint64_t sl_loader_batches_per_epoch(const sl_loader *ld) {
  return ld ? ld->nbatches : 0;
}

uint64_t sl_loader_epoch_batches(const sl_loader *ld) {
  return ld && !SL_LOADER_FAILED(ld) && ld->started ? ld->epoch_nbatches : 0;
}

uint64_t sl_loader_sample_count(const sl_loader *ld) {
  return ld ? ld->src.count : 0;
}

uint32_t sl_loader_source_count(const sl_loader *ld) {
  if (!ld || SL_LOADER_FAILED(ld))
    return 0;
  return ld->src.nmembers ? ld->src.nmembers : 1;
}

uint32_t sl_loader_source_of(const sl_loader *ld, uint64_t index,
                             uint64_t *local) {
  if (!ld || SL_LOADER_FAILED(ld) || index >= ld->src.count)
    return UINT32_MAX;
  uint32_t k = 0;
  for (; k + 1 < ld->src.nmembers && index >= ld->src.members[k].count; k++)
    index -= ld->src.members[k].count;
  if (local)
    *local = index;
  return k;
}

sl_status sl_batch_sources(const sl_loader *ld, const sl_batch *b,
                           uint32_t *sources) {
  if (!ld || !b || !sources || !b->indices)
    return SL_EINVAL;
  for (uint32_t j = 0; j < b->n; j++)
    if ((sources[j] = sl_loader_source_of(ld, b->indices[j], NULL)) ==
        UINT32_MAX)
      return SL_EINVAL;
  return SL_OK;
}

uint32_t sl_loader_epoch_resolution(const sl_loader *ld, uint64_t epoch) {
  return ld ? (uint32_t)sl_schedule_res(&ld->sched, epoch) : 0;
}

const char *sl_loader_errmsg(const sl_loader *ld) {
  return ld ? ld->err.msg : "no loader handle (out of memory, or NULL)";
}
