/* sluice preview CONFIG [--epoch E] [--count N] [--out FILE.png]: the first
 * N samples of epoch E as the loader crops, flips, resizes and augments
 * them (the recipe's augment.* ops included), as one PNG grid, to see an
 * augmentation and resolution config before training. */
#define SLUICE_EXPERIMENTAL /* sl_config_batches_per_epoch */
#include <inttypes.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice.h"
#include "tools/cli.h"

enum { k_gap = 2, k_max_count = 1024, k_background = 128 };

/* The help above the options. */
static const char k_head[] =
    "usage: sluice preview CONFIG [--epoch E] [--count N] [--out "
    "FILE.png]\n\n"
    "Runs the loader of CONFIG for the first N samples (default 16) "
    "of epoch E\n(default 0) and writes them as one PNG grid "
    "(default preview.png,\nreplaced if it exists): the crops, flips "
    "and resolution training will see,\nwith the recipe's ops on: "
    "augment.auto (trivial, randaugment, autoaugment;\nauto_ops, "
    "auto_magnitude, ...), color_jitter, color_jitter_p, grayscale,"
    "\nblur, erasing (in u8: the mean's byte, or the noise's bytes), "
    "and mixup/cutmix\n(mixing the preview's own batch of N, so its "
    "pairs are not training's).\nThe config's dataset, order, "
    "seed, sharding, schedule and augment keys\napply; the output is "
    "u8 NHWC on the host whatever augment.dtype, layout\nand "
    "device.backend say (mean and std apply only to float outputs). "
    "Prints\neach cell's sample index and label. A config the loader "
    "would refuse\n(batch_size and drop_last leaving no whole batch) "
    "is refused here too,\nthough the preview's own batch is "
    "--count with drop_last off.\n";

/* Preview runs the loader with its own batch (--count) and drop_last off;
 * a config the loader itself would refuse (no whole batch with drop_last)
 * must not look fine here, so the config is first checked as given. */
static int check_like_loader(const char *path) {
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK) {
    fprintf(stderr, "sluice preview: out of memory\n");
    return 1;
  }
  int rc = 1;
  sl_dataset *ds = NULL;
  uint64_t nb;
  if (sl_config_load_ini(cfg, path) != SL_OK) {
    fprintf(stderr, "sluice preview: %s\n", sl_config_errmsg(cfg));
  } else if (sl_dataset_open(&ds, cfg) != SL_OK) {
    fprintf(stderr, "sluice preview: %s\n", sl_dataset_errmsg(ds));
  } else if (sl_config_batches_per_epoch(cfg, sl_dataset_count(ds), &nb) !=
             SL_OK) {
    fprintf(stderr,
            "sluice preview: %s: the loader would refuse this config: "
            "%s\n",
            path, sl_config_errmsg(cfg));
  } else {
    rc = 0;
  }
  sl_dataset_close(ds);
  sl_config_destroy(cfg);
  return rc;
}

