/* A plain test file with known contents and a synthetic sample index, for
 * the I/O backends (no dataset format involved). */
#ifndef SLUICE_TESTS_IO_TESTFILE_H
#define SLUICE_TESTS_IO_TESTFILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct io_testfile {
  char path[512];
  int fd;
  uint64_t count;
  uint64_t *offset;
  uint32_t *length;
  uint32_t max_length;
  uint64_t size;
} io_testfile;

/* The byte stored at file position p. */
static inline uint8_t io_byte_at(uint64_t p) {
  uint64_t x = p * 0x9E3779B97F4A7C15ull;
  return (uint8_t)((x >> 29) ^ (p >> 9));
}

/* Writes `name` under $SLUICE_TEST_TMP (or /tmp): count samples back to
 * back from an odd header offset, with lengths from a fixed pattern
 * (0, 1, odd, page-crossing, > 4 KiB) scaled by `scale`, and opens it
 * read-only. Fails the test on any error. */
void io_testfile_make(io_testfile *t, const char *name, uint64_t count,
                      uint32_t scale);
void io_testfile_free(io_testfile *t);
/* sl_io_locate_fn over t. */
void io_testfile_locate(const void *ctx, uint64_t i, uint64_t *offset,
                        uint32_t *length);
/* 1 when data[0..len) is sample i's expected payload. */
int io_testfile_check(const io_testfile *t, uint64_t i, const uint8_t *data,
                      size_t len);

#endif
