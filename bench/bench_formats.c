/* bench_formats: `sluice pack` throughput with 1 and 2 threads, and the time
 * to open (index) a 1,000,000-sample file in each format, and in the four
 * foreign LMDB layouts (Caffe Datums and image-file values, written here
 * with liblmdb as other tools write them; folder2lmdb's pickled
 * (png, label) tuples and tensorpack's msgpack [png, label] arrays, written
 * by PYTHON with py-lmdb + pickle / msgpack as those tools write them, with
 * their __keys__ / __len__ entries; skipped without them), with the heap
 * bytes the open keeps per sample (mallinfo2 while the source is open), of
 * TFRecord and MXNet RecordIO files (written here as TFRecordWriter and
 * dmlc's RecordIOWriter frame them; with and without the data CRCs, with
 * and without the .idx), and of
 * arrays of 1,000, 100,000 and 1,000,000 chunks (a v1 B-tree with h5py's
 * default libver, a fixed array with libver='latest', an extensible array
 * with libver='latest' and maxshape=(None, ...); written by
 * PYTHON, default /usr/bin/python3, with h5py; skipped without it). Not a
 * test: it prints a table.
 * Ratios (2 threads / 1 thread) are measured in one run.
 *
 *   bench_formats [--dir DIR] [--images N] [--samples N] [--bin SLUICE]
 *                 [--h5-chunks N,N,...] [--python PYTHON] [--shards N]
 *                 [--folder-files N]
 *
 * Then (bench_formats_many.c) the same samples as shards (default 64) of
 * TFRecord, RecordIO and WebDataset, and an ImageFolder of N files
 * (default 100,000; 0 skips it).
 *
 * DIR (default $TMPDIR or /tmp) receives the inputs and outputs, removed at
 * the end. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <turbojpeg.h>
#include <unistd.h>

#include <lmdb.h>
#include <malloc.h>

#include "codecs/codec.h"
#include "formats/core/crc32c.h"
#include "formats/core/source.h"
#include "formats/core/writer.h"

#include "bench/bench_formats.h"

extern char **environ;

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int write_bytes(const char *path, const void *b, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  int rc = fwrite(b, 1, n, f) == n ? 0 : -1;
  return fclose(f) == 0 ? rc : -1;
}

/* A 500x375 photo-like JPEG (smooth gradients plus noise), quality 90. */
static unsigned char *make_jpeg(unsigned long *len) {
  int w = 500, h = 375;
  unsigned char *pix = malloc((size_t)w * h * 3), *jpg = NULL;
  uint32_t s = 12345;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < 3; c++) {
        s = s * 1664525u + 1013904223u;
        int v = (x * (c + 1) + y * (3 - c)) / 4 % 256 + (int)(s >> 28) - 8;
        pix[((size_t)y * w + x) * 3 + c] = (unsigned char)(v < 0     ? 0
                                                           : v > 255 ? 255
                                                                     : v);
      }
  tjhandle t = tjInitCompress();
  *len = 0;
  if (t &&
      tjCompress2(t, pix, w, 0, h, TJPF_RGB, &jpg, len, TJSAMP_420, 90, 0) != 0)
    jpg = NULL;
  if (t)
    tjDestroy(t);
  free(pix);
  return jpg;
}

/* Pack modes compared: the default (lossless rewrite into the restart
 * layout), --keep-jpeg (bytes as they are), a resize (re-encode), and the
 * rewrite plus resolution levels 1/2 or 3/4 + 1/2. */
enum { k_modes = 5 };
static const char *const k_mode_names[k_modes] = {
    "rewrite (default)", "--keep-jpeg", "--max-side 256", "--levels 1/2",
    "--levels 3/4,1/2"};

