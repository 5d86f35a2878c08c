/* TFRecord and RecordIO shards at URLs (source_rec_remote.c): the set
 * opened from its sidecar index, or built by walking each shard once
 * through the cache (formats/files/shards_remote.h), with the walkers the
 * local shards' open uses per shard. */
#ifndef SLUICE_FORMATS_REC_REMOTE_H
#define SLUICE_FORMATS_REC_REMOTE_H

#include "formats/core/source_impl.h"

/* Opens path (a URL: one file, a brace pattern, a list at a URL) into src
 * as shards of src->fmt (TFRECORD or RECORDIO). Errors as
 * sl_source_index_remote_shards, and the walkers': SL_EFORMAT naming the
 * shard (or its .idx) and the record. */
sl_status sl_source_index_rec_remote(sl_source *src, const char *path,
                                     sl_err *err);

#endif
