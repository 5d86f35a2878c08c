/* sluice synth OUTDIR [--count N] [--classes K] [--seed S] [--imagenet]
 *                     [--max-side N]
 * Writes a deterministic folder of photo-like JPEGs in class subfolders. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/synth.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: sluice synth OUTDIR [--count N] [--classes K] [--seed S]\n"
          "                    [--imagenet] [--max-side N]\n\n"
          "Writes N photo-like JPEGs to OUTDIR/class_KKK/img_NNNNN.jpg; the\n"
          "same seed gives byte-identical files.\n"
          "--count N     images (default 100)\n"
          "--classes K   class subfolders (default 10)\n"
          "--seed S      seed (default 1)\n"
          "--imagenet    ImageNet-like files: mostly 500x375 q90 4:2:0, about\n"
          "              90 KB each (for benchmarks)\n"
          "--max-side N  largest side of the varied mode (default 2048); the\n"
          "              varied mode mixes sizes from 1x1 up, baseline and\n"
          "              progressive, 4:2:0/4:2:2/4:4:4/4:4:0/gray, restart\n"
          "              markers\n");
}

int sl_cmd_synth(int argc, char **argv) {
  sl_synth_folder_opts o = {0};
  o.seed = 1;
  const char *dir = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    long long v;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--imagenet") == 0) {
      o.imagenet = 1;
    } else if (strcmp(a, "--count") == 0 || strcmp(a, "--classes") == 0 ||
               strcmp(a, "--seed") == 0 || strcmp(a, "--max-side") == 0) {
      int is_seed = strcmp(a, "--seed") == 0;
      if (i + 1 >= argc ||
          !sl_cli_parse_int(argv[i + 1], is_seed ? 0 : 1,
                            is_seed ? 9223372036854775807LL
                            : strcmp(a, "--max-side") == 0 ? 65500
                                                           : 10000000,
                            &v))
        return sl_cli_usage_error("synth", "%s needs a %s number", a,
                                  is_seed ? "non-negative" : "positive");
      i++;
      if (a[2] == 'c' && a[3] == 'o')
        o.count = (int)v;
      else if (a[2] == 'c')
        o.classes = (int)v;
      else if (is_seed)
        o.seed = (uint64_t)v;
      else
        o.max_side = (int)v;
    } else if (a[0] == '-') {
      return sl_cli_usage_error("synth", "unknown option '%s'", a);
    } else if (!dir) {
      dir = a;
    } else {
      return sl_cli_usage_error("synth", "one OUTDIR only ('%s')", a);
    }
  }
  if (!dir) {
    usage(stderr);
    return 2;
  }
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
