/* A remote set's samples by HTTP range requests (io.remote_read = ranges):
 * remote/ranges.h's engine over a source's files. The glue between
 * formats/ (which object a sample lies in, and where) and remote/ (the
 * requests) lives above both. */
#ifndef SLUICE_LOADER_RANGE_SOURCE_H
#define SLUICE_LOADER_RANGE_SOURCE_H

#include <stddef.h>

#include "common/error.h"
#include "formats/core/source.h"
#include "remote/ranges.h"

/* The engine for src, a set at a URL (sl_source_cache non-NULL), kept
 * until the engine is closed: `requests` in flight, pool_bytes of buffers
 * (remote/ranges.h says the memory). name: the dataset, for messages.
 * Errors: as sl_ranges_open; SL_EINVAL when src is not at a URL. */
sl_status sl_range_source_open(sl_ranges **out, const sl_source *src,
                               const char *name, unsigned requests,
                               size_t pool_bytes, sl_err *err);

#endif
