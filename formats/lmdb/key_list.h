/* The sample order that folder2lmdb-style LMDBs record beside their
 * samples: the `__keys__` entry, a list of the sample keys in the order the
 * writer's own Dataset indexes them (sample i is keys[i]). folder2lmdb.py
 * stores pickle.dumps(keys) (protocol 2 to 5: a list of bytes, or of str
 * under Python 2); tensorpack's LMDBSerializer stores
 * msgpack.dumps(keys, use_bin_type=True) (an array of bin, or str).
 *
 * Only that shape is read: a flat list of byte strings, walked once
 * without building any object (a list of millions of keys needs no
 * memory). A pickle may carry PROTO, FRAME, EMPTY_LIST, MARK, APPEND,
 * APPENDS, the memo opcodes (MEMOIZE, BINPUT, LONG_BINPUT) and STOP around
 * its strings; anything else is not a key list.
 *
 * Thread safety: pure functions of their arguments. */
#ifndef SLUICE_FORMATS_KEY_LIST_H
#define SLUICE_FORMATS_KEY_LIST_H

#include <stddef.h>
#include <stdint.h>

/* Called for each key in list order; a nonzero return stops the walk and
 * is returned. */
typedef int (*sl_key_fn)(void *ctx, const uint8_t *key, size_t len);

/* Walks value[0, n), a pickled (value[0] == 0x80) or msgpack list of byte
 * strings, calling each per key. Returns 0 after the last key, each's
 * nonzero return, or -1 with a reason in why (cap bytes) naming the offset
 * where the value stops being a key list. Never reads outside value[0, n).
 * *count receives the keys walked. */
int sl_key_list_walk(const uint8_t *value, size_t n, sl_key_fn each, void *ctx,
                     uint64_t *count, char *why, size_t cap);

#endif
