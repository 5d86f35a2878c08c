/* sluice synth OUTDIR [--count N] [--classes K] [--seed S] [--imagenet]
 *                     [--max-side N]
 * Writes a deterministic folder of photo-like JPEGs in class subfolders. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/cli.h"
#include "tools/synth.h"

int sl_cmd_synth(int argc, char **argv) {
  sl_synth_folder_opts o = {0};
  long long count = 0, classes = 0, seed = 1, max_side = 0;
  bool imagenet = false;
  const char *dir = NULL;
  const sl_cli_opt opts[] = {
      {.name = "--count",
       .kind = SL_CLI_INT,
       .value = "N",
       .lo = 1,
       .hi = 10000000,
       .needs = "a positive number",
       .help = "images (default 100)",
       .dst = &count},
      {.name = "--classes",
       .kind = SL_CLI_INT,
       .value = "K",
       .lo = 1,
       .hi = 10000000,
       .needs = "a positive number",
       .help = "class subfolders (default 10)",
       .dst = &classes},
      {.name = "--seed",
       .kind = SL_CLI_INT,
       .value = "S",
       .lo = 0,
       .hi = 9223372036854775807LL,
       .needs = "a non-negative number",
       .help = "seed (default 1)",
       .dst = &seed},
      {.name = "--imagenet",
       .kind = SL_CLI_FLAG,
       .help = "ImageNet-like files: mostly 500x375 q90 4:2:0, about\n"
               "90 KB each (for benchmarks)",
       .dst = &imagenet},
      {.name = "--max-side",
       .kind = SL_CLI_INT,
       .value = "N",
       .lo = 1,
       .hi = 65500,
       .needs = "a positive number",
       .help = "largest side of the varied mode (default 2048); the\n"
               "varied mode mixes sizes from 1x1 up, baseline and\n"
               "progressive, 4:2:0/4:2:2/4:4:4/4:4:0/gray, restart\n"
               "markers",
       .dst = &max_side},
  };
  const sl_cli_spec spec = {
      .cmd = "synth",
      .head =
          "usage: sluice synth OUTDIR [--count N] [--classes K] [--seed S]\n"
          "                    [--imagenet] [--max-side N]\n\n"
          "Writes N photo-like JPEGs to OUTDIR/class_KKK/img_NNNNN.jpg; the\n"
          "same seed gives byte-identical files.\n",
      .column = 14,
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
      .pos = &dir,
      .min_pos = 1,
      .max_pos = 1,
      .too_many = "one OUTDIR only"};
  int rc = sl_cli_parse(&spec, argc, argv, NULL);
  if (rc >= 0)
    return rc;
  o.count = (int)count; /* 0: the default */
  o.classes = (int)classes;
  o.seed = (uint64_t)seed;
  o.max_side = (int)max_side;
  o.imagenet = imagenet;
  sl_synth_folder_defaults(&o);
  sl_synth_err err = {0};
  if (sl_synth_folder(dir, &o, &err) != SL_OK) {
    fprintf(stderr, "sluice synth: %s\n", err.msg);
    return 1;
  }
  printf("wrote %d images in %d classes to %s\n", o.count,
         o.classes < o.count ? o.classes : o.count, dir);
  return 0;
}
