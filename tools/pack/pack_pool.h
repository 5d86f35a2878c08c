/* `sluice pack`'s workers: N threads read and transcode inputs in any
 * order; the caller takes the results strictly in input order, so the
 * output does not depend on N. At most 4 * N results wait at a time (the
 * bound on memory held: 4 * N compressed images). */
#ifndef SLUICE_TOOLS_PACK_POOL_H
#define SLUICE_TOOLS_PACK_POOL_H

#include <signal.h>

#include "tools/pack/pack_image.h"
#include "tools/pack/pack_scan.h"

typedef struct sl_pack_pool sl_pack_pool;

/* Starts threads workers over in's items. Returns 0, or -1 (no memory, no
 * thread) with a message in msg. */
int sl_pack_pool_start(sl_pack_pool **out, const sl_pack_inputs *in,
                       const sl_pack_opts *o, int threads, char *msg,
                       size_t msg_len);
/* The next item's result, in input order: 1 when r is filled (the caller
 * owns r->data), 0 when none came within timeout_ms. Also fills *in_bytes
 * with the input file's size. */
int sl_pack_pool_next(sl_pack_pool *p, sl_pack_result *r, size_t *in_bytes,
                      int timeout_ms);
/* Stops the workers, joins them and frees what they left. Accepts NULL. */
void sl_pack_pool_stop(sl_pack_pool *p);

#endif
