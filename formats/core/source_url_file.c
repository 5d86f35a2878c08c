/* A single LMDB or HDF5 file at a URL (formats/core/source_impl.h): its
 * size and ETag by HEAD, the file fetched whole into the cache (known by
 * URL, size and ETag: a second open fetches nothing, a changed file is
 * another object), to be opened as a local file through /proc/self/fd
 * (source.c), so that a later eviction from the cache cannot pull it from
 * under the open source (its descriptors keep it). */
#include "formats/core/source_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/url_shown.h"
#include "formats/core/crc32c.h"

static bool ends_with(const char *s, size_t n, const char *ext) {
  size_t e = strlen(ext);
  return n >= e && strncmp(s + n - e, ext, e) == 0;
}

bool sl_source_is_url_file(const char *path, sl_format_kind fmt) {
  if (sl_url_kind_of(path) == SL_URL_NONE)
    return false;
  if (fmt == SL_FORMAT_LMDB || fmt == SL_FORMAT_HDF5)
    return true;
  if (fmt != SL_FORMAT_AUTO)
    return false;
  size_t n = strcspn(path, "?#"); /* the path, not a query */
  static const char *const exts[] = {".lmdb", ".mdb", ".h5",
                                     ".hdf5", ".hdf", ".he5"};
  for (size_t k = 0; k < sizeof exts / sizeof *exts; k++)
    if (ends_with(path, n, exts[k]))
      return true;
  return false;
}

void sl_source_say_url(sl_err *err, const char *local, const char *url) {
  char shown[512], out[SL_ERRMSG_MAX];
  sl_url_shown(url, shown, sizeof shown);
  size_t n = 0, ll = strlen(local);
  for (const char *p = err->msg; *p && n + 1 < sizeof out;) {
    if (strncmp(p, local, ll) == 0) {
      n += (size_t)snprintf(out + n, sizeof out - n, "%s", shown);
      if (n >= sizeof out)
        n = sizeof out - 1;
      p += ll;
    } else {
      out[n++] = *p++;
    }
  }
  out[n] = '\0';
  snprintf(err->msg, sizeof err->msg, "%s", out);
}

sl_status sl_source_fetch_url_file(const char *url, const sl_remote_opts *opts,
                                   sl_remote **r, int *fd, char *local,
                                   size_t cap, sl_err *err) {
  *r = NULL;
  *fd = -1;
  uint64_t size = 0;
  sl_status st = sl_remote_open(r, opts, sl_crc32c_update, err);
  if (st == SL_OK)
    st = sl_remote_file(*r, url, fd, &size, err);
  if (st != SL_OK) {
    sl_remote_close(*r);
    *r = NULL;
    return st;
  }
  snprintf(local, cap, "/proc/self/fd/%d", *fd);
  return SL_OK;
}