static double run_pack(const char *bin, const char *src, const char *out,
                       const char *threads, int mode) {
  const char *argv[] = {bin,       "pack",    src,  out,  "--threads", threads,
                        "--quiet", "--force", NULL, NULL, NULL};
  if (mode == 1) {
    argv[8] = "--keep-jpeg";
  } else if (mode == 2) {
    argv[8] = "--max-side";
    argv[9] = "256";
  } else if (mode >= 3) {
    argv[8] = "--levels";
    argv[9] = mode == 3 ? "1/2" : "3/4,1/2";
  }
  pid_t pid;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  double t0 = bench_now();
  int rc = posix_spawn(&pid, bin, &fa, NULL, (char *const *)(uintptr_t)argv,
                       environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return -1;
  int st;
  waitpid(pid, &st, 0);
  double t = bench_now() - t0;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

static void bench_pack(const char *bin, const char *dir, int images) {
  char src[1024], cls[1100], p[1200], out[1100];
  snprintf(src, sizeof src, "%s/bench-pack-src", dir);
  snprintf(cls, sizeof cls, "%s/k", src);
  mkdir(src, 0755);
  mkdir(cls, 0755);
  unsigned long len;
  unsigned char *jpg = make_jpeg(&len);
  if (!jpg) {
    fprintf(stderr, "bench_formats: cannot make a JPEG\n");
    return;
  }
  for (int i = 0; i < images; i++) {
    snprintf(p, sizeof p, "%s/%05d.jpg", cls, i);
    if (write_bytes(p, jpg, len)) {
      fprintf(stderr, "bench_formats: %s: %s\n", p, strerror(errno));
      return;
    }
  }
  tjFree(jpg);
  printf("pack: %d JPEGs of 500x375 (%lu bytes each)\n", images, len);
  printf("  %-26s %10s %10s %8s %12s\n", "format, mode", "1 thread",
         "2 threads", "2t/1t", "bytes/image");
  static const char *const fmts[2] = {"lmdb", "h5"};
  for (int f = 0; f < 2; f++)
    for (int mode = 0; mode < k_modes; mode++) {
      snprintf(out, sizeof out, "%s/bench-pack.%s", dir, fmts[f]);
      double best[2] = {1e30, 1e30};
      for (int rep = 0; rep < 2; rep++) /* alternate, keep the best */
        for (int t = 0; t < 2; t++) {
          double s = run_pack(bin, src, out, t ? "2" : "1", mode);
          if (s > 0 && s < best[t])
            best[t] = s;
        }
      char name[64];
      snprintf(name, sizeof name, "%s, %s", fmts[f], k_mode_names[mode]);
      struct stat sb;
      double per = stat(out, &sb) == 0 ? (double)sb.st_size / images : 0;
      printf("  %-26s %8.0f/s %8.0f/s %7.2fx %12.0f\n", name, images / best[0],
             images / best[1], best[0] / best[1], per);
      unlink(out);
    }
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", src);
  if (system(cmd) != 0)
    fprintf(stderr, "bench_formats: could not remove %s\n", src);
}

static int write_many(const char *path, sl_format_kind fmt, uint64_t n) {
  sl_err err = {0};
  sl_fwriter *w;
  if (sl_fwriter_open(&w, path, fmt, &err) != SL_OK) {
    fprintf(stderr, "bench_formats: %s\n", err.msg);
    return -1;
  }
  uint8_t payload[16];
  sl_sample_info m = {0};
  m.codec = SL_IMAGE_RAW;
  m.channels = 1;
  m.height = 4;
  m.width = 4;
  for (uint64_t i = 0; i < n; i++) {
    memset(payload, (int)(i & 0xff), sizeof payload);
    m.label = (int32_t)(i % 1000);
    if (sl_fwriter_add(w, payload, sizeof payload, &m, &err) != SL_OK) {
      fprintf(stderr, "bench_formats: %s\n", err.msg);
      sl_fwriter_abort(w);
      return -1;
    }
  }
  char *names[1000];
  char buf[1000][8];
  for (int c = 0; c < 1000; c++) {
    snprintf(buf[c], sizeof buf[c], "c%03d", c);
    names[c] = buf[c];
  }
  if (sl_fwriter_commit(w, 1000, (const char *const *)names, "bench", true,
                        &err) != SL_OK) {
    fprintf(stderr, "bench_formats: %s\n", err.msg);
    return -1;
  }
  return 0;
}

static void bench_open(const char *dir, uint64_t n) {
  static const char *const ext[2] = {"lmdb", "h5"};
  static const sl_format_kind kinds[2] = {SL_FORMAT_LMDB, SL_FORMAT_HDF5};
  printf("\nindex open: %" PRIu64 " samples of 16 bytes, best of 5 "
         "(page cache warm)\n",
         n);
  printf("  %-6s %10s %9s %12s %12s %10s\n", "format", "file MB", "write s",
         "open mmap", "open pread", "ns/sample");
  for (int f = 0; f < 2; f++) {
    char path[1100];
    snprintf(path, sizeof path, "%s/bench-open.%s", dir, ext[f]);
    double t0 = bench_now();
    if (write_many(path, kinds[f], n))
      continue;
    double wt = bench_now() - t0;
    double best[2] = {1e30, 1e30};
    uint64_t size = 0;
    for (int rep = 0; rep < 5; rep++)
      for (int io = 0; io < 2; io++) {
        sl_err err = {0};
        sl_source *s;
        double a = bench_now();
        if (sl_source_open(&s, path, SL_FORMAT_AUTO,
                           io ? SL_SOURCE_PREAD : SL_SOURCE_MMAP,
                           &err) != SL_OK) {
          fprintf(stderr, "bench_formats: %s\n", err.msg);
          return;
        }
        double b = bench_now() - a;
        size = sl_source_file_size(s);
        if (sl_source_count(s) != n)
          fprintf(stderr, "bench_formats: count mismatch\n");
        sl_source_close(s);
        if (b < best[io])
          best[io] = b;
      }
    printf("  %-6s %10.1f %9.2f %9.1f ms %9.1f ms %10.1f\n", ext[f],
           (double)size / 1e6, wt, best[0] * 1e3, best[1] * 1e3,
           best[0] * 1e9 / (double)n);
    unlink(path);
  }
}

/* n entries under %08d keys, as convert_imageset writes them: Caffe raw
 * Datums of 1x4x4 gray pixels (labels i % 1000), or (images) the same
 * 4x4 gray PNG's bytes (its header is what open reads; nothing decodes
 * them here). */
static int write_foreign(const char *path, int images, uint64_t n) {
  static uint8_t png[] = {
      /* not const: MDB_val's data is void * */
      0x89, 'P',  'N', 'G', '\r', '\n', 0x1a, '\n', 0,    0,    0,    13,
      'I',  'H',  'D', 'R', 0,    0,    0,    4,    0,    0,    0,    4,
      8,    0,    0,   0,   0,    0x7e, 0x19, 0x4b, 0x6b, 0,    0,    0,
      11,   'I',  'D', 'A', 'T',  0x78, 0x9c, 0x63, 0x60, 0x40, 0x05, 0,
      0,    0x14, 0,   1,   0x9d, 0x87, 0x5a, 0xec, 0,    0,    0,    0,
      'I',  'E',  'N', 'D', 0xae, 0x42, 0x60, 0x82};
  MDB_env *env;
  MDB_txn *txn = NULL;
  MDB_dbi dbi;
  int rc = mdb_env_create(&env);
  if (rc == 0)
    rc = mdb_env_set_mapsize(env, (size_t)n * 128 + (64u << 20));
  if (rc == 0)
    rc =
        mdb_env_open(env, path, MDB_NOSUBDIR | MDB_NOSYNC | MDB_WRITEMAP, 0644);
  if (rc == 0)
    rc = mdb_txn_begin(env, NULL, 0, &txn);
  if (rc == 0)
    rc = mdb_dbi_open(txn, NULL, 0, &dbi);
  uint8_t datum[64];
  for (uint64_t i = 0; rc == 0 && i < n; i++) {
    char key[16];
    int kl = snprintf(key, sizeof key, "%08" PRIu64, i);
    size_t len = 0;
    if (!images) { /* channels 1, height 4, width 4, data[16], label */
      uint32_t label = (uint32_t)(i % 1000);
      uint8_t *p = datum;
      *p++ = 0x08, *p++ = 1, *p++ = 0x10, *p++ = 4, *p++ = 0x18, *p++ = 4;
      *p++ = 0x22, *p++ = 16;
      memset(p, (int)(i & 0xff), 16);
      p += 16;
      *p++ = 0x28;
      do {
        *p++ = (uint8_t)((label & 0x7f) | (label > 0x7f ? 0x80 : 0));
        label >>= 7;
      } while (label);
      len = (size_t)(p - datum);
    }
    MDB_val k = {(size_t)kl, key}, v = {images ? sizeof png : len,
                                        images ? (void *)png : (void *)datum};
    rc = mdb_put(txn, dbi, &k, &v, MDB_APPEND);
  }
  if (rc == 0)
    rc = mdb_txn_commit(txn);
  else if (txn)
    mdb_txn_abort(txn);
  mdb_env_close(env);
  if (rc != 0)
    fprintf(stderr, "bench_formats: %s: %s\n", path, mdb_strerror(rc));
  return rc ? -1 : 0;
}

/* The same 4x4 PNG as write_foreign's, as hex for a Python literal. */
static const char k_png_hex[] =
    "89504e470d0a1a0a0000000d4948445200000004000000040800000000"
    "7e194b6b0000000b49444154789c63604005000014000"
    "19d875aec0000000049454e44ae426082";

/* n entries by the real clients, through PYTHON: folder2lmdb.py's layout
 * (keys str(i), values pickle.dumps((png, label)), __keys__ and __len__
 * pickled) or tensorpack's LMDBSerializer.save (keys '{:08}'.format(i),
 * values msgpack.dumps([png, label], use_bin_type=True), __keys__); both a
 * single-file environment (subdir=False), one write transaction. */
static int write_foreign_py(const char *python, const char *path, int msgpack,
                            uint64_t n) {
  char cmd[3000];
  snprintf(cmd, sizeof cmd,
           "'%s' -c 'import lmdb, pickle%s\n"
           "png = bytes.fromhex(\"%s\")\n"
           "n = %" PRIu64 "\n"
           "key = \"%s\".format\n"
           "dumps = %s\n"
           "db = lmdb.open(\"%s\", subdir=False, map_size=1 << 36, "
           "meminit=False, map_async=True)\n"
           "with db.begin(write=True) as txn:\n"
           "    for i in range(n):\n"
           "        txn.put(key(i).encode(\"ascii\"), dumps(i))\n"
           "keys = [key(i).encode(\"ascii\") for i in range(n)]\n"
           "with db.begin(write=True) as txn:\n"
           "    txn.put(b\"__keys__\", %s)\n"
           "%s"
           "db.sync()\n"
           "db.close()'",
           python, msgpack ? ", msgpack" : "", k_png_hex, n,
           msgpack ? "{:08}" : "{}",
           msgpack ? "lambda i: msgpack.dumps([png, i % 1000], "
                     "use_bin_type=True)"
                   : "lambda i: pickle.dumps((png, i % 1000))",
           path,
           msgpack ? "msgpack.dumps(keys, use_bin_type=True)"
                   : "pickle.dumps(keys)",
           msgpack ? "" : "    txn.put(b\"__len__\", pickle.dumps(n))\n");
  return system(cmd) == 0 ? 0 : -1;
}

/* Heap bytes in use (malloc's arenas and its own mmaps). */
static size_t heap_in_use(void) {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

static void bench_open_foreign(const char *dir, const char *python,
                               uint64_t n) {
  static const char *const name[4] = {"caffe", "images", "pickle", "msgpack"};
  static const char *const writer[4] = {"liblmdb", "liblmdb", "py-lmdb",
                                        "py-lmdb"};
  printf("\nforeign LMDB open: %" PRIu64 " samples, best of 5 (page cache "
         "warm); index %d + 8 (key offset) bytes per sample expected;\n"
         "heap B/sample: the heap the open source keeps, measured "
         "(mallinfo2); pickle and msgpack written by %s\n",
         n, (int)sizeof(sl_sample_info), python);
  printf("  %-7s %-8s %10s %9s %12s %12s %10s %14s\n", "layout", "writer",
         "file MB", "write s", "open mmap", "open pread", "ns/sample",
         "heap B/sample");
  for (int f = 0; f < 4; f++) {
    char path[1100], lock[1200];
    snprintf(path, sizeof path, "%s/bench-open-%s.mdb", dir, name[f]);
    snprintf(lock, sizeof lock, "%s-lock", path);
    double t0 = bench_now();
    if (f < 2 ? write_foreign(path, f, n)
              : write_foreign_py(python, path, f == 3, n)) {
      if (f >= 2)
        fprintf(stderr,
                "bench_formats: writing %s with %s failed (py-lmdb, "
                "msgpack?): %s layout skipped\n",
                path, python, name[f]);
      unlink(path);
      unlink(lock);
      continue;
    }
    double wt = bench_now() - t0, best[2] = {1e30, 1e30};
    uint64_t size = 0;
    double kept = -1;
    for (int rep = 0; rep < 5; rep++)
      for (int io = 0; io < 2; io++) {
        sl_err err = {0};
        sl_source *s;
        size_t h0 = heap_in_use();
        double a = bench_now();
        if (sl_source_open(&s, path, SL_FORMAT_AUTO,
                           io ? SL_SOURCE_PREAD : SL_SOURCE_MMAP,
                           &err) != SL_OK) {
          fprintf(stderr, "bench_formats: %s\n", err.msg);
          unlink(path);
          unlink(lock);
          return;
        }
        double b = bench_now() - a;
        if (kept < 0)
          kept = (double)(heap_in_use() - h0) / (double)n;
        size = sl_source_file_size(s);
        if (sl_source_count(s) != n ||
            strcmp(sl_source_entries_name(s), name[f]) != 0)
          fprintf(stderr, "bench_formats: count or layout mismatch\n");
        sl_source_close(s);
        if (b < best[io])
          best[io] = b;
      }
    printf("  %-7s %-8s %10.1f %9.2f %9.1f ms %9.1f ms %10.1f %14.1f\n",
           name[f], writer[f], (double)size / 1e6, wt, best[0] * 1e3,
           best[1] * 1e3, best[0] * 1e9 / (double)n, kept);
    unlink(path);
    unlink(lock);
  }
}

/* n records of the same 4x4 gray PNG, as TensorFlow's TFRecordWriter
 * frames them (length, masked CRC-32C of it, an Example of image/encoded
 * and image/class/label i % 1000 + 1, masked CRC-32C of it) or (recordio)
 * as dmlc's RecordIOWriter writes mxnet's image records (magic, lrecord,
 * IRHeader with label i % 1000, the PNG, padding), with the .idx
 * MXIndexedRecordIO writes beside it when idx. */
int bench_write_records(const char *path, int recordio, bool idx, uint64_t n,
                        uint64_t first) {
  static const uint8_t png[] = {
      0x89, 'P',  'N', 'G', '\r', '\n', 0x1a, '\n', 0,    0,    0,    13,
      'I',  'H',  'D', 'R', 0,    0,    0,    4,    0,    0,    0,    4,
      8,    0,    0,   0,   0,    0x7e, 0x19, 0x4b, 0x6b, 0,    0,    0,
      11,   'I',  'D', 'A', 'T',  0x78, 0x9c, 0x63, 0x60, 0x40, 0x05, 0,
      0,    0x14, 0,   1,   0x9d, 0x87, 0x5a, 0xec, 0,    0,    0,    0,
      'I',  'E',  'N', 'D', 0xae, 0x42, 0x60, 0x82};
  FILE *f = fopen(path, "wb"), *fi = NULL;
  char ipath[1200];
  if (f && recordio && idx) {
    snprintf(ipath, sizeof ipath, "%.*s.idx", (int)strlen(path) - 4, path);
    fi = fopen(ipath, "w");
  }
  if (!f || (recordio && idx && !fi)) {
    fprintf(stderr, "bench_formats: %s: cannot create\n", path);
    if (f)
      fclose(f);
    return -1;
  }
  uint64_t pos = 0;
  for (uint64_t k = 0; k < n; k++) {
    uint64_t i = first + k;
    uint8_t rec[256], *p = rec;
    if (recordio) {
      uint32_t len = 24 + sizeof png, pad = (4 - len % 4) % 4;
      float label = (float)(i % 1000);
      uint32_t hdr[2] = {0xced7230au, len}, flag = 0;
      uint64_t id = i, id2 = 0;
      memcpy(p, hdr, 8), p += 8;
      memcpy(p, &flag, 4), p += 4;
      memcpy(p, &label, 4), p += 4;
      memcpy(p, &id, 8), p += 8;
      memcpy(p, &id2, 8), p += 8;
      memcpy(p, png, sizeof png), p += sizeof png;
      memset(p, 0, pad), p += pad;
      if (fi)
        fprintf(fi, "%" PRIu64 "\t%" PRIu64 "\n", k, pos);
    } else { /* Example{features{feature{key, Feature{...}}}} */
      uint8_t ex[200], *q = ex;
      uint32_t label = (uint32_t)(i % 1000 + 1);
      uint8_t lv[4], nl = 0;
      do {
        lv[nl++] = (uint8_t)((label & 0x7f) | (label > 0x7f ? 0x80 : 0));
        label >>= 7;
      } while (label);
      /* entry image/class/label: Int64List{packed} */
      uint8_t ent1 = (uint8_t)(2 + 17 + 2 + 2 + 2 + nl);
      *q++ = 0x0a, *q++ = ent1, *q++ = 0x0a, *q++ = 17;
      memcpy(q, "image/class/label", 17), q += 17;
      *q++ = 0x12, *q++ = (uint8_t)(4 + nl), *q++ = 0x1a,
      *q++ = (uint8_t)(2 + nl), *q++ = 0x0a, *q++ = nl;
      memcpy(q, lv, nl), q += nl;
      /* entry image/encoded: BytesList{png} */
      uint8_t ent2 = (uint8_t)(2 + 13 + 2 + 2 + 2 + sizeof png);
      *q++ = 0x0a, *q++ = ent2, *q++ = 0x0a, *q++ = 13;
      memcpy(q, "image/encoded", 13), q += 13;
      *q++ = 0x12, *q++ = (uint8_t)(4 + sizeof png), *q++ = 0x0a,
      *q++ = (uint8_t)(2 + sizeof png), *q++ = 0x0a, *q++ = sizeof png;
      memcpy(q, png, sizeof png), q += sizeof png;
      uint64_t elen = (uint64_t)(q - ex) + 2;
      uint8_t len8[8];
      for (int b = 0; b < 8; b++)
        len8[b] = (uint8_t)(elen >> (8 * b));
      uint32_t c1 = sl_crc32c_mask(sl_crc32c(len8, 8));
      memcpy(p, len8, 8), p += 8;
      memcpy(p, &c1, 4), p += 4;
      uint8_t *data = p;
      *p++ = 0x0a, *p++ = (uint8_t)(q - ex);
      memcpy(p, ex, (size_t)(q - ex)), p += q - ex;
      uint32_t c2 = sl_crc32c_mask(sl_crc32c(data, (size_t)elen));
      memcpy(p, &c2, 4), p += 4;
    }
    if (fwrite(rec, 1, (size_t)(p - rec), f) != (size_t)(p - rec)) {
      fprintf(stderr, "bench_formats: %s: write failed\n", path);
      fclose(f);
      if (fi)
        fclose(fi);
      return -1;
    }
    pos += (uint64_t)(p - rec);
  }
  int bad = fclose(f) != 0;
  if (fi)
    bad |= fclose(fi) != 0;
  return bad ? -1 : 0;
}

static void bench_open_records(const char *dir, uint64_t n) {
  static const char *const name[4] = {"tfrecord", "tfr-len", "rec+idx",
                                      "rec-scan"};
  printf("\nTFRecord / RecordIO open: %" PRIu64 " records of a 4x4 PNG, best "
         "of 5 (page cache warm); tfr-len: dataset.record_crc = length; "
         "rec-scan: no .idx\n",
         n);
  printf("  %-9s %10s %9s %12s %12s %10s\n", "format", "file MB", "write s",
         "open mmap", "open pread", "ns/sample");
  for (int f = 0; f < 4; f++) {
    int rio = f >= 2;
    char path[1100], ipath[1200];
    snprintf(path, sizeof path, "%s/bench-open-%d.%s", dir, f,
             rio ? "rec" : "tfrecord");
    snprintf(ipath, sizeof ipath, "%s/bench-open-%d.idx", dir, f);
    double t0 = bench_now();
    if (bench_write_records(path, rio, f == 2, n, 0))
      continue;
    double wt = bench_now() - t0, best[2] = {1e30, 1e30};
    uint64_t size = 0;
    sl_source_opts o = {.length_crc_only = f == 1};
    for (int rep = 0; rep < 5; rep++)
      for (int io = 0; io < 2; io++) {
        sl_err err = {0};
        sl_source *s;
        double a = bench_now();
        if (sl_source_open_opts(&s, path, &o,
                                io ? SL_SOURCE_PREAD : SL_SOURCE_MMAP,
                                &err) != SL_OK) {
          fprintf(stderr, "bench_formats: %s\n", err.msg);
          unlink(path);
          unlink(ipath);
          return;
        }
        double b = bench_now() - a;
        size = sl_source_file_size(s);
        if (sl_source_count(s) != n)
          fprintf(stderr, "bench_formats: count mismatch\n");
        sl_source_close(s);
        if (b < best[io])
          best[io] = b;
      }
    printf("  %-9s %10.1f %9.2f %9.1f ms %9.1f ms %10.1f\n", name[f],
           (double)size / 1e6, wt, best[0] * 1e3, best[1] * 1e3,
           best[0] * 1e9 / (double)n);
    unlink(path);
    unlink(ipath);
  }
}

/* Open (index) time of chunked h5py arrays: (n, 2, 2, 3) uint8 in chunks of
 * one sample, so n chunks; the chunk index is parsed from the file. */
static void bench_open_h5chunks(const char *dir, const char *python,
                                const char *list) {
  static const char *const libver[3] = {"earliest", "latest", "latest"};
  static const char *const index[3] = {"v1 B-tree", "fixed array",
                                       "ext. array"};
  static const char *const maxshape[3] = {"", "", ", maxshape=(None, 2, 2, 3)"};
  printf("\nh5py chunked array open: (n, 2, 2, 3) uint8, one sample a "
         "chunk, best of 3 (page cache warm)\n");
  printf("  %-12s %9s %10s %9s %12s %10s\n", "index", "chunks", "file MB",
         "write s", "open mmap", "ns/chunk");
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    uint64_t n = strtoull(tok, NULL, 10);
    for (int v = 0; v < 3 && n > 0; v++) {
      char path[1100], cmd[2600];
      snprintf(path, sizeof path, "%s/bench-open-chunks.h5", dir);
      snprintf(cmd, sizeof cmd,
               "'%s' -c 'import h5py, numpy as np\n"
               "with h5py.File(\"%s\", \"w\", libver=\"%s\") as f:\n"
               "    f.create_dataset(\"images\", data=np.zeros((%" PRIu64
               ", 2, 2, 3), np.uint8), chunks=(1, 2, 2, 3)%s)'",
               python, path, libver[v], n, maxshape[v]);
      double t0 = bench_now();
      if (system(cmd) != 0) {
        fprintf(stderr,
                "bench_formats: %s failed (h5py for %s?): h5py "
                "arrays skipped\n",
                python, python);
        return;
      }
      double wt = bench_now() - t0, best = 1e30;
      uint64_t size = 0;
      for (int rep = 0; rep < 3; rep++) {
        sl_err err = {0};
        sl_source *s;
        double a = bench_now();
        if (sl_source_open(&s, path, SL_FORMAT_AUTO, SL_SOURCE_MMAP, &err) !=
            SL_OK) {
          fprintf(stderr, "bench_formats: %s\n", err.msg);
          unlink(path);
          return;
        }
        double b = bench_now() - a;
        size = sl_source_file_size(s);
        if (sl_source_count(s) != n)
          fprintf(stderr, "bench_formats: count mismatch\n");
        sl_source_close(s);
        if (b < best)
          best = b;
      }
      printf("  %-12s %9" PRIu64 " %10.1f %9.2f %9.1f ms %10.1f\n", index[v], n,
             (double)size / 1e6, wt, best * 1e3, best * 1e9 / (double)n);
      unlink(path);
    }
  }
}

int main(int argc, char **argv) {
  const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  const char *bin = SLUICE_BIN_PATH;
  int images = 400;
  uint64_t samples = 1000000;
  const char *python = "/usr/bin/python3", *h5_chunks = "1000,100000,1000000";
  unsigned shards = 64;
  uint64_t folder_files = 100000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--dir"))
      dir = argv[i + 1];
    else if (!strcmp(argv[i], "--images"))
      images = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--samples"))
      samples = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--bin"))
      bin = argv[i + 1];
    else if (!strcmp(argv[i], "--h5-chunks"))
      h5_chunks = argv[i + 1];
    else if (!strcmp(argv[i], "--python"))
      python = argv[i + 1];
    else if (!strcmp(argv[i], "--shards"))
      shards = (unsigned)strtoul(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--folder-files"))
      folder_files = strtoull(argv[i + 1], NULL, 10);
    else {
      fprintf(stderr, "usage: bench_formats [--dir DIR] [--images N] "
                      "[--samples N] [--bin SLUICE] [--h5-chunks N,N,...] "
                      "[--python PYTHON] [--shards N] [--folder-files N]\n");
      return 2;
    }
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  printf("bench_formats: %ld online CPUs, dir %s\n\n", cpus, dir);
  if (images > 0)
    bench_pack(bin, dir, images);
  if (samples > 0)
    bench_open(dir, samples);
  if (samples > 0)
    bench_open_foreign(dir, python, samples);
  if (samples > 0)
    bench_open_records(dir, samples);
  if (h5_chunks[0] && strcmp(h5_chunks, "0") != 0)
    bench_open_h5chunks(dir, python, h5_chunks);
  if (samples > 0 || folder_files > 0)
    bench_open_many(dir, samples, shards, folder_files);
  return 0;
}
