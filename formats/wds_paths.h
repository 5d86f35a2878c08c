/* WebDataset shard names: what dataset.path names, as a list of paths.
 *
 *   x.tar                           one shard
 *   train-{000000..000146}.tar      a brace pattern, as webdataset writes it
 *                                   (ranges, zero-padded to the longer
 *                                   bound; comma lists {a,b}; several braces)
 *   shards.txt / x.shards           a list: one path (or pattern) a line,
 *                                   relative to the list's folder; blank
 *                                   lines and lines starting with # skipped
 *
 * Bounds: at most SL_WDS_MAX_SHARDS paths, each under PATH_MAX; a list file
 * of at most 64 MiB. */
#ifndef SLUICE_FORMATS_WDS_PATHS_H
#define SLUICE_FORMATS_WDS_PATHS_H

#include <stdbool.h>

#include "common/error.h"

#define SL_WDS_MAX_SHARDS (1u << 20)

typedef sl_status (*sl_wds_add_fn)(void *ctx, const char *path, sl_err *err);

/* Calls add for each shard path of path, in order (list is true: path is a
 * list file). Errors: SL_ECONFIG (a malformed pattern, too many shards, a
 * path too long, an empty list), SL_EIO (the list cannot be read), and
 * add's. */
sl_status sl_wds_expand(const char *path, bool list, sl_wds_add_fn add,
                        void *ctx, sl_err *err);
/* Whether path's name is a list file's (.txt, .shards). */
bool sl_wds_is_list_name(const char *path);

#endif
