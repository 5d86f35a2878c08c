/* bench_formats, sources of many files: the open (index) time of n samples
 * as TFRecord shards, RecordIO shards (each with its .idx) and WebDataset
 * tar shards (a brace pattern of `shards` files each), and as an
 * ImageFolder directory of folder_files files (1,000 class folders). The
 * files are written here as their writers frame them (bench_formats.c's
 * records; plain ustar members key.png + key.cls, as `tar` and
 * webdataset's TarWriter without pax headers write them; the same 4x4
 * PNG everywhere), then removed. Best of 3, page cache warm; the folder
 * once per io (its files are opened per read: pread either way). total
 * MB: the files' bytes (not the offset space's, whose bases are 64 KiB
 * aligned). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench_formats.h"
#include "formats/core/source.h"

static const uint8_t k_png[] = {
    0x89, 'P',  'N', 'G', '\r', '\n', 0x1a, '\n', 0,    0,    0,    13,
    'I',  'H',  'D', 'R', 0,    0,    0,    4,    0,    0,    0,    4,
    8,    0,    0,   0,   0,    0x7e, 0x19, 0x4b, 0x6b, 0,    0,    0,
    11,   'I',  'D', 'A', 'T',  0x78, 0x9c, 0x63, 0x60, 0x40, 0x05, 0,
    0,    0x14, 0,   1,   0x9d, 0x87, 0x5a, 0xec, 0,    0,    0,    0,
    'I',  'E',  'N', 'D', 0xae, 0x42, 0x60, 0x82};

/* A ustar member header for name of size bytes. */
static void tar_header(uint8_t h[512], const char *name, size_t size) {
  memset(h, 0, 512);
  snprintf((char *)h, 100, "%s", name);
  memcpy(h + 100, "0000644", 8);
  memcpy(h + 108, "0001750", 8);
  memcpy(h + 116, "0001750", 8);
  snprintf((char *)h + 124, 12, "%011zo", size);
  snprintf((char *)h + 136, 12, "%011o", 1700000000u);
  h[156] = '0';
  memcpy(h + 257, "ustar", 6);
  memcpy(h + 263, "00", 2);
  memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (int i = 0; i < 512; i++)
    sum += h[i];
  snprintf((char *)h + 148, 8, "%06o", sum);
}

static int write_tar(const char *path, uint64_t first, uint64_t n) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  uint8_t blk[2048];
  int bad = 0;
  for (uint64_t i = first; i < first + n && !bad; i++) {
    char name[64], cls[16];
    int cl = snprintf(cls, sizeof cls, "%" PRIu64, i % 1000);
    memset(blk, 0, sizeof blk);
    snprintf(name, sizeof name, "%09" PRIu64 ".png", i);
    tar_header(blk, name, sizeof k_png);
    memcpy(blk + 512, k_png, sizeof k_png);
    snprintf(name, sizeof name, "%09" PRIu64 ".cls", i);
    tar_header(blk + 1024, name, (size_t)cl);
    memcpy(blk + 1536, cls, (size_t)cl);
    bad = fwrite(blk, 1, sizeof blk, f) != sizeof blk;
  }
  memset(blk, 0, 1024); /* the end: two zero blocks */
  bad |= fwrite(blk, 1, 1024, f) != 1024;
  return (fclose(f) != 0 || bad) ? -1 : 0;
}

/* folder_files files under dir/folder/cNNN/, 1,000 classes. */
static int write_folder(const char *root, uint64_t n) {
  char p[1200];
  if (mkdir(root, 0755) != 0)
    return -1;
  for (unsigned c = 0; c < 1000; c++) {
    snprintf(p, sizeof p, "%s/c%03u", root, c);
    if (mkdir(p, 0755) != 0)
      return -1;
  }
  for (uint64_t i = 0; i < n; i++) {
    snprintf(p, sizeof p, "%s/c%03u/%09" PRIu64 ".png", root,
             (unsigned)(i % 1000), i);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
      return -1;
    int bad = write(fd, k_png, sizeof k_png) != (ssize_t)sizeof k_png;
    if (close(fd) != 0 || bad)
      return -1;
  }
  return 0;
}

