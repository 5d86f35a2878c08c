/* io_ooc_loader: the whole loader (public API) on an LMDB of raw images,
 * for the out-of-core test (cgroup_test.sh runs it inside a memory-limited
 * cgroup for every loader.io backend and compares the epoch hashes).
 *
 *   io_ooc_loader make PATH MIB      write ~MIB MiB of 256x256x3 raw images
 *   io_ooc_loader run PATH IO ORDER [EPOCHS] [--drop]
 *       IO: mmap | pread | uring | uring-direct | auto; ORDER: random |
 *       quasi_random. --drop: evict the file from the page cache first.
 * Prints "epoch E hash H batches B" per epoch; exit 0 when every epoch
 * ended with SL_END, 1 on an error (printed), 2 on bad usage. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codecs/codec.h"
#include "formats/core/writer.h"
#include "io/io_hints.h"
#include "io/io_synth.h"
#include "sluice.h"

#define SIDE 256
#define RAW_BYTES (SIDE * SIDE * 3)

static int make(const char *path, uint64_t mib) {
  uint64_t n = mib * 1048576 / RAW_BYTES;
  sl_err err;
  sl_fwriter *w = NULL;
  uint8_t *buf = malloc(RAW_BYTES);
  if (!buf || sl_fwriter_open(&w, path, SL_FORMAT_AUTO, &err) != SL_OK) {
    fprintf(stderr, "io_ooc_loader: %s: %s\n", path,
            buf ? err.msg : "out of memory");
    free(buf);
    return 1;
  }
  for (uint64_t i = 0; i < n; i++) {
    synth_fill(i, 0, buf, RAW_BYTES);
    sl_sample_info meta = {.label = (int32_t)(i % 10),
                           .height = SIDE,
                           .width = SIDE,
                           .codec = SL_IMAGE_RAW,
                           .channels = 3};
    if (sl_fwriter_add(w, buf, RAW_BYTES, &meta, &err) != SL_OK) {
      fprintf(stderr, "io_ooc_loader: %s\n", err.msg);
      sl_fwriter_abort(w);
      free(buf);
      return 1;
    }
  }
  free(buf);
  static const char *const classes[10] = {"0", "1", "2", "3", "4",
                                          "5", "6", "7", "8", "9"};
  if (sl_fwriter_commit(w, 10, classes, "io_ooc_loader", true, &err) != SL_OK) {
    fprintf(stderr, "io_ooc_loader: %s\n", err.msg);
    return 1;
  }
  printf("io_ooc_loader: %s: %llu raw samples\n", path, (unsigned long long)n);
  return 0;
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}

static void print_log(void *user, sl_log_level level, const char *msg) {
  if (level >= SL_LOG_INFO && strstr(msg, "reading with"))
    printf("log: %s\n", msg);
}

static int run(const char *path, const char *io, const char *order, int epochs,
               int drop) {
  if (drop) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    sl_err e = {0};
    if (fd < 0 || sl_fadvise_dontneed(fd, 0, 0, &e) != SL_OK) {
      fprintf(stderr, "io_ooc_loader: %s: cannot drop from the cache\n", path);
      return 1;
    }
    close(fd);
  }
  int direct = strcmp(io, "uring-direct") == 0;
  const char *kv[] = {"dataset.path",
                      path,
                      "device.backend",
                      "host",
                      "loader.batch_size",
                      "32",
                      "loader.workers",
                      "2",
                      "loader.drop_last",
                      "false",
                      "loader.order",
                      order,
                      "loader.io",
                      direct ? "uring" : io,
                      "io.direct",
                      direct ? "true" : "false",
                      "io.pool_size",
                      "16MiB",
                      "resolution.min",
                      "64",
                      "resolution.max",
                      "64",
                      "augment.dtype",
                      "u8",
                      NULL};
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    return 1;
  for (int i = 0; kv[i]; i += 2)
    if (sl_config_set(cfg, kv[i], kv[i + 1]) != SL_OK) {
      fprintf(stderr, "io_ooc_loader: %s\n", sl_config_errmsg(cfg));
      sl_config_destroy(cfg);
      return 2;
    }
  sl_config_set_log(cfg, print_log, NULL);
  sl_loader *ld;
  if (sl_loader_open(&ld, cfg) != SL_OK) {
    fprintf(stderr, "io_ooc_loader: %s\n", sl_loader_errmsg(ld));
    sl_loader_close(ld);
    sl_config_destroy(cfg);
    return 1;
  }
  sl_config_destroy(cfg);
  int rc = 0;
  for (int e = 0; e < epochs && rc == 0; e++) {
    uint64_t h = 0xcbf29ce484222325ULL;
    int batches = 0;
    sl_status st = sl_loader_start_epoch(ld, (uint64_t)e);
    sl_batch b;
    while (st == SL_OK && (st = sl_loader_next(ld, &b)) == SL_OK) {
      h = hash_bytes(h, b.indices, b.n * sizeof *b.indices);
      h = hash_bytes(h, b.data, b.bytes);
      batches++;
      st = sl_batch_release(ld, &b, NULL);
    }
    if (st != SL_END) {
      fprintf(stderr, "io_ooc_loader: epoch %d: %s\n", e, sl_loader_errmsg(ld));
      rc = 1;
    } else {
      printf("epoch %d hash %016llx batches %d\n", e, (unsigned long long)h,
             batches);
    }
  }
  sl_loader_close(ld);
  return rc;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "make") == 0)
    return make(argv[2], strtoull(argv[3], NULL, 10));
  if (argc >= 5 && strcmp(argv[1], "run") == 0) {
    int epochs = argc >= 6 && argv[5][0] != '-' ? atoi(argv[5]) : 2;
    int drop = strcmp(argv[argc - 1], "--drop") == 0;
    return run(argv[2], argv[3], argv[4], epochs, drop);
  }
  fprintf(stderr, "usage: io_ooc_loader make PATH MIB | run PATH "
                  "mmap|pread|uring|uring-direct|auto random|quasi_random "
                  "[EPOCHS] [--drop]\n");
  return 2;
}
