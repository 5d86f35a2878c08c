/* See loader_data.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codecs/codec.h"
#include "codecs/jpeg_levels.h"
#include "formats/core/writer.h"
#include "support/loader_data.h"
#include "tools/synth.h"

void sl_test_write_set(const char *path, const sl_test_set *set, int corrupt) {
  static const char *const classes[8] = {"a", "b", "c", "d",
                                         "e", "f", "g", "h"};
  assert_true(set->nclasses >= 1 && set->nclasses <= 8);
  sl_err err;
  sl_fwriter *w = NULL;
  unlink(path);
  assert_int_equal(sl_fwriter_open(&w, path, SL_FORMAT_AUTO, &err), SL_OK);
  if (set->levels)
    assert_int_equal(sl_fwriter_set_levels(w, &err), SL_OK);
  for (int k = 0; k < set->n; k++) {
    int i = set->reverse ? set->n - 1 - k : k;
    int wd = set->w0 + (i * set->wstep) % set->wmod;
    int ht = set->h0 + (i * set->hstep) % set->hmod;
    sl_synth_jpeg_opts jo = sl_synth_jpeg_defaults();
    jo.label = i % set->nclasses;
    jo.restart_mcus = set->restart_layout || set->levels ? -1 : 0;
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(sl_synth_jpeg((uint64_t)i + set->seed0, wd, ht, &jo, &buf,
                                   &len, &(sl_synth_err){0}),
                     SL_OK);
    if (corrupt && i == set->bad) /* not a JPEG any more */
      memset(buf, 0x5a, len < 64 ? len : 64);
    sl_sample_info meta = {.label = i % set->nclasses,
                           .height = (uint16_t)ht,
                           .width = (uint16_t)wd,
                           .codec = SL_IMAGE_JPEG,
                           .channels = 3};
    uint8_t *rec = NULL;
    size_t rec_len = 0;
    if (set->levels && !(corrupt && i == set->bad))
      assert_int_equal(sl_jpeg_levels_make(buf, len, set->levels, 90,
                                           1ull << 28, &rec, &rec_len, &err),
                       SL_OK);
    if (rec) {
      free(buf);
      buf = rec;
      len = rec_len;
      meta.codec = SL_IMAGE_JPEG_LEVELS;
    }
    assert_int_equal(sl_fwriter_add(w, buf, len, &meta, &err), SL_OK);
    free(buf);
  }
  assert_int_equal(sl_fwriter_commit(w, (uint32_t)set->nclasses, classes,
                                     "test", true, &err),
                   SL_OK);
}

void sl_test_tmp_path(char *out, size_t size, const char *stem,
                      const char *ext) {
  const char *tmp = getenv("SLUICE_TEST_TMP");
  if (!tmp)
    tmp = "/tmp";
  int n = snprintf(out, size, "%s/%s_%d.%s", tmp, stem, (int)getpid(), ext);
  assert_true(n > 0 && (size_t)n < size);
}

void sl_test_unlink_lmdb(const char *path) {
  unlink(path);
  char lock[1024];
  snprintf(lock, sizeof lock, "%s-lock", path);
  unlink(lock);
}

sl_loader *sl_test_open_loader(const char *path, const char *const *base,
                               const char *const *kv, sl_log_fn fn,
                               void *user) {
  sl_config *cfg;
  assert_int_equal(sl_config_create(&cfg), SL_OK);
  assert_int_equal(sl_config_set(cfg, "dataset.path", path), SL_OK);
  for (int i = 0; base && base[i]; i += 2)
    assert_int_equal(sl_config_set(cfg, base[i], base[i + 1]), SL_OK);
  for (int i = 0; kv && kv[i]; i += 2)
    assert_int_equal(sl_config_set(cfg, kv[i], kv[i + 1]), SL_OK);
  if (fn)
    sl_config_set_log(cfg, fn, user);
  sl_loader *ld = NULL;
  sl_status st = sl_loader_open(&ld, cfg);
  if (st != SL_OK)
    fprintf(stderr, "open %s: %s\n", path, sl_loader_errmsg(ld));
  assert_int_equal(st, SL_OK);
  sl_config_destroy(cfg);
  return ld;
}

uint64_t sl_test_hash(uint64_t h, const void *p, size_t n) {
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}
