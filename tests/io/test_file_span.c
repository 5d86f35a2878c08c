/* Several files as one offset space (common/file_span.h) and the readers
 * over it (io/io_reader.h with opts.files): the search, pread, the map of
 * every file at its base, each backend's bytes, a shrunk file named. */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/file_span.h"
#include "io/io_reader.h"

#define NF 4
static const uint64_t k_size[NF] = {100, 0, 70000, 5000};
static char g_path[NF][256];
static sl_file_span g_span[NF];
static sl_file_set g_set;

static uint8_t byte_of(int f, uint64_t at) {
  return (uint8_t)(f * 61 + at * 7 + (at >> 8));
}

static void name_of(const void *ctx, size_t k, char *buf, size_t cap) {
  (void)ctx;
  snprintf(buf, cap, "%s", g_path[k]);
}

static int setup(void **state) {
  (void)state;
  const char *tmp = getenv("SLUICE_TEST_TMP");
  uint64_t base = 0;
  for (int f = 0; f < NF; f++) {
    snprintf(g_path[f], sizeof g_path[f], "%s/span-%ld-%d", tmp ? tmp : "/tmp",
             (long)getpid(), f);
    FILE *fp = fopen(g_path[f], "wb");
    if (!fp)
      return -1;
    for (uint64_t i = 0; i < k_size[f]; i++)
      fputc(byte_of(f, i), fp);
    fclose(fp);
    g_span[f] = (sl_file_span){
        .fd = open(g_path[f], O_RDONLY), .base = base, .size = k_size[f]};
    base = (base + k_size[f] + SL_FILE_SPAN_ALIGN - 1) / SL_FILE_SPAN_ALIGN *
           SL_FILE_SPAN_ALIGN;
  }
  g_set = (sl_file_set){.f = g_span,
                        .n = NF,
                        .end = g_span[NF - 1].base + k_size[NF - 1],
                        .name = name_of};
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int f = 0; f < NF; f++) {
    close(g_span[f].fd);
    unlink(g_path[f]);
  }
  return 0;
}

static void test_find(void **state) {
  (void)state;
  assert_int_equal(sl_file_set_find(&g_set, 0, 100), 0);
  assert_int_equal(sl_file_set_find(&g_set, 99, 1), 0);
  assert_int_equal(sl_file_set_find(&g_set, 99, 2), -1);   /* past file 0 */
  assert_int_equal(sl_file_set_find(&g_set, 4096, 1), -1); /* the gap */
  uint64_t b2 = g_span[2].base;
  assert_int_equal(sl_file_set_find(&g_set, b2, 70000), 2);
  assert_int_equal(sl_file_set_find(&g_set, b2 + 69999, 1), 2);
  assert_int_equal(sl_file_set_find(&g_set, b2 + 69999, 2), -1);
  assert_int_equal(sl_file_set_find(&g_set, g_span[3].base + 10, 10), 3);
  assert_int_equal(sl_file_set_find(&g_set, g_set.end, 1), -1);
  assert_int_equal(sl_file_set_find(&g_set, UINT64_MAX, 1), -1);
}

/* The hinted find answers as the plain one for every range and hint. */
static void test_find_near(void **state) {
  (void)state;
  uint64_t b2 = g_span[2].base;
  const struct {
    uint64_t off, len;
  } r[] = {{0, 100},        {99, 1},
           {99, 2},         {4096, 1},
           {b2, 70000},     {b2 + 69999, 1},
           {b2 + 69999, 2}, {g_span[3].base + 10, 10},
           {g_set.end, 1},  {UINT64_MAX, 1}};
  for (size_t h = 0; h <= NF + 1; h++)
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
      size_t hint = h;
      long want = sl_file_set_find(&g_set, r[i].off, r[i].len);
      assert_int_equal(sl_file_set_find_near(&g_set, r[i].off, r[i].len, &hint),
                       want);
      if (want >= 0)
        assert_int_equal(hint, (size_t)want);
    }
}

static void test_pread_and_map(void **state) {
  (void)state;
  uint8_t buf[5000];
  size_t got;
  long k;
  assert_int_equal(
      sl_file_set_pread(&g_set, buf, 5000, g_span[2].base + 60000, &got, &k),
      0);
  assert_int_equal(k, 2);
  for (uint64_t i = 0; i < 5000; i++)
    assert_int_equal(buf[i], byte_of(2, 60000 + i));
  assert_int_equal(sl_file_set_pread(&g_set, buf, 200, 0, &got, &k), -1);
  uint8_t *map;
  size_t len;
  sl_err err;
  assert_int_equal(sl_file_set_map(&g_set, &map, &len, &err), SL_OK);
  assert_int_equal(len, g_set.end);
  for (int f = 0; f < NF; f++)
    for (uint64_t i = 0; i < k_size[f]; i += 97)
      assert_int_equal(map[g_span[f].base + i], byte_of(f, i));
  munmap(map, len);
}

/* Samples: spread over the files, each inside one. */
static const uint64_t k_off[][3] = {
    {0, 0, 100}, {2, 0, 4096}, {2, 4096, 65904}, {3, 17, 4983}, {0, 50, 50}};
#define NS 5

static void locate(const void *ctx, uint64_t i, uint64_t *off, uint32_t *len) {
  (void)ctx;
  *off = g_span[k_off[i][0]].base + k_off[i][1];
  *len = (uint32_t)k_off[i][2];
}

/* An io reader of kind over files for the samples of k_off; fails naming
 * the backend's index q. */
