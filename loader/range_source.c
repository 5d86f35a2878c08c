/* Range reads over a source's remote files (loader/range_source.h). */
#include "loader/range_source.h"

static bool locate(const void *ctx, uint64_t i, size_t *obj, uint64_t *off,
                   uint32_t *len) {
  const sl_source *src = ctx;
  const sl_sample_info *e = sl_source_info(src, i);
  const sl_file_set *fs = sl_source_files(src);
  long k = fs ? sl_file_set_find(fs, e->offset, e->length) : -1;
  if (k < 0)
    return false;
  *obj = (size_t)k;
  *off = e->offset - fs->f[k].base;
  *len = e->length;
  return true;
}

static void object(const void *ctx, size_t k, const char **url,
                   uint64_t *size) {
  uint32_t crc;
  if (!sl_source_remote_file(ctx, k, url, size, &crc)) {
    *url = "?"; /* not reached: locate names remote files only */
    *size = 0;
  }
}

sl_status sl_range_source_open(sl_ranges **out, const sl_source *src,
                               const char *name, unsigned requests,
                               size_t pool_bytes, sl_err *err) {
  const sl_fetch_conf *conf = sl_source_fetch_conf(src);
  if (!conf)
    return sl_err_set(err, SL_EINVAL,
                      "%s: io.remote_read = ranges reads datasets at URLs",
                      name);
  sl_ranges_opts o = {.conf = conf,
                      .name = name,
                      .requests = requests,
                      .pool_bytes = pool_bytes,
                      .max_length = sl_source_max_length(src),
                      .locate = locate,
                      .object = object,
                      .ctx = src};
  return sl_ranges_open(out, &o, err);
}
