/* Building a sharded dataset's index from its folder's committed shards
 * (formats/shard_index_build.c). */
#ifndef SLUICE_FORMATS_SHARD_INDEX_BUILD_H
#define SLUICE_FORMATS_SHARD_INDEX_BUILD_H

#include <stdint.h>

#include "common/error.h"

typedef struct sl_shard_index_report {
  uint64_t shards, samples;
  uint64_t bytes;       /* the shards' */
  uint64_t index_bytes; /* the index file's */
  uint64_t checksummed; /* shards read whole for their checksum (the rest
                           kept the old index's) */
} sl_shard_index_report;

/* Writes dir/sluice.index listing every shard in dir (regular files named
 * *.lmdb, *.mdb, *.h5 or *.hdf5, not hidden: writers' temporary files are),
 * in name order. Errors: SL_EFORMAT naming a shard that is not a sluice
 * LMDB/HDF5 file, is damaged, or whose class names, target width or writer
 * settings differ from the shards before it (and naming the first);
 * SL_EINVAL (no shards), SL_EIO, SL_ENOMEM. Nothing is written then. rep
 * (may be NULL) gets the counts. */
sl_status sl_shard_index_build(const char *dir, sl_shard_index_report *rep,
                               sl_err *err);

#endif
