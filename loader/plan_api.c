/* The experimental planning API (sluice.h, SLUICE_EXPERIMENTAL): the
 * loader's own plan and schedule, from a config alone. Each call reads the
 * config once into an sl_settings (loader/settings.h), as sl_loader_open
 * does, and works from that. */
#define SLUICE_EXPERIMENTAL
#include <string.h>

#include "common/error.h"
#include "io/io_select.h"
#include "loader/cuda/device_arith.h"
#include "loader/loader_internal.h"
#include "loader/schedule.h"
#include "loader/settings.h"
#include "sluice.h"

enum { PLAN_CHANNELS = 3 };

sl_status sl_loader_plan_fits(const sl_settings *s, const sl_loader_plan *p,
                              uint64_t host_bytes, sl_err *err) {
  uint64_t avail = 0;
  sl_err ignored;
  /* Without a readable /proc/meminfo there is no bound to hold it to. */
  if (sl_io_mem_budget(&avail, &ignored) != SL_OK || host_bytes <= avail)
    return SL_OK;
  const sl_schedule *sched = &s->sched;
  const char *from = sched->eval ? "resolution.eval"
                     : sched->kind == SL_SCHEDULE_STEPS && sched->steps.n > 0
                         ? "resolution.steps"
                         : "resolution.max";
  char need[32], have[32], one[32];
  int batches = p->nstaging + (p->device_bytes ? 0 : p->nslots);
  return sl_err_set(
      err, SL_ECONFIG,
      "the buffers for the schedule's largest resolution, %d (%s), need %s "
      "of host memory (%d batches of %lld samples at %dx%dx%d, %s each), "
      "more than the %s available (MemAvailable, or the memory cgroup's "
      "limit): lower %s, loader.batch_size%s device.staging%s",
      p->max_res, from, sl_format_bytes(host_bytes, need, sizeof need), batches,
      (long long)s->batch_size, p->max_res, p->max_res, p->channels,
      sl_format_bytes(p->staging_bytes, one, sizeof one),
      sl_format_bytes(avail, have, sizeof have), from,
      p->device_bytes ? " or" : ",",
      p->device_bytes ? "" : " or device.prefetch (host slots)");
}

sl_status sl_config_memory_plan(sl_config *cfg, int cuda, uint32_t target_width,
                                sl_memory_plan *out) {
  if (!cfg || !out)
    return SL_EINVAL;
  sl_loader_plan p;
  sl_err *err = sl_cfg_err(cfg);
  sl_err_clear(err);
  if (target_width > SL_TARGETS_MAX)
    return sl_err_set(err, SL_EINVAL, "%u targets a sample (at most %d)",
                      target_width, SL_TARGETS_MAX);
  sl_settings s;
  sl_status st = sl_settings_from_config(&s, cfg, err);
  if (st == SL_OK)
    st = sl_loader_plan_make(&s, PLAN_CHANNELS, cuda != 0, cuda != 0, &p, err);
  if (st != SL_OK)
    return st;
  memset(out, 0, sizeof *out);
  out->max_res = (uint32_t)p.max_res;
  out->channels = PLAN_CHANNELS;
  out->nstaging = (uint32_t)p.nstaging;
  out->nslots = (uint32_t)p.nslots;
  out->workers = (uint32_t)p.workers;
  out->staging_bytes = p.staging_bytes;
  out->slot_bytes = p.batch_bytes_max;
  out->host_bytes = p.host_bytes + sl_loader_target_bytes(
                                       &p, (size_t)s.batch_size, target_width);
  out->device_bytes = p.device_bytes;
  if ((st = sl_loader_plan_fits(&s, &p, out->host_bytes, err)) != SL_OK)
    return st;
  out->device_alloc_bytes = cuda ? sl_device_alloc_bytes(p.device_bytes) : 0;
  return SL_OK;
}

uint32_t sl_config_epoch_resolution(const sl_config *cfg, uint64_t epoch) {
  if (!cfg)
    return 0;
  sl_settings s;
  sl_settings_read(&s, cfg);
  return (uint32_t)sl_schedule_res(&s.sched, epoch);
}

sl_status sl_config_batches_per_epoch(sl_config *cfg, uint64_t count,
                                      uint64_t *out) {
  if (!cfg || !out)
    return SL_EINVAL;
  *out = 0;
  sl_err *err = sl_cfg_err(cfg);
  sl_err_clear(err);
  sl_status st = sl_config_validate(cfg);
  if (st != SL_OK)
    return st;
  sl_settings s;
  sl_settings_read(&s, cfg);
  sl_sampler_config sc = s.sampler;
  sc.count = count;
  if (count == 0)
    return sl_err_set(err, SL_ECONFIG, "the dataset has no samples");
  st = sl_sampler_batch_count(&sc, out, err);
  return st == SL_EINVAL ? SL_ECONFIG : st;
}

uint64_t sl_config_batch_bytes(const sl_config *cfg, uint32_t res) {
  if (!cfg)
    return 0;
  sl_settings s;
  sl_settings_read(&s, cfg);
  return (uint64_t)s.batch_size *
         sl_loader_sample_bytes(s.dtype, PLAN_CHANNELS, (int)res);
}
