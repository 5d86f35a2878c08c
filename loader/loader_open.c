/* sl_loader_open: a loader on the config's dataset. It lives apart from
 * loader.c, in the sluice_loader_dataset object library with dataset.c,
 * because it reaches into formats/ and augment/; the loader core (and its
 * tests on synthetic sources, through sl_loader_open_with) does not. */
#include <pthread.h>
#include <string.h>

#include "loader/loader_impl.h"
#include "loader/settings.h"

sl_status sl_loader_open(sl_loader **out, const sl_config *cfg) {
  if (out)
    *out = NULL;
  if (!out || !cfg)
    return SL_EINVAL;
  sl_err err;
  sl_err_clear(&err);
  /* The config is read here, once: everything below takes the settings. */
  sl_settings s;
  sl_status st = sl_settings_from_config(&s, cfg, &err);
  if (st != SL_OK)
    return sl_loader_open_failed(out, &err);
  sl_logger log = {.fn = s.log, .user = s.log_user};
  int e = pthread_mutex_init(&log.mu, NULL);
  if (e != 0) {
    sl_err_errno(&err, SL_ETHREAD, e, "sl_loader_open: pthread_mutex_init");
    return sl_loader_open_failed(out, &err);
  }
  /* Whether workers write u8 NHWC depends on the backend; decide it first:
   * CUDA converts on the device, so u8 crosses PCIe. */
  sl_backend_kind kind = SL_BACKEND_HOST;
  sl_sample_src src;
  memset(&src, 0, sizeof src);
  char note[sizeof((sl_loader *)0)->backend_note];
  st = sl_loader_choose_backend(&log, &s, &kind, note, sizeof note, &err);
  if (st == SL_OK) {
    sl_settings_use_backend(&s, kind == SL_BACKEND_CUDA);
    st = s.dmix.n ? sl_dmix_source_open(&src, &s, &log, &err)
                  : sl_sample_source_open(&src, &s, &log, &err);
  }
  if (st == SL_OK) { /* refuse what cannot fit before allocating any */
    bool cuda = kind == SL_BACKEND_CUDA;
    sl_loader_plan plan;
    st = sl_loader_plan_make(&s, src.channels, cuda, cuda, &plan, &err);
    if (st == SL_OK)
      st = sl_loader_plan_fits(
          &s, &plan,
          plan.host_bytes +
              sl_loader_target_bytes(&plan, (size_t)s.batch_size,
                                     src.target_width) +
              sl_loader_box_bytes(&plan, (size_t)s.batch_size,
                                  src.box_capacity),
          &err);
    if (st != SL_OK)
      src.close(src.ctx);
  }
  sl_ring_backend *be = NULL;
  if (st == SL_OK &&
      (st = sl_loader_make_backend(kind, &s, src.channels, &be, &err)) != SL_OK)
    src.close(src.ctx);
  pthread_mutex_destroy(&log.mu);
  if (st != SL_OK)
    return sl_loader_open_failed(out, &err);
  st = sl_loader_open_settings(out, &s, &src, be);
  if (st == SL_OK)
    memcpy((*out)->backend_note, note, sizeof note);
  return st;
}
