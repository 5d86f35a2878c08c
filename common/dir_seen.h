/* The folders a walk has entered, by (device, inode): a walk that follows
 * links enters each folder once, so links cannot make it exponential (two
 * links a level to the next folder double the paths each level) nor loop.
 * An open-addressing hash set; header-only.
 *
 * Thread safety: one set per walk, used by one thread. */
#ifndef SLUICE_COMMON_DIR_SEEN_H
#define SLUICE_COMMON_DIR_SEEN_H

#include <stdint.h>
#include <stdlib.h>

typedef struct sl_dir_seen {
  uint64_t *dev, *ino; /* ino == 0 marks an empty slot; see sl_dir_seen_add */
  size_t n, cap;       /* cap: 0 or a power of two */
} sl_dir_seen;

static inline size_t sl_dir_seen_slot(uint64_t dev, uint64_t ino, size_t cap) {
  uint64_t h = (ino ^ (dev * 0x9e3779b97f4a7c15u)) * 0xff51afd7ed558ccdu;
  return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* Adds (dev, ino). Returns 1 when it was not in the set, 0 when it was, -1
 * when memory ran out (the set is then unchanged). Inode 0 is stored as
 * inode ~0 (no file system hands out either to a folder it lists). */
static inline int sl_dir_seen_add(sl_dir_seen *s, uint64_t dev, uint64_t ino) {
  if (ino == 0)
    ino = ~(uint64_t)0;
  if (2 * (s->n + 1) > s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    uint64_t *d = calloc(cap, sizeof *d), *in = calloc(cap, sizeof *in);
    if (!d || !in || cap > SIZE_MAX / 2) {
      free(d);
      free(in);
      return -1;
    }
    for (size_t i = 0; i < s->cap; i++) {
      if (!s->ino[i])
        continue;
      size_t k = sl_dir_seen_slot(s->dev[i], s->ino[i], cap);
      while (in[k])
        k = (k + 1) & (cap - 1);
      d[k] = s->dev[i];
      in[k] = s->ino[i];
    }
    free(s->dev);
    free(s->ino);
    s->dev = d;
    s->ino = in;
    s->cap = cap;
  }
  size_t k = sl_dir_seen_slot(dev, ino, s->cap);
  for (; s->ino[k]; k = (k + 1) & (s->cap - 1))
    if (s->ino[k] == ino && s->dev[k] == dev)
      return 0;
  s->dev[k] = dev;
  s->ino[k] = ino;
  s->n++;
  return 1;
}

static inline void sl_dir_seen_free(sl_dir_seen *s) {
  free(s->dev);
  free(s->ino);
  *s = (sl_dir_seen){0};
}

#endif
