/* Where `sluice pack` writes its samples: one file, or with --shards N a
 * folder of N shards (part-00000.lmdb, ...) and the index that makes them
 * one dataset (sl_dataset_index). Input item i goes to shard
 * floor(i × N / items): the same shards for any number of threads, since
 * the pool hands the items over in order. Shards are written one after
 * another, each committed when its items are done; the folder is whole
 * only once sl_pack_out_commit has written the index. */
#ifndef SLUICE_TOOLS_PACK_OUT_H
#define SLUICE_TOOLS_PACK_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice.h"

typedef struct sl_pack_out sl_pack_out;

/* Opens path for items input items (shards 0: path is the one file; else
 * the folder, made if missing, which must be empty, or with wo->replace
 * hold only an earlier pack's shards, which go). Every writer gets wo and
 * the class names. Returns 0, or -1 with msg set (*out may then still
 * need sl_pack_out_close). */
int sl_pack_out_open(sl_pack_out **out, const char *path, uint32_t shards,
                     size_t items, const sl_writer_options *wo,
                     const char *const *classes, uint32_t nclasses, char *msg,
                     size_t cap);
/* The writer input item `item` goes to (items in rising order), committing
 * the shards before it; NULL with msg set when a commit or create failed. */
sl_writer *sl_pack_out_writer(sl_pack_out *o, size_t item, char *msg,
                              size_t cap);
/* Commits the last writer (and any shards left empty) and writes the
 * index. Returns 0, or -1 with msg set. */
int sl_pack_out_commit(sl_pack_out *o, char *msg, size_t cap);
/* Frees o; unless done, removes the shards it committed. Accepts NULL. */
void sl_pack_out_close(sl_pack_out *o, bool done);

#endif
