/* Real datasets for loader tests: synthetic JPEGs written with the formats/
 * writer, the loader opened on them with base settings plus overrides, and
 * an FNV-1a hash of batch bytes. Failures are cmocka assertions. Library
 * sluice_test_data (formats, loader, synth, cmocka). */
#ifndef SLUICE_TESTS_SUPPORT_LOADER_DATA_H
#define SLUICE_TESTS_SUPPORT_LOADER_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "sluice.h"

/* Sample i is a JPEG of w0 + (i * wstep) % wmod by h0 + (i * hstep) % hmod
 * pixels made with seed i + seed0, labelled i % nclasses (at most 8);
 * sample `bad` (-1: none) has its first 64 bytes overwritten. With
 * restart_layout the JPEGs carry the restart markers `sluice pack` writes
 * (codecs/jpeg_layout.h); the pixels are the same either way. */
typedef struct sl_test_set {
  int n, nclasses, bad;
  uint64_t seed0;
  int w0, wstep, wmod, h0, hstep, hmod;
  int restart_layout;
  int reverse; /* nonzero: the same samples, written last one first */
  /* Resolution levels (sl_writer_options.levels; implies restart_layout):
   * each JPEG is stored as a level record when its size allows a level. */
  unsigned levels;
} sl_test_set;

/* Writes the set to path (LMDB or HDF5 by its extension), replacing it. */
void sl_test_write_set(const char *path, const sl_test_set *set, int corrupt);

/* path's name in $SLUICE_TEST_TMP (or /tmp) made unique by the pid:
 * "<tmp>/<stem>_<pid>.<ext>". */
void sl_test_tmp_path(char *out, size_t size, const char *stem,
                      const char *ext);

/* Removes an LMDB file and its -lock file. */
void sl_test_unlink_lmdb(const char *path);

/* sl_loader_open on dataset.path = path with the settings `base`, then `kv`
 * (both NULL-terminated key, value lists; kv may be NULL), and the log
 * callback when fn is not NULL. Asserts that it opens. */
sl_loader *sl_test_open_loader(const char *path, const char *const *base,
                               const char *const *kv, sl_log_fn fn, void *user);

/* FNV-1a of n bytes, continuing from h (start: SL_TEST_HASH0). */
#define SL_TEST_HASH0 0xcbf29ce484222325ULL
uint64_t sl_test_hash(uint64_t h, const void *p, size_t n);

#endif
