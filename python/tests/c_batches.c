/*
 * The C loader's batches, for the binding's tests to compare against:
 *   sluice_py_c_batches EPOCH key=value...
 * prints one line a batch: index, valid, and FNV-1a 64 hashes of its
 * pixels, labels and indices. With SLUICE_PY_C_LOG set, the loader's log
 * lines go to stderr ("log LEVEL: message"), for the tests to read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice.h"

static uint64_t fnv1a(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

static void on_log(void *user, sl_log_level level, const char *message) {
  (void)user;
  fprintf(stderr, "log %d: %s\n", (int)level, message);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s EPOCH key=value...\n", argv[0]);
    return 2;
  }
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    return 1;
  if (getenv("SLUICE_PY_C_LOG"))
    sl_config_set_log(cfg, on_log, NULL);
  for (int i = 2; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (!eq)
      return 2;
    *eq = '\0';
    if (sl_config_set(cfg, argv[i], eq + 1) != SL_OK) {
      fprintf(stderr, "%s\n", sl_config_errmsg(cfg));
      return 1;
    }
  }
  sl_loader *ld;
  if (sl_loader_open(&ld, cfg) != SL_OK) {
    fprintf(stderr, "%s\n", sl_loader_errmsg(ld));
    sl_loader_close(ld);
    return 1;
  }
  sl_config_destroy(cfg);
  sl_loader_start_epoch(ld, strtoull(argv[1], NULL, 10));
  sl_batch b;
  sl_status st;
  while ((st = sl_loader_next(ld, &b)) == SL_OK) {
    if (b.on_device) { /* hashed here, in host memory */
      fprintf(stderr,
              "%s: batch %" PRIu64 " is in device memory: pass "
              "device.backend=host\n",
              argv[0], b.index);
      sl_batch_release(ld, &b, NULL);
      sl_loader_close(ld);
      return 2;
    }
    printf("%" PRIu64 " %u %016" PRIx64 " %016" PRIx64 " %016" PRIx64 "\n",
           b.index, b.valid, fnv1a(b.data, b.bytes),
           fnv1a(b.labels, sizeof(int32_t) * b.n),
           fnv1a(b.indices, sizeof(uint64_t) * b.n));
    sl_batch_release(ld, &b, NULL);
  }
  int rc = st == SL_END ? 0 : 1;
  if (rc)
    fprintf(stderr, "%s\n", sl_loader_errmsg(ld));
  sl_loader_close(ld);
  return rc;
}
