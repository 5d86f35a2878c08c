/* The host backend of the ring: staging and slots are page-aligned host
 * memory, touched at alloc; a copy is a memcpy that has finished when
 * copy_to_slot returns, so the events are no-ops.
 *
 * Thread safety: as the ring requires (ring.h); the buffers' addresses never
 * change after alloc. Memory: nstaging × staging_bytes + nslots × slot_bytes,
 * all at alloc. */
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "loader/ring.h"

typedef struct host_backend {
  sl_ring_backend base;
  int nstaging, nslots;
  void **staging; /* nstaging buffers */
  void **slots;   /* nslots buffers */
} host_backend;

static sl_status host_alloc(sl_ring_backend *b, int nstaging,
                            size_t staging_bytes, int nslots, size_t slot_bytes,
                            sl_err *err) {
  host_backend *h = (host_backend *)b;
  h->staging = calloc((size_t)nstaging, sizeof *h->staging);
  h->slots = calloc((size_t)nslots, sizeof *h->slots);
  if (!h->staging || !h->slots)
    return sl_err_set(err, SL_ENOMEM, "host ring: out of memory");
  h->nstaging = nstaging;
  h->nslots = nslots;
  for (int i = 0; i < nstaging; i++)
    if (!(h->staging[i] = sl_alloc_touched(staging_bytes, 4096)))
      return sl_err_set(err, SL_ENOMEM,
                        "host ring: cannot allocate staging buffer %d of %zu "
                        "bytes",
                        i, staging_bytes);
  for (int s = 0; s < nslots; s++)
    if (!(h->slots[s] = sl_alloc_touched(slot_bytes, 4096)))
      return sl_err_set(err, SL_ENOMEM,
                        "host ring: cannot allocate slot %d of %zu bytes", s,
                        slot_bytes);
  return SL_OK;
}

static void host_destroy(sl_ring_backend *b) {
  host_backend *h = (host_backend *)b;
  if (!h)
    return;
  for (int i = 0; h->staging && i < h->nstaging; i++)
    sl_free_aligned(h->staging[i]);
  for (int s = 0; h->slots && s < h->nslots; s++)
    sl_free_aligned(h->slots[s]);
  free(h->staging);
  free(h->slots);
  free(h);
}

static void *host_staging(sl_ring_backend *b, int i) {
  return ((host_backend *)b)->staging[i];
}

static void *host_slot(sl_ring_backend *b, int s) {
  return ((host_backend *)b)->slots[s];
}

static sl_status host_copy(sl_ring_backend *b, int s, const sl_ring_copy *c,
                           sl_err *err) {
  if (c->src_dtype != c->dst_dtype || c->src_layout != c->dst_layout ||
      c->src_bytes != c->dst_bytes)
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "host ring: cannot convert between element types");
  memcpy(((host_backend *)b)->slots[s], c->src, c->src_bytes);
  return SL_OK;
}

static sl_status host_noop(sl_ring_backend *b, int s, sl_err *err) {
  return SL_OK;
}

static void *host_ready_event(sl_ring_backend *b, int s) {
  return NULL;
}

static sl_status host_consumed(sl_ring_backend *b, int s, void *stream,
                               sl_err *err) {
  return SL_OK;
}

static const sl_ring_backend_ops k_host_ops = {
    .name = "host",
    .on_device = false,
    .converts = false,
    .alloc = host_alloc,
    .destroy = host_destroy,
    .staging = host_staging,
    .slot = host_slot,
    .thread_init = NULL,
    .copy_to_slot = host_copy,
    .record_ready = host_noop,
    .wait_ready = host_noop,
    .ready_event = host_ready_event,
    .record_consumed = host_consumed,
    .wait_consumed = host_noop,
};

sl_status sl_ring_backend_host_create(sl_ring_backend **out, sl_err *err) {
  host_backend *h = calloc(1, sizeof *h);
  *out = NULL;
  if (!h)
    return sl_err_set(err, SL_ENOMEM, "host ring: out of memory");
  h->base.ops = &k_host_ops;
  *out = &h->base;
  return SL_OK;
}
