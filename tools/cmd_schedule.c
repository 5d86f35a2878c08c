/* sluice schedule CONFIG [--epochs N]: the resolution curriculum and the
 * memory a loader opened from CONFIG will hold.
 *
 * Prints, per epoch, the resolution and the bytes of one batch; then the
 * buffers sl_loader_open allocates (sized for the largest resolution), the
 * same numbers the loader computes (sl_loader_plan_make). When
 * dataset.path opens, the sample count, batches per epoch and index size
 * are included. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/source.h"
#include "io/io_select.h"
#include "loader/config.h"
#include "loader/loader_internal.h"
#include "loader/schedule.h"
#include "sluice.h"
#include "tools/cli.h"

static void usage(FILE *f) {
  fprintf(f, "usage: sluice schedule CONFIG [--epochs N]\n\n"
             "Prints epoch -> resolution and batch bytes for N epochs "
             "(default 16),\nand the memory the loader will hold.\n");
}

static const char *human(uint64_t v, char *buf, size_t cap) {
  return sl_io_fmt_bytes(v, buf, cap);
}

int sl_cmd_schedule(int argc, char **argv) {
  const char *path = NULL;
  long long epochs = 16;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(argv[i], "--epochs") == 0) {
      if (i + 1 >= argc || !sl_cli_parse_int(argv[++i], 1, 100000, &epochs))
        return sl_cli_usage_error("schedule", "--epochs needs a number "
                                              "1..100000");
    } else if (argv[i][0] == '-') {
      return sl_cli_usage_error("schedule", "unknown option '%s'", argv[i]);
    } else if (!path) {
      path = argv[i];
    } else {
      return sl_cli_usage_error("schedule", "one CONFIG only");
    }
  }
  if (!path) {
    usage(stderr);
    return 2;
  }
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK)
    return 1;
  if (sl_config_load_ini(cfg, path) != SL_OK) {
    fprintf(stderr, "sluice schedule: %s\n", sl_config_errmsg(cfg));
    sl_config_destroy(cfg);
    return 1;
  }
  sl_schedule s;
  sl_schedule_from_config(&s, cfg);
  sl_dtype dtype = (sl_dtype)sl_cfg_enum(cfg, SL_OPT_AUGMENT_DTYPE);
  uint64_t bs = (uint64_t)sl_cfg_int(cfg, SL_OPT_LOADER_BATCH_SIZE);
  const int channels = 3;
  char b1[32], b2[32], b3[32];

  printf("%-7s %-11s %s\n", "epoch", "resolution", "batch bytes");
  for (long long e = 0; e < epochs; e++) {
    int res = sl_schedule_res(&s, (uint64_t)e);
    uint64_t bytes = bs * sl_loader_sample_bytes(dtype, channels, res);
    snprintf(b1, sizeof b1, "%dx%d", res, res);
    printf("%-7lld %-11s %s\n", e, b1, human(bytes, b2, sizeof b2));
  }

  sl_err err;
  sl_err_clear(&err);
  sl_loader_plan host, dev;
  if (sl_loader_plan_make(cfg, channels, false, false, &host, &err) != SL_OK) {
    fprintf(stderr, "sluice schedule: %s\n", err.msg);
    sl_config_destroy(cfg);
    return 1;
  }
  printf("\nbuffers are sized once for the largest resolution, %dx%d "
         "(%d channels):\n",
         host.max_res, host.max_res, channels);
  printf("  staging   %d x %s = %s (host memory)\n", host.nstaging,
         human(host.staging_bytes, b1, sizeof b1),
         human(host.staging_bytes * (uint64_t)host.nstaging, b2, sizeof b2));
  printf("  slots     %d x %s = %s (host backend)\n", host.nslots,
         human(host.batch_bytes_max, b1, sizeof b1),
         human(host.batch_bytes_max * (uint64_t)host.nslots, b2, sizeof b2));
  if (sl_cfg_enum(cfg, SL_OPT_DEVICE_BACKEND) != SL_BACKEND_HOST) {
    sl_err derr;
    sl_err_clear(&derr);
    if (sl_loader_plan_make(cfg, channels, true, true, &dev, &derr) == SL_OK)
      printf("  with CUDA %d device slots, %s of device memory (budget %s); "
             "pinned staging %s\n",
             dev.nslots, human(dev.device_bytes, b1, sizeof b1),
             human(sl_cfg_size(cfg, SL_OPT_DEVICE_VRAM_BUDGET), b2, sizeof b2),
             human(dev.staging_bytes * (uint64_t)dev.nstaging, b3, sizeof b3));
    else
      printf("  with CUDA: %s\n", derr.msg);
  }
  printf("  workers   %d, each with decode scratch for crops up to %dx%d\n",
         host.workers, host.max_res, host.max_res);

  const char *ds = sl_cfg_str(cfg, SL_OPT_DATASET_PATH);
  sl_source *src = NULL;
  uint64_t n = 0;
  if (ds[0] &&
      sl_source_open(&src, ds,
                     (sl_format_kind)sl_cfg_enum(cfg, SL_OPT_DATASET_FORMAT),
                     SL_SOURCE_PREAD, &err) == SL_OK) {
    n = sl_source_count(src);
    sl_source_close(src);
  }
  if (n > 0) {
    uint64_t world = (uint64_t)sl_cfg_int(cfg, SL_OPT_LOADER_WORLD_SIZE);
    uint64_t wb = world * bs;
    uint64_t nb =
        sl_cfg_bool(cfg, SL_OPT_LOADER_DROP_LAST) ? n / wb : (n + wb - 1) / wb;
    uint64_t order = n * 8;
    printf("  dataset   %llu samples, %llu batches per epoch per rank; "
           "index %s, order %s\n",
           (unsigned long long)n, (unsigned long long)nb,
           human(n * SL_SAMPLE_INFO_BYTES, b1, sizeof b1),
           human(order, b2, sizeof b2));
    printf(
        "  total     %s of host memory (host backend, without decode "
        "scratch)\n",
        human(host.host_bytes + n * (SL_SAMPLE_INFO_BYTES + 8), b3, sizeof b3));
  } else {
    printf("  dataset   %s: index 24 B + order 8 B per sample\n",
           ds[0] ? "not readable now" : "dataset.path not set");
    printf("  total     %s of host memory plus the per-sample bytes "
           "(host backend, without decode scratch)\n",
           human(host.host_bytes, b3, sizeof b3));
  }
  sl_config_destroy(cfg);
  return 0;
}
