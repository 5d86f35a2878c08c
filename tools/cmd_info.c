/* sluice info FILE: what a dataset file holds. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/codec.h"
#include "codecs/jpeg_window.h"
#include "formats/source.h"
#include "io/io_select.h"
#include "tools/cli.h"

enum { NBUCKETS = 9, SHOW_CLASSES = 10, LAYOUT_SAMPLES = 256 };

/* Binary units (KiB, MiB), as `sluice schedule` and the loader's log. */
static void human(char *buf, size_t cap, double bytes) {
  sl_io_fmt_bytes((uint64_t)(bytes + 0.5), buf, cap);
}

/* How many of up to LAYOUT_SAMPLES JPEGs, spread over the file, have the
 * restart layout the region decoder uses (codecs/jpeg_window.h). */
static void print_jpeg_layout(const sl_source *src, uint64_t n) {
  uint64_t seen = 0, laid = 0, bad = 0;
  size_t cap = sl_source_max_length(src);
  uint8_t *buf = malloc(cap ? cap : 1);
  if (!buf) {
    printf("jpeg layout: (out of memory)\n");
    return;
  }
  uint64_t step = (n + LAYOUT_SAMPLES - 1) / LAYOUT_SAMPLES;
  for (uint64_t i = 0; i < n && seen < LAYOUT_SAMPLES; i += step) {
    if (sl_source_info(src, i)->codec != SL_CODEC_JPEG)
      continue;
    const uint8_t *data;
    size_t len;
    sl_err err = {0};
    sl_jpeg_layout lo;
    seen++;
    if (sl_source_read(src, i, buf, cap, &data, &len, &err) != SL_OK)
      bad++;
    else
      laid += (uint64_t)sl_jpeg_layout_read(data, len, &lo);
  }
  free(buf);
  if (seen == 0)
    return;
  printf("jpeg layout: %" PRIu64 " of %" PRIu64
         " sampled JPEGs have restart segments%s\n",
         laid, seen,
         laid == seen ? " (crops decode only their segments)"
         : laid == 0  ? " (crops decode from the first row; `sluice pack` "
                        "without --keep-jpeg rewrites them losslessly)"
                      : "");
  if (bad)
    printf("             %" PRIu64 " could not be read (sluice verify)\n", bad);
}

static void usage(FILE *f) {
  fprintf(f, "usage: sluice info FILE [--classes]\n\n"
             "Prints a dataset file's format, layout version, sample count, "
             "classes,\nsizes, resolution histogram and codec mix, and "
             "whether (a sample of)\nits JPEGs have the restart layout "
             "that lets crops skip data.\n"
             "  --classes  print only the class names, one 'label<TAB>name' "
             "line each\n             (labels are the values batches carry)\n");
}

/* label<TAB>name per class: the mapping a model's outputs need. */
static void print_classes(const sl_source *src) {
  uint32_t k = sl_source_class_count(src);
  for (uint32_t i = 0; i < k; i++)
    printf("%" PRIu32 "\t%s\n", i, sl_source_class_name(src, i));
  if (k == 0)
    fprintf(stderr, "sluice info: no class names are recorded in this file\n");
}

int sl_cmd_info(int argc, char **argv) {
  const char *path = NULL;
  bool classes_only = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--classes")) {
      classes_only = true;
    } else if (argv[i][0] == '-') {
      return sl_cli_usage_error("info", "unknown option '%s'", argv[i]);
    } else if (!path) {
      path = argv[i];
    } else {
      return sl_cli_usage_error("info", "one FILE only");
    }
  }
  if (!path) {
    usage(stderr);
    return 2;
  }
  sl_err err = {0};
  sl_source *src;
  if (sl_source_open(&src, path, SL_FORMAT_AUTO, SL_SOURCE_PREAD, &err) !=
      SL_OK) {
    fprintf(stderr, "sluice info: %s\n", err.msg);
    return 1;
  }
  if (classes_only) {
    print_classes(src);
    sl_source_close(src);
    return 0;
  }
  uint64_t n = sl_source_count(src), total = 0, minb = UINT64_MAX, maxb = 0;
  uint64_t codecs[4] = {0}, gray = 0, rgb = 0, hist[NBUCKETS] = {0};
  unsigned minh = 65535, minw = 65535, maxh = 0, maxw = 0;
  for (uint64_t i = 0; i < n; i++) {
    const sl_sample_info *e = sl_source_info(src, i);
    total += e->length;
    minb = e->length < minb ? e->length : minb;
    maxb = e->length > maxb ? e->length : maxb;
    codecs[e->codec < 4 ? e->codec : 0]++;
    gray += e->channels == 1;
    rgb += e->channels == 3;
    unsigned side = e->height > e->width ? e->height : e->width;
    int b = 0;
    while (b < NBUCKETS - 1 && side > (32u << b))
      b++;
    hist[b]++;
    minh = e->height < minh ? e->height : minh;
    minw = e->width < minw ? e->width : minw;
    maxh = e->height > maxh ? e->height : maxh;
    maxw = e->width > maxw ? e->width : maxw;
  }
  char a[32], b[32], c[32], d[32];
  human(a, sizeof a, (double)sl_source_file_size(src));
  printf("file:        %s\n", path);
  printf("format:      %s, layout version %" PRIu32 "\n",
         sl_source_format_name(src), sl_source_layout_version(src));
  printf("file size:   %s\n", a);
  printf("samples:     %" PRIu64 "\n", n);
  uint32_t k = sl_source_class_count(src);
  printf("classes:     %" PRIu32 "%s", k, k ? ":" : "\n");
  for (uint32_t i = 0; i < k && i < SHOW_CLASSES; i++)
    printf(" %s%s", sl_source_class_name(src, i), i + 1 < k ? "," : "\n");
  if (k > SHOW_CLASSES)
    printf(" ... (%" PRIu32 " more: sluice info FILE --classes)\n",
           k - SHOW_CLASSES);
  if (n) {
    human(a, sizeof a, (double)total);
    human(b, sizeof b, (double)minb);
    human(c, sizeof c, (double)total / (double)n);
    human(d, sizeof d, (double)maxb);
    printf("payloads:    %s in all; per sample min %s, mean %s, max %s\n", a, b,
           c, d);
    printf("codecs:      jpeg %" PRIu64 ", png %" PRIu64 ", raw %" PRIu64
           "%s\n",
           codecs[1], codecs[2], codecs[3],
           codecs[0] ? " (and damaged entries)" : "");
    print_jpeg_layout(src, n);
    printf("channels:    rgb %" PRIu64 ", gray %" PRIu64 "\n", rgb, gray);
    printf("image sizes: %ux%u to %ux%u (width x height)\n", minw, minh, maxw,
           maxh);
    printf("longer side:\n");
    uint64_t top = 1;
    for (int i = 0; i < NBUCKETS; i++)
      top = hist[i] > top ? hist[i] : top;
    for (int i = 0; i < NBUCKETS; i++) {
      char label[24];
      if (i < NBUCKETS - 1)
        snprintf(label, sizeof label, "<= %u", 32u << i);
      else
        snprintf(label, sizeof label, "> %u", 32u << (NBUCKETS - 2));
      int bar = (int)(40.0 * (double)hist[i] / (double)top + 0.5);
      printf("  %-8s %10" PRIu64 "  %.*s\n", label, hist[i], bar,
             "########################################");
    }
  }
  const char *wr = sl_source_writer_settings(src);
  printf("writer:      %s\n", *wr ? wr : "(not recorded)");
  sl_source_close(src);
  return 0;
}