/* Lays the batch's n images out in a grid and writes it as a PNG. */
static int write_grid(const sl_batch *b, const char *path) {
  uint32_t n = b->n, cols = 1, res_w = b->width, res_h = b->height,
           ch = b->channels;
  while (cols * cols < n)
    cols++;
  uint32_t rows = (n + cols - 1) / cols;
  size_t gw = (size_t)cols * res_w + (size_t)(cols + 1) * k_gap;
  size_t gh = (size_t)rows * res_h + (size_t)(rows + 1) * k_gap;
  /* Bound: the batch's own bytes (n x res^2 x channels, n <= k_max_count)
   * plus the 2 px gaps; freed before returning. */
  uint8_t *grid = malloc(gw * gh * ch);
  if (!grid) {
    fprintf(stderr, "sluice preview: out of memory for a %zux%zu grid\n", gw,
            gh);
    return -1;
  }
  memset(grid, k_background, gw * gh * ch);
  const uint8_t *px = b->data;
  size_t img_row = (size_t)res_w * ch, img = img_row * res_h;
  for (uint32_t k = 0; k < n; k++) {
    size_t x0 = k_gap + (size_t)(k % cols) * (res_w + k_gap);
    size_t y0 = k_gap + (size_t)(k / cols) * (res_h + k_gap);
    for (uint32_t y = 0; y < res_h; y++)
      memcpy(grid + ((y0 + y) * gw + x0) * ch, px + k * img + y * img_row,
             img_row);
  }
  png_image pi;
  memset(&pi, 0, sizeof pi);
  pi.version = PNG_IMAGE_VERSION;
  pi.width = (png_uint_32)gw;
  pi.height = (png_uint_32)gh;
  pi.format = ch == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  int ok = png_image_write_to_file(&pi, path, 0, grid, 0, NULL);
  free(grid);
  if (!ok) {
    fprintf(stderr, "sluice preview: %s: %s\n", path, pi.message);
    return -1;
  }
  printf("%s: %u samples of epoch %" PRIu64 " at %ux%u, %u per row\n", path, n,
         b->epoch, res_w, res_h, cols);
  for (uint32_t k = 0; k < n; k++)
    printf("  row %u col %u: sample %" PRIu64 ", label %" PRId32 "\n", k / cols,
           k % cols, b->indices[k], b->labels[k]);
  return 0;
}

int sl_cmd_preview(int argc, char **argv) {
  const char *path = NULL, *out = "preview.png";
  long long epoch = 0, count = 16;
  const sl_cli_opt opts[] = {
      {.name = "--epoch",
       .kind = SL_CLI_INT,
       .value = "E",
       .lo = 0,
       .hi = 1000000000LL,
       .help = "the epoch (default 0)",
       .dst = &epoch},
      {.name = "--count",
       .kind = SL_CLI_INT,
       .value = "N",
       .lo = 1,
       .hi = k_max_count,
       .help = "samples, one cell each (default 16)",
       .dst = &count},
      {.name = "--out",
       .kind = SL_CLI_STRING,
       .value = "FILE.png",
       .needs = "a file name",
       .help = "the grid (default preview.png)",
       .dst = &out},
  };
  const sl_cli_spec spec = {.cmd = "preview",
                            .head = k_head,
                            .column = 16,
                            .opts = opts,
                            .nopts = sizeof opts / sizeof opts[0],
                            .pos = &path,
                            .min_pos = 1,
                            .max_pos = 1,
                            .too_many = "one CONFIG only"};
  int parsed = sl_cli_parse(&spec, argc, argv, NULL);
  if (parsed >= 0)
    return parsed;
  if (check_like_loader(path))
    return 1;
  /* The config with the preview's own settings on top. */
  char n[32];
  snprintf(n, sizeof n, "%lld", count);
  const char *const kv[] = {"augment.dtype",
                            "u8",
                            "augment.layout",
                            "nhwc",
                            "device.backend",
                            "host",
                            "loader.batch_size",
                            n,
                            "loader.drop_last",
                            "false",
                            "loader.workers",
                            "1",
                            NULL};
  sl_loader *ld = sl_cli_open_loader("preview", path, kv);
  if (!ld)
    return 1;
  sl_batch b;
  sl_status st = sl_loader_start_epoch(ld, (uint64_t)epoch);
  if (st == SL_OK)
    st = sl_loader_next(ld, &b);
  int rc = 1;
  if (st == SL_OK) {
    rc = write_grid(&b, out) == 0 ? 0 : 1;
    sl_batch_release(ld, &b, NULL);
  } else if (st == SL_END) {
    fprintf(stderr, "sluice preview: epoch %lld has no batch (empty shard)\n",
            epoch);
  } else {
    fprintf(stderr, "sluice preview: %s\n", sl_loader_errmsg(ld));
  }
  sl_loader_close(ld);
  return rc;
}
