/* The description of an HDF5 array file's source
 * (formats/hdf5/h5array_describe.h). */
#include "formats/hdf5/h5array_describe.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *filters_text(const sl_h5_pipeline *p, char *buf,
                                size_t cap) {
  size_t o = (size_t)snprintf(buf, cap, "chunked, filters ");
  for (int i = 0; i < p->n && o < cap; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? "+" : "",
                          sl_h5_filter_name(p->id[i]));
  if (o < cap)
    snprintf(buf + o, cap - o, " (undone by the workers), samples per chunk");
  return buf;
}

sl_status sl_h5_describe(sl_source *src, const sl_h5_described *w,
                         sl_err *err) {
  const sl_h5_dset *img = w->img;
  const sl_h5_geom *g = w->g;
  const sl_h5_labels *L = w->labels;
  const sl_h5_names *cls = w->classes;
  char sh[128], desc[1024], ftext[160];
  sl_h5_shape_text(img, sh, sizeof sh);
  size_t o = 0;
  if (g->fixed)
    o = (size_t)snprintf(desc, sizeof desc,
                         "images %s %s %s: fixed-size encoded image bytes, "
                         "rows of %" PRIu64 " bytes padded, contiguous at "
                         "offset %" PRIu64 ", lengths %s",
                         img->name, sh,
                         img->rank == 1 ? "opaque (uint8 bytes)" : "uint8",
                         g->bytes, g->addr, w->len->name);
  else if (g->vlen)
    o = (size_t)snprintf(desc, sizeof desc,
                         "images %s %s vlen uint8: encoded image bytes in "
                         "global heap collections, descriptors at offset "
                         "%" PRIu64,
                         img->name, sh, g->addr);
  else
    o = (size_t)snprintf(
        desc, sizeof desc, "images %s %s uint8, %s%s, %s %" PRIu64, img->name,
        sh,
        img->rank == 3             ? "NHW (gray)"
        : g->order == SL_AXES_NHWC ? "NHWC"
                                   : "NCHW",
        g->c == 3 ? (g->codec == SL_IMAGE_RAW_CHW_BGR ? " BGR" : " RGB") : "",
        !g->chunked   ? "contiguous at offset"
        : g->filtered ? filters_text(&g->pipe, ftext, sizeof ftext)
                      : "chunked unfiltered, samples per chunk",
        g->chunked ? g->per_chunk : g->addr);
  if (g->tiled && o < sizeof desc) {
    char cs[128];
    sl_h5_chunk_text(img, g->cdims, cs, sizeof cs);
    o += (size_t)snprintf(desc + o, sizeof desc - o,
                          "; chunks %s: each image spans %" PRIu64
                          " chunks, read a row of chunks (%" PRIu64
                          " images) at a time",
                          cs, g->tiles, g->per_chunk);
  }
  if (L->lab.d >= 0 && o < sizeof desc) {
    sl_h5_shape_text(&L->lab, sh, sizeof sh);
    o += (size_t)snprintf(desc + o, sizeof desc - o, "; %s %s %s",
                          L->lab_targets ? "targets" : "labels", L->lab.name,
                          sh);
  }
  if (L->tgt.d >= 0 && o < sizeof desc) {
    sl_h5_shape_text(&L->tgt, sh, sizeof sh);
    o += (size_t)snprintf(desc + o, sizeof desc - o, "; targets %s %s",
                          L->tgt.name, sh);
  }
  if (L->lab.d < 0 && o < sizeof desc)
    o += (size_t)snprintf(desc + o, sizeof desc - o, "; no labels (-1)");
  if (cls->k && o < sizeof desc)
    o += (size_t)snprintf(desc + o, sizeof desc - o,
                          "; %" PRIu32 " class names from %s", cls->k,
                          cls->from);
  if (src->h5f && src->h5f->tiled && o < sizeof desc) {
    /* Every sample read undoes its whole row of chunks: only a cached
     * row serves its other images. */
    char whole[96];
    size_t wo = (size_t)snprintf(whole, sizeof whole, "1");
    for (int i = 1; i < img->rank && wo < sizeof whole; i++)
      wo += (size_t)snprintf(whole + wo, sizeof whole - wo, "x%llu",
                             (unsigned long long)img->dims[i]);
    snprintf(desc + o, sizeof desc - o,
             "; advice: reading one image undoes its row of %" PRIu64
             " chunks (%" PRIu64 " images, %" PRIu64
             " bytes); keep loader.order = quasi_random and "
             "dataset.chunk_cache of at least %" PRIu64
             " bytes (two rows) so each row is undone about once an epoch, "
             "or rechunk to whole images (h5repack -l %s:CHUNK=%s)",
             g->tiles, g->per_chunk, src->h5f->group_bytes,
             2 * src->h5f->group_bytes, img->name + 1, whole);
  } else if (src->h5f && src->h5f->pipe.n > 0 && g->per_chunk > 1 &&
             o < sizeof desc) {
    /* Cache advice: each chunk decompressed once needs all chunks cached
     * (the order does not walk chunks). */
    uint64_t nch = sl_h5_div_up(g->n, g->per_chunk);
    snprintf(desc + o, sizeof desc - o,
             "; advice: %" PRIu64 " samples a compressed chunk of %" PRIu64
             " bytes: each chunk is decompressed once while it stays in "
             "dataset.chunk_cache; %" PRIu64 " bytes cache them all",
             g->per_chunk, g->pipe.chunk_bytes, nch * g->pipe.chunk_bytes);
  }
  if (!(src->desc = strdup(desc)))
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", src->path);
  return SL_OK;
}
