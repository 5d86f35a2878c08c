/* Shard names: what dataset.path names, as a list of paths, for the
 * sources made of shards (WebDataset tars, TFRecord and RecordIO files).
 *
 *   x.tar                           one shard
 *   train-{000000..000146}.tar      a brace pattern, as webdataset writes it
 *                                   (ranges, zero-padded to the longer
 *                                   bound; comma lists {a,b}; several braces)
 *   shards.txt / x.shards           a list: one path (or pattern) a line,
 *                                   relative to the list's folder; blank
 *                                   lines and lines starting with # skipped
 *   NAME-train.tfrecord-00000-of-01024
 *                                   TFDS's naming (sl_shard_tfds): any one
 *                                   shard, or the prefix NAME-train.tfrecord,
 *                                   names all N
 *
 * Bounds: at most SL_SHARDS_MAX paths, each under PATH_MAX, of at most
 * SL_SHARD_BYTES_MAX bytes in all; at most SL_SHARD_BRACES_MAX braces a
 * pattern; a list file of at most 64 MiB. A pattern is parsed once and its
 * count, longest path and bytes checked before a path is made: time and
 * memory follow the paths made, at most those bounds. */
#ifndef SLUICE_FORMATS_SHARD_PATHS_H
#define SLUICE_FORMATS_SHARD_PATHS_H

#include <stdbool.h>

#include "common/error.h"

#define SL_SHARDS_MAX (1u << 20)
#define SL_SHARD_BYTES_MAX (256u << 20)
#define SL_SHARD_BRACES_MAX 64

typedef sl_status (*sl_shard_add_fn)(void *ctx, const char *path, sl_err *err);

/* Calls add for each shard path of path, in order (list is true: path is a
 * list file). Errors: SL_ECONFIG (a malformed pattern, too many shards, a
 * path too long, an empty list), SL_EIO (the list cannot be read), and
 * add's. */
sl_status sl_shard_expand(const char *path, bool list, sl_shard_add_fn add,
                          void *ctx, sl_err *err);
/* Whether path's name is a list file's (.txt, .shards). */
bool sl_shard_is_list_name(const char *path);
/* Whether path (a URL's query and fragment left out) ends with ext
 * (".rec"): how a URL says its shards' format, none being looked at
 * before the open. */
bool sl_shard_name_ends(const char *path, const char *ext);
/* Whether path holds a brace pattern ({a..b} or {a,b}). */
bool sl_shard_is_pattern(const char *path);

/* TFDS's shard naming, PREFIX-IIIII-of-NNNNN (tensorflow_datasets writes
 * 5 digits each). *shards gets N when path is one such shard that exists,
 * or a prefix with no file of its own beside which PREFIX-...-of-N shards
 * exist (found by one read of its folder); 0 when neither (not an error).
 * Errors: SL_EIO (the folder cannot be read), SL_ECONFIG (shards of two
 * different counts beside the prefix, N = 0 or over SL_SHARDS_MAX). */
sl_status sl_shard_tfds_count(const char *path, unsigned *shards, sl_err *err);
/* TFDS's naming from a name alone (a URL, where no folder can be read):
 * name ends in -IIIII-of-NNNNN with N > 1 (and is no brace pattern):
 * *named is set and add is called for each of the N names, in order, the
 * widths kept. Else *named false and nothing called. Errors: SL_ECONFIG
 * (more than SL_SHARDS_MAX shards), add's. */
sl_status sl_shard_tfds_named(const char *name, sl_shard_add_fn add, void *ctx,
                              bool *named, sl_err *err);

/* Every shard path of path, NUL-terminated back to back in blob (n of
 * them, len bytes): a list file (by its name), a brace pattern, TFDS's
 * naming when tfds is set, else path itself. Free with
 * sl_shard_list_free. Errors: sl_shard_expand's, sl_shard_tfds's. */
typedef struct sl_shard_list {
  char *blob;
  size_t len, cap, n;
} sl_shard_list;
sl_status sl_shard_list_of(const char *path, bool tfds, sl_shard_list *l,
                           sl_err *err);
void sl_shard_list_free(sl_shard_list *l);

#endif
