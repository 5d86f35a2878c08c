/* Foreign shards at URLs (WebDataset tars, TFRecord and RecordIO files
 * named by s3:// or http(s)://
 * URLs: one shard, a brace pattern, or a list file that is itself at a
 * URL): the set opened from its sidecar index (shard_sidecar.h) in the
 * cache folder, each shard's size and ETag checked with a HEAD; without
 * one, the sidecar is built by fetching each shard into the cache, one at
 * a time, and walking it with the format's own walker, then written.
 * Afterwards the shards are lazy files fetched through the cache when
 * first read, as a sharded set's are (formats/shards/).
 *
 * Memory: what the local open keeps (the index, targets, the shard table),
 * the sidecar while it is read or written (24 bytes a sample, 4·K more),
 * 88 bytes a shard for the HEADs, a list file (at most 64 MiB) while it
 * is read. Disk: the sidecar in io.cache_dir (outside io.cache_bytes);
 * the shards through the cache, within io.cache_bytes. */
#ifndef SLUICE_FORMATS_SHARDS_REMOTE_H
#define SLUICE_FORMATS_SHARDS_REMOTE_H

#include "formats/core/source_impl.h"

/* A format's walk of its shards, called once a shard: begin (ctx for the
 * rest), shard k (src->spans[k].fd open on it while it runs; it fills
 * src->file_first[k] and appends k's samples), end (after the last shard,
 * or after an error with st != SL_OK: frees ctx). */
typedef struct sl_shard_walker {
  sl_status (*begin)(sl_source *src, void **ctx, sl_err *err);
  sl_status (*shard)(void *ctx, size_t k, sl_err *err);
  sl_status (*end)(void *ctx, sl_status st, const char *path, sl_err *err);
} sl_shard_walker;

/* Opens the set path (a URL) into src: from its sidecar, else walking
 * every shard with w and writing the sidecar; opts, the options the index
 * depends on in words, must equal the sidecar's. rebuild: the sidecar is
 * built again whatever the cache holds (`sluice index URL`). Verify mode
 * (src->on_bad) walks every shard and writes no sidecar. Errors:
 * SL_EIO naming the URL (a shard missing, a request refused), SL_EFORMAT
 * naming the shard whose size or ETag differs from its sidecar's (and how
 * to rebuild it), or a damaged sidecar; the walker's. */
sl_status sl_source_index_remote_shards(sl_source *src, const char *path,
                                        const sl_shard_walker *w,
                                        const char *opts, bool rebuild,
                                        sl_err *err);

/* A small object beside the shards (RecordIO's .idx) during a walk: its
 * bytes into a malloc'd *buf (*len; at most max), or *buf NULL when the
 * server says it is not there (HTTP 404). Errors as sl_remote_read_all. */
sl_status sl_source_read_beside(sl_source *src, const char *url, uint64_t max,
                                uint8_t **buf, size_t *len, sl_err *err);

#endif
