/* Reading exactly n bytes at an offset: pread until done, retrying EINTR.
 * Shared by the dataset reader (formats/core/source.c) and the loader's pread
 * backend (io/io_reader.c), which phrase their own errors. */
#ifndef SLUICE_COMMON_PREAD_FULL_H
#define SLUICE_COMMON_PREAD_FULL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

/* Reads len bytes of fd at off into buf. Returns 0 when all were read, -1
 * on a read error (errno set), 1 when the file ends first. *got is the
 * number of bytes read either way. */
static inline int sl_pread_full(int fd, void *buf, size_t len, uint64_t off,
                                size_t *got) {
  size_t done = 0;
  int rc = 0;
  while (done < len) {
    ssize_t n =
        pread(fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      rc = n < 0 ? -1 : 1;
      break;
    }
    done += (size_t)n;
  }
  *got = done;
  return rc;
}

#endif
