/* A foreign LMDB's samples put in the order of its `__keys__` list
 * (formats/lmdb/key_list.h), which is how folder2lmdb's and tensorpack's own
 * Datasets number them: indexed in LMDB key order ("0", "1", "10", "11",
 * ..., "2"), sample i would not be the writer's sample i. The index, the
 * names and the targets are permuted once at open; a list that does not
 * name every sample exactly once leaves key order, and says why in
 * src->key_order (`sluice info` prints it). */
#include "formats/core/source_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/lmdb/key_list.h"

/* A sample and its key, for the search of the list's keys. */
typedef struct keyed {
  const uint8_t *key;
  uint16_t len;
  uint64_t sample;
} keyed;

typedef struct order_walk {
  const keyed *sorted; /* the samples by key */
  uint64_t *perm;      /* perm[j]: the sample the list names j-th */
  uint8_t *used;
  uint64_t n, at;
  char why[160];
} order_walk;

static int cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
  int c = memcmp(a, b, an < bn ? an : bn);
  return c ? c : (an > bn) - (an < bn);
}

static int cmp_keyed(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  return cmp_bytes(x->key, x->len, y->key, y->len);
}

static int take_key(void *ctx, const uint8_t *key, size_t len) {
  order_walk *w = ctx;
  const keyed *s = w->sorted;
  uint64_t lo = 0, hi = w->n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    int c = cmp_bytes(s[mid].key, s[mid].len, key, len);
    if (c == 0) {
      uint64_t i = s[mid].sample;
      if (w->used[i]) {
        snprintf(w->why, sizeof w->why, "it lists key '%.*s' twice",
                 (int)(len < 64 ? len : 64), (const char *)key);
        return 1;
      }
      if (w->at == w->n) {
        snprintf(w->why, sizeof w->why,
                 "it lists more keys than the %" PRIu64 " samples", w->n);
        return 1;
      }
      w->used[i] = 1;
      w->perm[w->at++] = i;
      return 0;
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  snprintf(w->why, sizeof w->why, "it lists key '%.*s', which is no sample",
           (int)(len < 64 ? len : 64), (const char *)key);
  return 1;
}

/* Applies perm to the index, the names and the targets. */
static sl_status permute(sl_source *src, const uint64_t *perm, sl_err *err) {
  uint64_t n = src->count;
  uint32_t k = src->target_width;
  sl_sample_info *index = malloc(n * sizeof *index);
  uint64_t *names = src->name_off ? malloc(n * sizeof *names) : NULL;
  float *targets = src->targets && k ? malloc(n * k * sizeof *targets) : NULL;
  if (!index || (src->name_off && !names) || (src->targets && k && !targets)) {
    free(index);
    free(names);
    free(targets);
    return sl_err_set(err, SL_ENOMEM,
                      "%s: no memory to order %" PRIu64 " samples as __keys__",
                      src->path, n);
  }
  for (uint64_t j = 0; j < n; j++) {
    index[j] = src->index[perm[j]];
    if (names)
      names[j] = src->name_off[perm[j]];
    if (targets)
      memcpy(targets + j * k, src->targets + perm[j] * k, k * sizeof *targets);
  }
  memcpy(src->index, index, n * sizeof *index);
  if (names)
    memcpy(src->name_off, names, n * sizeof *names);
  if (targets)
    memcpy(src->targets, targets, n * k * sizeof *targets);
  free(index);
  free(names);
  free(targets);
  return SL_OK;
}

sl_status sl_source_follow_key_list(sl_source *src, const uint8_t *base,
                                    const uint64_t *key_off,
                                    const uint16_t *key_len, uint64_t list_off,
                                    size_t list_len, sl_err *err) {
  uint64_t n = src->count;
  order_walk w = {.n = n};
  keyed *sorted = malloc((n ? n : 1) * sizeof *sorted);
  w.perm = malloc((n ? n : 1) * sizeof *w.perm);
  w.used = calloc(n ? n : 1, 1);
  if (!sorted || !w.perm || !w.used) {
    free(sorted);
    free(w.perm);
    free(w.used);
    return sl_err_set(err, SL_ENOMEM,
                      "%s: no memory to read its __keys__ list of %" PRIu64
                      " samples",
                      src->path, n);
  }
  for (uint64_t i = 0; i < n; i++)
    sorted[i] = (keyed){base + key_off[i], key_len[i], i};
  qsort(sorted, n, sizeof *sorted, cmp_keyed);
  w.sorted = sorted;
  uint64_t listed = 0;
  char why[160];
  int rc = sl_key_list_walk(base + list_off, list_len, take_key, &w, &listed,
                            why, sizeof why);
  const char *reason = rc < 0 ? why : rc > 0 ? w.why : NULL;
  if (!reason && w.at != n) {
    snprintf(w.why, sizeof w.why,
             "it lists %" PRIu64 " keys for %" PRIu64 " samples", listed, n);
    reason = w.why;
  }
  sl_status st = SL_OK;
  if (reason)
    snprintf(src->key_order, sizeof src->key_order,
             "in LMDB key order: its __keys__ list is not followed, as %s",
             reason);
  else if ((st = permute(src, w.perm, err)) == SL_OK)
    snprintf(src->key_order, sizeof src->key_order,
             "in the order of its __keys__ list (the writer's own sample "
             "numbers)");
  free(sorted);
  free(w.perm);
  free(w.used);
  return st;
}
