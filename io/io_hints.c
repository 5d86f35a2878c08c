#include "io/io_hints.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

size_t sl_page_size(void) {
  long ps = sysconf(_SC_PAGESIZE);
  return ps > 0 ? (size_t)ps : 4096;
}

/* Widens [p, p + len) to whole pages and applies advice. */
static sl_status madvise_range(const void *p, size_t len, int advice,
                               const char *what, sl_err *err) {
  if (len == 0)
    return SL_OK;
  size_t ps = sl_page_size();
  uintptr_t start = (uintptr_t)p & ~(uintptr_t)(ps - 1);
  uintptr_t end = (uintptr_t)p + len;
  size_t span = (size_t)(end - start);
  if (madvise((void *)start, span, advice) != 0)
    return sl_err_errno(err, SL_EIO, errno, "madvise(%s) of %zu bytes", what,
                        span);
  return SL_OK;
}

sl_status sl_hint_willneed(const void *p, size_t len, sl_err *err) {
  return madvise_range(p, len, MADV_WILLNEED, "MADV_WILLNEED", err);
}

sl_status sl_hint_random(const void *p, size_t len, sl_err *err) {
  return madvise_range(p, len, MADV_RANDOM, "MADV_RANDOM", err);
}

/* posix_fadvise returns the error number instead of setting errno. */
static sl_status fadvise(int fd, uint64_t offset, uint64_t len, int advice,
                         const char *what, sl_err *err) {
  if (offset > INT64_MAX || len > INT64_MAX)
    return sl_err_set(err, SL_EINVAL, "posix_fadvise(%s): range too large",
                      what);
  int rc = posix_fadvise(fd, (off_t)offset, (off_t)len, advice);
  if (rc != 0)
    return sl_err_errno(err, SL_EIO, rc, "posix_fadvise(%s) on fd %d", what,
                        fd);
  return SL_OK;
}

sl_status sl_fadvise_dontneed(int fd, uint64_t offset, uint64_t len,
                              sl_err *err) {
  /* Dirty pages are not dropped: write them back first. A read-only
   * descriptor may refuse fdatasync (EBADF/EINVAL) and then has none. */
  if (fdatasync(fd) != 0 && errno != EBADF && errno != EINVAL && errno != EROFS)
    return sl_err_errno(err, SL_EIO, errno, "fdatasync on fd %d", fd);
  return fadvise(fd, offset, len, POSIX_FADV_DONTNEED, "DONTNEED", err);
}

sl_status sl_fadvise_random(int fd, sl_err *err) {
  return fadvise(fd, 0, 0, POSIX_FADV_RANDOM, "RANDOM", err);
}

sl_status sl_cached_bytes(int fd, uint64_t offset, uint64_t len, uint64_t *out,
                          sl_err *err) {
  *out = 0;
  if (len == 0)
    return SL_OK;
  size_t ps = sl_page_size();
  uint64_t start = offset & ~(uint64_t)(ps - 1);
  uint64_t span64 = offset + len - start;
  if (span64 > SIZE_MAX / 2 || start > INT64_MAX)
    return sl_err_set(err, SL_EINVAL, "mincore: range too large");
  size_t span = (size_t)span64;
  size_t pages = (span + ps - 1) / ps;
  unsigned char *vec = malloc(pages);
  if (!vec)
    return sl_err_set(err, SL_ENOMEM, "mincore: %zu page flags", pages);
  void *map = mmap(NULL, span, PROT_READ, MAP_SHARED, fd, (off_t)start);
  if (map == MAP_FAILED) {
    int e = errno;
    free(vec);
    return sl_err_errno(err, SL_EIO, e, "mmap of fd %d for mincore", fd);
  }
  sl_status st = SL_OK;
  if (mincore(map, span, vec) != 0) {
    st = sl_err_errno(err, SL_EIO, errno, "mincore on fd %d", fd);
  } else {
    uint64_t n = 0;
    for (size_t i = 0; i < pages; i++)
      n += vec[i] & 1;
    *out = n * ps;
  }
  munmap(map, span);
  free(vec);
  return st;
}
