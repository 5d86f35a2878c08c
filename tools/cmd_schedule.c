/* sluice schedule CONFIG [--epochs N]: the resolution curriculum and the
 * memory a loader opened from CONFIG will hold.
 *
 * Prints, per epoch, the resolution and the bytes of one batch; then the
 * buffers sl_loader_open allocates (sized for the largest resolution), the
 * same numbers the loader computes (sluice.h's experimental
 * sl_config_memory_plan). When dataset.path opens, the sample count,
 * batches per epoch, targets and index size are included. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLUICE_EXPERIMENTAL
#include "sluice.h"
#include "tools/cli.h"

static const char *human(uint64_t v, char *buf, size_t cap) {
  return sl_format_bytes(v, buf, cap);
}

int sl_cmd_schedule(int argc, char **argv) {
  const char *path = NULL;
  long long epochs = 16;
  const sl_cli_opt opts[] = {
      {.name = "--epochs",
       .kind = SL_CLI_INT,
       .value = "N",
       .lo = 1,
       .hi = 100000,
       .help = "epochs to print (default 16)",
       .dst = &epochs},
  };
  const sl_cli_spec spec = {
      .cmd = "schedule",
      .head = "usage: sluice schedule CONFIG [--epochs N]\n\n"
              "Prints epoch -> resolution and batch bytes for N epochs "
              "(default 16),\nand the memory the loader will hold.\n",
      .column = 12,
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
      .pos = &path,
      .min_pos = 1,
      .max_pos = 1,
      .too_many = "one CONFIG only"};
  int rc = sl_cli_parse(&spec, argc, argv, NULL);
  if (rc >= 0)
    return rc;
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    return 1;
  if (sl_config_load_ini(cfg, path) != SL_OK) {
    fprintf(stderr, "sluice schedule: %s\n", sl_config_errmsg(cfg));
    sl_config_destroy(cfg);
    return 1;
  }
  /* The dataset, when it opens: its count and target width enter the plan. */
  sl_dataset *ds = NULL;
  uint64_t n = 0;
  uint32_t k = 0;
  char v[512];
  bool has_path =
      sl_config_get(cfg, "dataset.path", v, sizeof v) == SL_OK && v[0];
  if (has_path && sl_dataset_open(&ds, cfg) == SL_OK) {
    n = sl_dataset_count(ds);
    k = sl_dataset_target_width(ds);
  }
  sl_dataset_close(ds);
  char b1[32], b2[32], b3[32];

  printf("%-7s %-11s %s\n", "epoch", "resolution", "batch bytes");
  for (long long e = 0; e < epochs; e++) {
    uint32_t res = sl_config_epoch_resolution(cfg, (uint64_t)e);
    snprintf(b1, sizeof b1, "%ux%u", res, res);
    printf("%-7lld %-11s %s\n", e, b1,
           human(sl_config_batch_bytes(cfg, res), b2, sizeof b2));
  }

  sl_memory_plan host, dev;
  if (sl_config_memory_plan(cfg, 0, k, &host) != SL_OK) {
    fprintf(stderr, "sluice schedule: %s\n", sl_config_errmsg(cfg));
    sl_config_destroy(cfg);
    return 1;
  }
  printf("\nbuffers are sized once for the largest resolution, %ux%u "
         "(%u channels):\n",
         host.max_res, host.max_res, host.channels);
  printf("  staging   %u x %s = %s (host memory)\n", host.nstaging,
         human(host.staging_bytes, b1, sizeof b1),
         human(host.staging_bytes * host.nstaging, b2, sizeof b2));
  printf("  slots     %u x %s = %s (host backend)\n", host.nslots,
         human(host.slot_bytes, b1, sizeof b1),
         human(host.slot_bytes * host.nslots, b2, sizeof b2));
  if (sl_config_get(cfg, "device.backend", v, sizeof v) == SL_OK &&
      strcmp(v, "host") != 0) {
    char budget[64] = "";
    sl_config_get(cfg, "device.vram_budget", budget, sizeof budget);
    if (sl_config_memory_plan(cfg, 1, k, &dev) == SL_OK) {
      char b4[32];
      printf("  with CUDA %u device slots, %s of device memory, %s in the "
             "allocator's 2 MiB pages (budget %s); pinned staging %s\n"
             "            plus the CUDA context if the process has none on "
             "the device yet (driver-dependent, hundreds of MiB; not in the "
             "budget)\n",
             dev.nslots, human(dev.device_bytes, b1, sizeof b1),
             human(dev.device_alloc_bytes, b4, sizeof b4), budget,
             human(dev.staging_bytes * dev.nstaging, b3, sizeof b3));
    } else
      printf("  with CUDA: %s\n", sl_config_errmsg(cfg));
  }
  printf("  workers   %u, each with decode scratch for crops up to %ux%u\n",
         host.workers, host.max_res, host.max_res);
  if (sl_config_get(cfg, "dataset.chunk_cache", v, sizeof v) == SL_OK)
    printf("  chunks    up to %s of decompressed chunks shared by the workers "
           "(dataset.chunk_cache; HDF5 arrays of compressed chunks only, at "
           "most the whole array), plus per worker twice the largest chunk "
           "as scratch\n",
           v);

  if (n > 0) {
    long long world = 1, bs = 1;
    int drop_last = 1;
    if (sl_config_get(cfg, "loader.world_size", v, sizeof v) == SL_OK)
      world = atoll(v);
    if (sl_config_get(cfg, "loader.batch_size", v, sizeof v) == SL_OK)
      bs = atoll(v);
    if (sl_config_get(cfg, "loader.drop_last", v, sizeof v) == SL_OK)
      drop_last = strcmp(v, "true") == 0;
    uint64_t wb = (uint64_t)(world * bs);
    uint64_t nb = drop_last ? n / wb : (n + wb - 1) / wb;
    uint64_t index = n * (SL_INDEX_BYTES_PER_SAMPLE + 4 * (uint64_t)k);
    printf("  dataset   %llu samples, %llu batches per epoch per rank; "
           "index %s, order %s\n",
           (unsigned long long)n, (unsigned long long)nb,
           human(index, b1, sizeof b1), human(n * 8, b2, sizeof b2));
    if (k > 0)
      printf("  targets   %u floats per sample (in the index, and %s in the "
             "staging buffers and slots)\n",
             k,
             human(4ull * k * (uint64_t)bs * (host.nstaging + host.nslots), b1,
                   sizeof b1));
    printf("  total     %s of host memory (host backend, without decode "
           "scratch)\n",
           human(host.host_bytes + index + n * 8, b3, sizeof b3));
  } else {
    printf("  dataset   %s: index %d B + order 8 B per sample\n",
           has_path ? "not readable now" : "dataset.path not set",
           SL_INDEX_BYTES_PER_SAMPLE);
    printf("  total     %s of host memory plus the per-sample bytes "
           "(host backend, without decode scratch)\n",
           human(host.host_bytes, b3, sizeof b3));
  }
  sl_config_destroy(cfg);
  return 0;
}
