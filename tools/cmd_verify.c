/* sluice verify FILE [--decode]: checks every record; names each bad one. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/source.h"
#include "tools/cli.h"
#include "tools/pack_image.h"
#include "tools/pack_progress.h"

typedef struct verify_state {
  const char *path;
  uint64_t bad;
} verify_state;

static void on_bad(void *user, uint64_t i, const char *reason) {
  verify_state *v = user;
  v->bad++;
  fprintf(stderr, "%s: sample %" PRIu64 ": %s\n", v->path, i, reason);
}

static void usage(FILE *f) {
  fprintf(f, "usage: sluice verify FILE [--decode] [--quiet]\n\n"
             "Checks every record's header and bounds; --decode also "
             "decodes every image\nand compares its size with the index. "
             "Each bad sample is named (index,\nkey or offset, reason); the "
             "exit status is 1 if any is bad.\n");
}

int sl_cmd_verify(int argc, char **argv) {
  const char *path = NULL;
  int decode = 0, quiet = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--decode"))
      decode = 1;
    else if (!strcmp(argv[i], "--quiet"))
      quiet = 1;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (argv[i][0] == '-' || path) {
      usage(stderr);
      return 2;
    } else
      path = argv[i];
  }
  if (!path) {
    usage(stderr);
    return 2;
  }
  verify_state v = {path, 0};
  sl_err err = {0};
  sl_source *src;
  if (sl_source_open_verify(&src, path, SL_FORMAT_AUTO, SL_IO_PREAD, on_bad, &v,
                            &err) != SL_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  uint64_t n = sl_source_count(src);
  int rc = 0;
  if (decode) {
    sl_pack_codec *codec = sl_pack_codec_create();
    uint8_t *buf = malloc((size_t)sl_source_max_length(src) + 1);
    if (!codec || !buf) {
      fprintf(stderr, "sluice verify: out of memory\n");
      rc = 1;
    }
    sl_progress prog;
    sl_progress_init(&prog, n, "images", quiet);
    uint64_t bytes = 0;
    for (uint64_t i = 0; rc == 0 && i < n; i++) {
      const sl_sample_info *e = sl_source_info(src, i);
      if (e->codec == 0)
        continue; /* reported at open */
      const uint8_t *d;
      size_t len;
      char why[256];
      if (sl_source_read(src, i, buf, sl_source_max_length(src), &d, &len,
                         &err) != SL_OK) {
        sl_progress_end(&prog);
        fprintf(stderr, "%s\n", err.msg);
        v.bad++;
      } else if (sl_pack_decode_check(codec, d, len, e->codec, e->height,
                                      e->width, e->channels, why, sizeof why)) {
        sl_progress_end(&prog);
        fprintf(stderr, "%s: sample %" PRIu64 " (offset %" PRIu64 "): %s\n",
                path, i, e->offset, why);
        v.bad++;
      }
      bytes += e->length;
      sl_progress_update(&prog, i + 1, bytes, i + 1 == n);
    }
    sl_progress_end(&prog);
    free(buf);
    sl_pack_codec_destroy(codec);
  }
  sl_source_close(src);
  if (rc)
    return rc;
  if (v.bad) {
    printf("%s: %" PRIu64 " of %" PRIu64 " samples are bad\n", path, v.bad, n);
    return 1;
  }
  printf("%s: %" PRIu64 " samples, all records in bounds%s\n", path, n,
         decode ? ", all images decode" : "");
  return 0;
}