static sl_io *open_samples(sl_io_kind kind, const char *name,
                           const sl_file_set *files, unsigned queue_depth,
                           int q) {
  sl_io_opts o = {.kind = kind,
                  .name = name,
                  .count = NS,
                  .max_length = 65904,
                  .locate = locate,
                  .files = files,
                  .batch_size = 1,
                  .readahead_batches = 1,
                  .queue_depth = queue_depth,
                  .pool_bytes = 1 << 20,
                  .mem_available = 1ull << 30};
  sl_io *io;
  sl_err err;
  if (sl_io_open(&io, &o, &err) != SL_OK)
    fail_msg("%d: %s", q, err.msg);
  return io;
}

/* An epoch of io over every sample: each of its bytes (every step-th)
 * as the file holds it; fails naming the backend's index q. */
static void expect_epoch(sl_io *io, uint64_t step, int q) {
  sl_err err;
  assert_int_equal(sl_io_start_epoch(io, NULL, NULL, 0, NS, &err), SL_OK);
  uint8_t *buf = malloc(65904);
  assert_non_null(buf);
  for (uint64_t s = 0; s < NS; s++) {
    const uint8_t *d;
    size_t n;
    if (sl_io_get(io, s, buf, 65904, &d, &n, &err) != SL_OK)
      fail_msg("%d: %s", q, err.msg);
    assert_int_equal(n, k_off[s][2]);
    for (uint64_t i = 0; i < n; i += step)
      assert_int_equal(d[i], byte_of((int)k_off[s][0], k_off[s][1] + i));
    sl_io_put(io, s);
  }
  free(buf);
}

static void test_backends(void **state) {
  (void)state;
  const sl_io_kind kinds[] = {SL_IO_MMAP, SL_IO_PREAD, SL_IO_URING};
  for (int q = 0; q < 3; q++) {
    sl_io *io = open_samples(kinds[q], "span", &g_set, 4, q);
    expect_epoch(io, 1, q);
    sl_io_close(io);
  }
}

static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  assert_non_null(d);
  int n = 0;
  while (readdir(d))
    n++;
  closedir(d);
  return n;
}

static int open_of(const void *ctx, size_t k) {
  (void)ctx;
  return open(g_path[k], O_RDONLY | O_CLOEXEC);
}

/* Files opened per read (an image folder): pread and uring open each for
 * its read and give the same bytes; mmap falls back to pread, saying so; a
 * file gone since is SL_EIO naming it. */
static void test_lazy(void **state) {
  (void)state;
  sl_file_span lazy[NF];
  for (int f = 0; f < NF; f++)
    lazy[f] = (sl_file_span){-1, g_span[f].base, g_span[f].size};
  sl_file_set set = g_set;
  set.f = lazy;
  set.lazy = true;
  set.open = open_of;
  const sl_io_kind kinds[] = {SL_IO_MMAP, SL_IO_PREAD, SL_IO_URING};
  int fds = open_fds();
  for (int q = 0; q < 3; q++) {
    sl_io *io = open_samples(kinds[q], "lazy", &set, 2, q);
    if (q == 0) {
      assert_int_equal(sl_io_backend(io), SL_IO_PREAD);
      assert_non_null(strstr(sl_io_why(io), "falling back to pread"));
    }
    for (int round = 0; round < 2; round++) /* the descriptors come back */
      expect_epoch(io, 13, q);
    /* a file gone: its sample fails naming it, the others read */
    char moved[300];
    snprintf(moved, sizeof moved, "%s.moved", g_path[3]);
    assert_int_equal(rename(g_path[3], moved), 0);
    sl_err err;
    assert_int_equal(sl_io_start_epoch(io, NULL, NULL, 0, NS, &err), SL_OK);
    uint8_t *buf = malloc(65904);
    assert_non_null(buf);
    for (uint64_t s = 0; s < NS; s++) {
      const uint8_t *d;
      size_t n;
      sl_status st = sl_io_get(io, s, buf, 65904, &d, &n, &err);
      if (s == 3) {
        assert_int_equal(st, SL_EIO);
        if (!strstr(err.msg, g_path[3]))
          fail_msg("%d: %s", q, err.msg);
      } else {
        assert_int_equal(st, SL_OK);
      }
      sl_io_put(io, s);
    }
    free(buf);
    assert_int_equal(rename(moved, g_path[3]), 0);
    sl_io_close(io);
    assert_int_equal(open_fds(), fds); /* every file opened was closed */
  }
}

/* A file shrunk after open: pread's short read names that file and the
 * offset in it. */
static void test_shrunk_named(void **state) {
  (void)state;
  assert_int_equal(truncate(g_path[3], 1000), 0);
  sl_io_opts o = {.kind = SL_IO_PREAD,
                  .name = "span",
                  .count = NS,
                  .max_length = 65904,
                  .locate = locate,
                  .files = &g_set};
  sl_io *io;
  sl_err err;
  assert_int_equal(sl_io_open(&io, &o, &err), SL_OK);
  uint8_t buf[5000];
  const uint8_t *d;
  size_t n;
  assert_int_equal(sl_io_read(io, 3, buf, sizeof buf, &d, &n, &err), SL_EIO);
  if (!strstr(err.msg, g_path[3]) || !strstr(err.msg, "offset 17 in it"))
    fail_msg("%s", err.msg);
  sl_io_close(io);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_find),          cmocka_unit_test(test_find_near),
      cmocka_unit_test(test_pread_and_map), cmocka_unit_test(test_backends),
      cmocka_unit_test(test_lazy),          cmocka_unit_test(test_shrunk_named),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
