#include "io/io_testfile.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const uint32_t pattern[] = {0,   1, 7,    4095,  4096, 4097, 513,  12345,
                                   100, 3, 8191, 20000, 4000, 65,   1000, 9000};
#define HEADER 13u /* odd: no payload starts aligned by accident */

void io_testfile_make(io_testfile *t, const char *name, uint64_t count,
                      uint32_t scale) {
  memset(t, 0, sizeof *t);
  const char *dir = getenv("SLUICE_TEST_TMP");
  snprintf(t->path, sizeof t->path, "%s/%s", dir && *dir ? dir : "/tmp", name);
  t->count = count;
  t->offset = calloc(count ? count : 1, sizeof *t->offset);
  t->length = calloc(count ? count : 1, sizeof *t->length);
  assert_non_null(t->offset);
  assert_non_null(t->length);
  uint64_t p = HEADER;
  for (uint64_t i = 0; i < count; i++) {
    t->offset[i] = p;
    t->length[i] = pattern[i % (sizeof pattern / sizeof *pattern)] * scale;
    if (t->length[i] > t->max_length)
      t->max_length = t->length[i];
    p += t->length[i];
  }
  t->size = p + 29; /* an odd tail too */
  FILE *f = fopen(t->path, "wb");
  assert_non_null(f);
  uint8_t buf[65536] = {0};
  for (uint64_t at = 0; at < t->size;) {
    size_t n = t->size - at < sizeof buf ? (size_t)(t->size - at) : sizeof buf;
    for (size_t k = 0; k < n; k++)
      buf[k] = io_byte_at(at + k);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    at += n;
  }
  assert_int_equal(fclose(f), 0);
  t->fd = open(t->path, O_RDONLY | O_CLOEXEC);
  assert_true(t->fd >= 0);
}

void io_testfile_free(io_testfile *t) {
  if (t->fd > 0)
    close(t->fd);
  unlink(t->path);
  free(t->offset);
  free(t->length);
  memset(t, 0, sizeof *t);
}

void io_testfile_locate(const void *ctx, uint64_t i, uint64_t *offset,
                        uint32_t *length) {
  const io_testfile *t = ctx;
  *offset = t->offset[i];
  *length = t->length[i];
}

int io_testfile_check(const io_testfile *t, uint64_t i, const uint8_t *data,
                      size_t len) {
  if (len != t->length[i])
    return 0;
  for (size_t k = 0; k < len; k++)
    if (data[k] != io_byte_at(t->offset[i] + k))
      return 0;
  return 1;
}