static void remove_tree(const char *path) {
  char cmd[1300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  if (system(cmd) != 0)
    fprintf(stderr, "bench_formats: could not remove %s\n", path);
}

/* Opens path reps times per io; best times into best[2]. */
static int time_open(const char *path, uint64_t n, int reps, double best[2],
                     uint64_t *files) {
  best[0] = best[1] = 1e30;
  for (int rep = 0; rep < reps; rep++)
    for (int io = 0; io < 2; io++) {
      sl_err err = {0};
      sl_source *s;
      double a = bench_now();
      if (sl_source_open(&s, path, SL_FORMAT_AUTO,
                         io ? SL_SOURCE_PREAD : SL_SOURCE_MMAP,
                         &err) != SL_OK) {
        fprintf(stderr, "bench_formats: %s\n", err.msg);
        return -1;
      }
      double b = bench_now() - a;
      *files = sl_source_file_count(s);
      if (sl_source_count(s) != n)
        fprintf(stderr,
                "bench_formats: %s: %" PRIu64 " samples, not %" PRIu64 "\n",
                path, sl_source_count(s), n);
      sl_source_close(s);
      if (b < best[io])
        best[io] = b;
    }
  return 0;
}

void bench_open_many(const char *dir, uint64_t n, unsigned shards,
                     uint64_t folder_files) {
  static const char *const name[4] = {"tfrecord", "recordio", "wds", "folder"};
  printf("\nMany files: open (index) time of n samples of a 4x4 PNG in "
         "%u shards (TFRecord, RecordIO with .idx, WebDataset ustar),\n"
         "and an ImageFolder (1,000 classes); best of 3 (the folder: one "
         "open per io), page cache warm\n",
         shards);
  printf("  %-9s %9s %7s %10s %9s %12s %12s %10s\n", "format", "samples",
         "files", "total MB", "write s", "open mmap", "open pread",
         "ns/sample");
  for (int f = 0; f < 4; f++) {
    uint64_t count = f == 3 ? folder_files : n;
    if (count == 0 || (f < 3 && shards == 0))
      continue;
    char root[1100], pat[1300], p[1300];
    snprintf(root, sizeof root, "%s/bench-many-%s", dir, name[f]);
    double t0 = bench_now();
    int bad = 0;
    uint64_t bytes = f == 3 ? count * sizeof k_png : 0; /* the files' */
    if (f < 3) {
      if (mkdir(root, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_formats: %s: cannot create\n", root);
        continue;
      }
      const char *ext = f == 0 ? "tfrecord" : f == 1 ? "rec" : "tar";
      for (unsigned k = 0; k < shards && !bad; k++) {
        uint64_t a = n * k / shards, b = n * (k + 1) / shards;
        snprintf(p, sizeof p, "%s/part-%05u.%s", root, k, ext);
        bad = f == 2 ? write_tar(p, a, b - a)
                     : bench_write_records(p, f == 1, f == 1, b - a, a);
        struct stat sb;
        if (!bad && stat(p, &sb) == 0)
          bytes += (uint64_t)sb.st_size;
      }
      snprintf(pat, sizeof pat, "%s/part-{00000..%05u}.%s", root, shards - 1,
               ext);
    } else {
      bad = write_folder(root, count);
      snprintf(pat, sizeof pat, "%s", root);
    }
    double wt = bench_now() - t0, best[2];
    uint64_t files = 0;
    if (bad)
      fprintf(stderr, "bench_formats: writing %s failed\n", root);
    else if (time_open(pat, count, f == 3 ? 1 : 3, best, &files) == 0)
      printf("  %-9s %9" PRIu64 " %7" PRIu64 " %10.1f %9.2f %9.1f ms %9.1f "
             "ms %10.1f\n",
             name[f], count, files, (double)bytes / 1e6, wt, best[0] * 1e3,
             best[1] * 1e3, best[0] * 1e9 / (double)count);
    remove_tree(root);
  }
}
