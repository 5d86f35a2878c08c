/* A set of files read as one offset space (file_span.h). */
#include "common/file_span.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/pread_full.h"

long sl_file_set_find(const sl_file_set *s, uint64_t off, uint64_t len) {
  size_t lo = 0, hi = s->n; /* the last file with base <= off is lo - 1 */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->f[mid].base <= off)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return -1;
  const sl_file_span *f = &s->f[lo - 1];
  uint64_t at = off - f->base;
  if (at > f->size || len > f->size - at)
    return -1;
  return (long)(lo - 1);
}

long sl_file_set_find_near(const sl_file_set *s, uint64_t off, uint64_t len,
                           size_t *hint) {
  if (*hint < s->n) {
    const sl_file_span *f = &s->f[*hint];
    bool last = *hint + 1 == s->n;
    if (off >= f->base && (last || off < s->f[*hint + 1].base)) {
      uint64_t at = off - f->base; /* the file holding off: in it or not */
      return at > f->size || len > f->size - at ? -1 : (long)*hint;
    }
  }
  long k = sl_file_set_find(s, off, len);
  if (k >= 0)
    *hint = (size_t)k;
  return k;
}

int sl_file_set_pread(const sl_file_set *s, void *buf, size_t len, uint64_t off,
                      size_t *got, long *file) {
  *got = 0;
  long k = sl_file_set_find(s, off, len);
  if (file)
    *file = k;
  if (k < 0) {
    errno = EINVAL;
    return -1;
  }
  const sl_file_span *f = &s->f[k];
  int fd = f->fd;
  if (fd < 0) {
    if (!s->open) {
      errno = EBADF;
      return -1;
    }
    fd = s->open(s->ctx, (size_t)k);
    if (fd < 0)
      return -1;
  }
  int rc = sl_pread_full(fd, buf, len, off - f->base, got);
  if (f->fd < 0) {
    int keep = errno;
    close(fd); /* read-only: close cannot lose data */
    errno = keep;
  }
  return rc;
}

void sl_file_set_name(const sl_file_set *s, size_t k, char *buf, size_t cap) {
  if (s->name)
    s->name(s->ctx, k, buf, cap);
  else
    snprintf(buf, cap, "file %zu", k);
}

sl_status sl_file_set_map(const sl_file_set *s, uint8_t **map, size_t *map_len,
                          sl_err *err) {
  *map = NULL;
  *map_len = 0;
  if (s->end == 0)
    return SL_OK;
  if (s->end > SIZE_MAX)
    return sl_err_set(err, SL_ETOOBIG, "%" PRIu64 " bytes: too large to map",
                      s->end);
  size_t len = (size_t)s->end;
  /* One reservation, never readable itself: a stray offset in a gap faults
   * as past a file's end would (the guard turns both into SL_EIO). */
  void *r = mmap(NULL, len, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED)
    return sl_err_errno(err, SL_EIO, errno,
                        "reserving %zu bytes of address space for %zu files",
                        len, s->n);
  for (size_t k = 0; k < s->n; k++) {
    const sl_file_span *f = &s->f[k];
    if (f->size == 0)
      continue;
    void *at = (uint8_t *)r + f->base;
    void *m = f->fd < 0 ? MAP_FAILED
                        : mmap(at, (size_t)f->size, PROT_READ,
                               MAP_SHARED | MAP_FIXED, f->fd, 0);
    if (m == MAP_FAILED) {
      int e = f->fd < 0 ? EBADF : errno;
      char name[512];
      sl_file_set_name(s, k, name, sizeof name);
      munmap(r, len);
      return sl_err_errno(err, SL_EIO, e, "%s: mmap of %" PRIu64 " bytes", name,
                          f->size);
    }
  }
  *map = r;
  *map_len = len;
  return SL_OK;
}

sl_status sl_file_set_reserve_fds(uint64_t need, const char *what,
                                  sl_err *err) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return sl_err_errno(err, SL_EIO, errno, "%s: getrlimit(RLIMIT_NOFILE)",
                        what);
  /* The descriptors the process holds already are not counted: a margin
   * stands for them (stdio, the loader's own, the application's). */
  uint64_t want = need + 64;
  if (rl.rlim_cur != RLIM_INFINITY && want > (uint64_t)rl.rlim_cur) {
    if (rl.rlim_max != RLIM_INFINITY && want > (uint64_t)rl.rlim_max)
      return sl_err_set(err, SL_EIO,
                        "%s: %" PRIu64 " files must stay open, but the "
                        "process may open at most %llu (RLIMIT_NOFILE's "
                        "hard limit): raise it (ulimit -Hn) or use fewer, "
                        "larger files",
                        what, need, (unsigned long long)rl.rlim_max);
    struct rlimit up = rl;
    up.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &up) != 0)
      return sl_err_errno(err, SL_EIO, errno,
                          "%s: %" PRIu64 " files must stay open; raising "
                          "RLIMIT_NOFILE from %llu to %llu",
                          what, need, (unsigned long long)rl.rlim_cur,
                          (unsigned long long)rl.rlim_max);
  }
  return SL_OK;
}
