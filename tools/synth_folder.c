/* Folders of synthetic JPEGs in class subfolders: see synth.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/rng.h"
#include "tools/synth.h"

void sl_synth_folder_defaults(sl_synth_folder_opts *o) {
  if (o->count <= 0)
    o->count = 100;
  if (o->classes <= 0)
    o->classes = 10;
  if (o->max_side <= 0)
    o->max_side = 2048;
}

void sl_synth_folder_item(const sl_synth_folder_opts *o, int i, int *w, int *h,
                          sl_synth_jpeg_opts *jo, uint64_t *seed,
                          char relpath[64]) {
  static const int sizes[][2] = {
      {1, 1},       {7, 5},      {5, 7},     {16, 16},   {33, 17},
      {64, 48},     {127, 95},   {200, 150}, {256, 256}, {320, 240},
      {500, 375},   {375, 500},  {640, 427}, {800, 600}, {1024, 768},
      {1600, 1200}, {2048, 1536}};
  static const sl_synth_color colors[] = {
      SL_SYNTH_420, SL_SYNTH_422, SL_SYNTH_444, SL_SYNTH_GRAY, SL_SYNTH_440};
  enum { nsizes = sizeof sizes / sizeof sizes[0] };
  int classes = o->classes > 0 ? o->classes : 10;
  int cls = i % classes;
  *seed = sl_mix64(o->seed ^ sl_mix64((uint64_t)i + 1));
  *jo = sl_synth_jpeg_defaults();
  jo->label = cls;
  if (o->imagenet) {
    uint64_t r = *seed % 100;
    *w = r < 70 ? 500 : r < 85 ? 375 : 500;
    *h = r < 70 ? 375 : r < 85 ? 500 : 333;
    jo->texture = 2;
  } else {
    int max_side = o->max_side > 0 ? o->max_side : 2048;
    *w = sizes[i % nsizes][0];
    *h = sizes[i % nsizes][1];
    int m = *w > *h ? *w : *h;
    if (m > max_side) {
      *w = (int)((int64_t)*w * max_side / m);
      *h = (int)((int64_t)*h * max_side / m);
      *w = *w < 1 ? 1 : *w;
      *h = *h < 1 ? 1 : *h;
    }
    jo->color = colors[i % 5];
    jo->progressive = i % 3 == 1;
    jo->restart_rows = i % 4 == 3 ? 1 + (i / 4) % 3 : 0;
    jo->quality = 75 + (i * 7) % 21;
  }
  snprintf(relpath, 64, "class_%03d/img_%05d.jpg", cls % 1000, i % 100000);
}

static sl_status mkdir_p(const char *path, sl_synth_err *err) {
  if (mkdir(path, 0777) != 0 && errno != EEXIST)
    return sl_synth_fail(err, errno, SL_EIO, "synth: cannot create %s", path);
  return SL_OK;
}

static sl_status write_file(const char *path, const uint8_t *p, size_t n,
                            sl_synth_err *err) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return sl_synth_fail(err, errno, SL_EIO, "synth: cannot create %s", path);
  size_t put = fwrite(p, 1, n, f);
  int e = errno;
  if (fclose(f) != 0 || put != n)
    return sl_synth_fail(err, put != n ? e : errno, SL_EIO,
                         "synth: cannot write %s", path);
  return SL_OK;
}

sl_status sl_synth_folder(const char *dir, const sl_synth_folder_opts *in,
                          sl_synth_err *err) {
  sl_synth_folder_opts o = *in;
  sl_synth_folder_defaults(&o);
  size_t dl = strlen(dir);
  if (dl == 0 || dl > 4000)
    return sl_synth_fail(err, 0, SL_EINVAL, "synth: bad output folder name");
  char path[4096 + 64];
  sl_status st = mkdir_p(dir, err);
  for (int k = 0; st == SL_OK && k < o.classes && k < o.count; k++) {
    snprintf(path, sizeof path, "%s/class_%03d", dir, k % 1000);
    st = mkdir_p(path, err);
  }
  for (int i = 0; st == SL_OK && i < o.count; i++) {
    int w, h;
    sl_synth_jpeg_opts jo;
    uint64_t seed;
    char rel[64];
    sl_synth_folder_item(&o, i, &w, &h, &jo, &seed, rel);
    uint8_t *buf;
    size_t len;
    st = sl_synth_jpeg(seed, w, h, &jo, &buf, &len, err);
    if (st != SL_OK)
      break;
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    st = write_file(path, buf, len, err);
    free(buf);
  }
  return st;
}
