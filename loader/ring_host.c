/* The host backend of the ring: staging buffers and slots are page-aligned
 * host buffers of one size, touched at alloc. A "copy" moves no bytes: the
 * full staging buffer becomes the slot and the slot's old buffer (free: the
 * ring has waited for the consumer to release it) becomes the staging
 * buffer. On 2 cores the memcpy this replaces (one batch per batch, on the
 * mover thread) took CPU from the workers. Copies finish when copy_to_slot
 * returns, so the events are no-ops.
 *
 * Thread safety: as the ring requires (ring.h). The pointer tables change
 * only in copy_to_slot on the mover thread, for a staging buffer no worker
 * holds and a slot the consumer does not hold; the ring reads them under
 * its lock when it hands a buffer out, after the mover has published the
 * move under the same lock.
 * Memory: (nstaging + nslots) × max(staging_bytes, slot_bytes), all at
 * alloc. */
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
  size_t bytes = staging_bytes > slot_bytes ? staging_bytes : slot_bytes;
  h->staging = calloc((size_t)nstaging, sizeof *h->staging);
  h->slots = calloc((size_t)nslots, sizeof *h->slots);
  if (!h->staging || !h->slots)
    return sl_err_set(err, SL_ENOMEM, "host ring: out of memory");
  h->nstaging = nstaging;
  h->nslots = nslots;
  for (int i = 0; i < nstaging; i++)
    if (!(h->staging[i] = sl_alloc_touched(bytes, 4096)))
      return sl_err_set(err, SL_ENOMEM,
                        "host ring: cannot allocate staging buffer %d of %zu "
                        "bytes",
                        i, bytes);
  for (int s = 0; s < nslots; s++)
    if (!(h->slots[s] = sl_alloc_touched(bytes, 4096)))
      return sl_err_set(err, SL_ENOMEM,
                        "host ring: cannot allocate slot %d of %zu bytes", s,
                        bytes);
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
  host_backend *h = (host_backend *)b;
  if (c->src_dtype != c->dst_dtype || c->src_layout != c->dst_layout ||
      c->src_bytes != c->dst_bytes)
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "host ring: cannot convert between element types");
  if (c->src_index < 0 || c->src_index >= h->nstaging ||
      h->staging[c->src_index] != c->src)
    return sl_err_set(err, SL_EINVAL, "host ring: staging buffer %d unknown",
                      c->src_index);
  void *full = h->staging[c->src_index];
  h->staging[c->src_index] = h->slots[s];
  h->slots[s] = full;
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
