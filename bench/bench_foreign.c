/* bench_foreign: decode + augment throughput of the loader on a Caffe
 * LMDB of encoded JPEGs (as `convert_imageset --encoded` writes it, here
 * with liblmdb) against the same images in sluice's layout (`sluice pack
 * --from`, which rewrites the JPEGs losslessly into the restart layout, so
 * crops read only their segments). Not a test: it prints a table.
 *
 *   bench_foreign [--dir DIR] [--images N] [--workers W] [--epochs E]
 *
 * Train mode, random-resized crops to 224, u8 batches of 32 on the host
 * backend; images/s of the best epoch after the first. */
#include <errno.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>
#include <unistd.h>

#include "sluice.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A 500x375 photo-like JPEG (smooth gradients plus noise), quality 90,
 * different per seed. */
static unsigned char *make_jpeg(uint32_t seed, unsigned long *len) {
  int w = 500, h = 375;
  unsigned char *pix = malloc((size_t)w * h * 3), *jpg = NULL;
  uint32_t s = seed * 2654435761u + 1;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < 3; c++) {
        s = s * 1664525u + 1013904223u;
        int v = (x * (c + 1) + y * (3 - c) + (int)seed * 7) / 4 % 256 +
                (int)(s >> 28) - 8;
        pix[((size_t)y * w + x) * 3 + c] = (unsigned char)(v < 0     ? 0
                                                           : v > 255 ? 255
                                                                     : v);
      }
  tjhandle t = tjInitCompress();
  *len = 0;
  if (!t ||
      tjCompress2(t, pix, w, 0, h, TJPF_RGB, &jpg, len, TJSAMP_420, 90, 0) != 0)
    jpg = NULL;
  tjDestroy(t);
  free(pix);
  return jpg;
}

static size_t varint(uint8_t *p, uint64_t v) {
  size_t n = 0;
  do {
    p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return n;
}

/* n encoded Datums {data = JPEG, label = i % 10, encoded = true} under
 * %08d keys. */
static int write_caffe(const char *path, int n) {
  MDB_env *env;
  MDB_txn *txn = NULL;
  MDB_dbi dbi;
  int rc = mdb_env_create(&env);
  if (rc == 0)
    rc = mdb_env_set_mapsize(env, (size_t)n * 200000 + (64u << 20));
  if (rc == 0)
    rc = mdb_env_open(env, path, MDB_NOSUBDIR | MDB_NOSYNC, 0644);
  if (rc == 0)
    rc = mdb_txn_begin(env, NULL, 0, &txn);
  if (rc == 0)
    rc = mdb_dbi_open(txn, NULL, 0, &dbi);
  for (int i = 0; rc == 0 && i < n; i++) {
    unsigned long len;
    unsigned char *jpg = make_jpeg((uint32_t)i, &len);
    uint8_t *v = jpg ? malloc(len + 32) : NULL;
    if (!v) {
      tjFree(jpg);
      rc = ENOMEM;
      break;
    }
    size_t o = 0;
    v[o++] = 0x22;
    o += varint(v + o, len);
    memcpy(v + o, jpg, len);
    o += len;
    v[o++] = 0x28;
    o += varint(v + o, (uint64_t)(i % 10));
    v[o++] = 0x38;
    v[o++] = 1;
    char key[32];
    int kl = snprintf(key, sizeof key, "%08d_img%d.jpg", i, i);
    MDB_val k = {(size_t)kl, key}, val = {o, v};
    rc = mdb_put(txn, dbi, &k, &val, MDB_APPEND);
    free(v);
    tjFree(jpg);
  }
  if (rc == 0)
    rc = mdb_txn_commit(txn);
  else if (txn)
    mdb_txn_abort(txn);
  mdb_env_close(env);
  if (rc)
    fprintf(stderr, "bench_foreign: %s: %s\n", path, mdb_strerror(rc));
  return rc ? -1 : 0;
}

/* Best images/s over epochs 1..epochs-1 (epoch 0 warms the cache). */
static double epoch_rate(const char *path, const char *workers, int epochs) {
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    return -1;
  const char *kv[][2] = {
      {"dataset.path", path},      {"loader.batch_size", "32"},
      {"loader.workers", workers}, {"device.backend", "host"},
      {"augment.dtype", "u8"},     {"resolution.max", "224"}};
  for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++)
    if (sl_config_set(cfg, kv[k][0], kv[k][1]) != SL_OK) {
      fprintf(stderr, "bench_foreign: %s\n", sl_config_errmsg(cfg));
      sl_config_destroy(cfg);
      return -1;
    }
  sl_loader *ld;
  double best = -1;
  if (sl_loader_open(&ld, cfg) != SL_OK) {
    fprintf(stderr, "bench_foreign: %s\n", sl_loader_errmsg(ld));
  } else {
    for (int e = 0; e < epochs; e++) {
      if (sl_loader_start_epoch(ld, (uint64_t)e) != SL_OK)
        break;
      double t0 = now();
      uint64_t n = 0;
      sl_batch b;
      sl_status st;
      while ((st = sl_loader_next(ld, &b)) == SL_OK) {
        n += b.n;
        sl_batch_release(ld, &b, NULL);
      }
      double r = (double)n / (now() - t0);
      if (st != SL_END) {
        fprintf(stderr, "bench_foreign: %s\n", sl_loader_errmsg(ld));
        break;
      }
      if (e > 0 && r > best)
        best = r;
    }
  }
  sl_loader_close(ld);
  sl_config_destroy(cfg);
  return best;
}

int main(int argc, char **argv) {
  const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  const char *workers = "2";
  int images = 512, epochs = 4;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--dir"))
      dir = argv[i + 1];
    else if (!strcmp(argv[i], "--images"))
      images = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--workers"))
      workers = argv[i + 1];
    else if (!strcmp(argv[i], "--epochs"))
      epochs = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: bench_foreign [--dir DIR] [--images N] "
                      "[--workers W] [--epochs E]\n");
      return 2;
    }
  }
  if (images < 32 || epochs < 2) {
    fprintf(stderr, "bench_foreign: --images >= 32, --epochs >= 2\n");
    return 2;
  }
  char caffe[1100], own[1100], cmd[3500];
  snprintf(caffe, sizeof caffe, "%s/bench-foreign-caffe.mdb", dir);
  snprintf(own, sizeof own, "%s/bench-foreign-own.lmdb", dir);
  if (write_caffe(caffe, images))
    return 1;
  snprintf(cmd, sizeof cmd, "'%s' pack --from '%s' '%s' --force >/dev/null",
           SLUICE_BIN_PATH, caffe, own);
  if (system(cmd) != 0) {
    fprintf(stderr, "bench_foreign: %s failed\n", cmd);
    return 1;
  }
  printf("bench_foreign: %d JPEGs of 500x375 q90, random-resized crops to "
         "224, u8, %s workers, best of %d epochs\n",
         images, workers, epochs - 1);
  double rc = epoch_rate(caffe, workers, epochs);
  double rs = epoch_rate(own, workers, epochs);
  printf("  %-40s %10.0f images/s\n", "Caffe LMDB, encoded Datums", rc);
  printf("  %-40s %10.0f images/s\n", "sluice layout (pack --from)", rs);
  if (rc > 0 && rs > 0)
    printf("  sluice layout / Caffe: %.2fx\n", rs / rc);
  char lock[1200];
  snprintf(lock, sizeof lock, "%s-lock", caffe);
  unlink(caffe);
  unlink(lock);
  unlink(own);
  return 0;
}
