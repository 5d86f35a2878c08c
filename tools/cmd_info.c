/* sluice info FILE: what a dataset file holds. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/safe_text.h"
#include "common/url_shown.h"
#include "sluice.h"
#include "tools/cli.h"
#include "tools/info_speed.h"

enum {
  NBUCKETS = 9,
  SHOW_CLASSES = 10,
  LAYOUT_SAMPLES = 256,
  MAX_SETS = 32 /* --set pairs */
};
_Static_assert(MAX_SETS == 32, "--set's refusal spells it out");

/* Binary units (KiB, MiB), as `sluice schedule` and the loader's log. */
static void human(char *buf, size_t cap, double bytes) {
  sl_format_bytes((uint64_t)(bytes + 0.5), buf, cap);
}

/* How many of up to LAYOUT_SAMPLES JPEGs, spread over the file, have the
 * restart layout the region decoder uses (sl_image_has_restart_layout). */
/* The resolution levels the writer recorded: images and bytes per level,
 * and each level's share of the payload bytes. */
static void print_levels(sl_dataset *ds, uint64_t total) {
  uint64_t images[SL_LEVELS_MAX_PUBLIC], bytes[SL_LEVELS_MAX_PUBLIC];
  uint32_t n = sl_dataset_levels(ds, images, bytes);
  if (n == 0)
    return;
  for (uint32_t k = 0; k < n; k++) {
    char b[32];
    human(b, sizeof b, (double)bytes[k]);
    printf("%s level %" PRIu32 ": %" PRIu64 " images, %s (%.1f%% of payloads)"
           "%s\n",
           k ? "            " : "levels:     ", k, images[k], b,
           total ? 100.0 * (double)bytes[k] / (double)total : 0.0,
           k ? "" : ", full size");
  }
}

/* Boxes a sample (0, 1, 2-3, 4-7, ... 32768-65535: bucket 1 + floor(log2
 * n)), how many are crowd or difficult, and how many samples of each class
 * hold the most boxes. Nothing for a file without boxes. */
enum { BOX_BUCKETS = 17 };
static void print_boxes(sl_dataset *ds, uint64_t n) {
  uint64_t total = sl_dataset_box_total(ds);
  if (total == 0)
    return;
  uint64_t hist[BOX_BUCKETS] = {0}, crowd = 0, difficult = 0;
  for (uint64_t i = 0; i < n; i++) {
    const sl_box *b;
    uint32_t k = 0;
    if (sl_dataset_boxes(ds, i, &b, &k) != SL_OK)
      continue;
    int bucket = 0;
    while (k >> bucket)
      bucket++;
    hist[bucket]++;
    for (uint32_t j = 0; j < k; j++) {
      crowd += (b[j].flags & SL_BOX_CROWD) != 0;
      difficult += (b[j].flags & SL_BOX_DIFFICULT) != 0;
    }
  }
  printf("boxes:       %" PRIu64 " in all, %.2f a sample, at most %" PRIu32
         " (crowd %" PRIu64 ", difficult %" PRIu64 ")\n",
         total, n ? (double)total / (double)n : 0.0, sl_dataset_max_boxes(ds),
         crowd, difficult);
  printf("boxes a sample:\n");
  int last = 0;
  uint64_t top = 1;
  for (int i = 0; i < BOX_BUCKETS; i++) {
    if (hist[i])
      last = i;
    top = hist[i] > top ? hist[i] : top;
  }
  for (int i = 0; i <= last; i++) {
    char label[24];
    if (i < 2)
      snprintf(label, sizeof label, "%d", i);
    else
      snprintf(label, sizeof label, "%u-%u", 1u << (i - 1), (1u << i) - 1);
    int bar = (int)(40.0 * (double)hist[i] / (double)top + 0.5);
    printf("  %-11s %10" PRIu64 "  %.*s\n", label, hist[i], bar,
           "########################################");
  }
}

static void print_jpeg_layout(sl_dataset *ds, uint64_t n) {
  uint64_t seen = 0, laid = 0, bad = 0;
  size_t cap = (size_t)sl_dataset_max_stored_bytes(ds);
  uint8_t *buf = malloc(cap ? cap : 1);
  if (!buf) {
    printf("jpeg layout: (out of memory)\n");
    return;
  }
  uint64_t step = (n + LAYOUT_SAMPLES - 1) / LAYOUT_SAMPLES;
  for (uint64_t i = 0; i < n && seen < LAYOUT_SAMPLES; i += step) {
    sl_sample_meta m;
    if (sl_dataset_info(ds, i, &m) != SL_OK || m.codec != SL_IMAGE_JPEG)
      continue;
    size_t len;
    seen++;
    if (sl_dataset_read(ds, i, buf, cap, &len) != SL_OK)
      bad++;
    else
      laid += (uint64_t)(sl_image_has_restart_layout(buf, len) != 0);
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

/* Whether the file records sample names (what `sluice pack` saw), with the
 * first as an example: first is the lowest index that has one, or
 * UINT64_MAX for none. */
static void print_names(sl_dataset *ds, uint64_t first) {
  if (first == UINT64_MAX) {
    printf("names:       none recorded\n");
    return;
  }
  char name[SL_SAMPLE_NAME_MAX + 1];
  if (sl_dataset_name(ds, first, name, sizeof name) != SL_OK) {
    printf("names:       recorded (sample %" PRIu64 "'s cannot be read: %s)\n",
           first, sl_dataset_errmsg(ds));
    return;
  }
  char buf[4 * sizeof name]; /* a damaged name stays on one line */
  printf("names:       recorded (e.g. sample %" PRIu64 ": %s)\n", first,
         sl_safe_text(buf, sizeof buf, name, strlen(name)));
}

/* A name taken from the file (a class, the writer, a dataset's path) as
 * printed: its control characters escaped (common/safe_text.h). */
static const char *safe_name(const char *s, char *buf, size_t cap) {
  return sl_safe_text(buf, cap, s, strlen(s));
}

/* label<TAB>name per class: the mapping a model's outputs need. */
static void print_classes(const sl_dataset *ds) {
  char buf[4096];
  uint32_t k = sl_dataset_class_count(ds);
  for (uint32_t i = 0; i < k; i++)
    printf("%" PRIu32 "\t%s\n", i,
           safe_name(sl_dataset_class_name(ds, i), buf, sizeof buf));
  if (k == 0)
    fprintf(stderr, "sluice info: no class names are recorded in this file\n");
}

/* --set's values: dataset.KEY=VALUE, split into kv's pairs. */
typedef struct info_sets {
  const char *kv[2 * MAX_SETS + 1]; /* NULL-terminated */
  char keys[MAX_SETS][1024];
  int n;
} info_sets;

static int add_set(const char *v, void *dst) {
  info_sets *s = dst;
  const char *eq = strchr(v, '=');
  if (!eq || strncmp(v, "dataset.", 8) != 0 ||
      (size_t)(eq - v) >= sizeof s->keys[0] || s->n == MAX_SETS)
    return 0;
  snprintf(s->keys[s->n], sizeof s->keys[0], "%.*s", (int)(eq - v), v);
  s->kv[2 * s->n] = s->keys[s->n];
  s->kv[2 * s->n + 1] = eq + 1;
  s->n++;
  return 1;
}

int sl_cmd_info(int argc, char **argv) {
  const char *path = NULL;
  bool classes_only = false, speed = false;
  long long samples = -1, res = -1; /* -1: not given */
  info_sets sets = {.n = 0};
  const char *const *kv = sets.kv;
  const sl_cli_opt opts[] = {
      {.name = "--classes",
       .kind = SL_CLI_FLAG,
       .help = "print only the class names, one 'label<TAB>name' line each\n"
               "(labels are the values batches carry)",
       .dst = &classes_only},
      {.name = "--set",
       .kind = SL_CLI_CUSTOM,
       .value = "KEY=VALUE",
       .needs = "dataset.KEY=VALUE, at most 32 of them",
       .help = "a dataset.* option for reading FILE, as for `pack --from`\n"
               "(repeatable)",
       .dst = &sets,
       .parse = add_set},
      {.name = "--speed",
       .kind = SL_CLI_FLAG,
       .help = "for a dataset read in place (WebDataset, image folder or "
               "list,\nTFRecord, RecordIO, a foreign LMDB): how much faster "
               "its crops\ndecode once packed. Writes N samples spread over "
               "FILE with\n`sluice pack`'s writer into a temporary directory "
               "under $TMPDIR\n(or /tmp, removed after), then times a "
               "one-worker loader taking\nN R-px random-resized crops (flip, "
               "u8) from FILE in place and from\nthe packed sample, 3 rounds "
               "alternating; prints the median ratio\nof CPU time (and of "
               "wall time)",
       .dst = &speed},
      {.name = "--samples",
       .kind = SL_CLI_INT,
       .value = "N",
       .lo = 1,
       .hi = 65536,
       .help = "images per run, 1..65536 (default 256)",
       .dst = &samples},
      {.name = "--res",
       .kind = SL_CLI_INT,
       .value = "R",
       .lo = 8,
       .hi = 8192,
       .needs = "pixels",
       .help = "crop size in px, 8..8192 (default 224)",
       .dst = &res},
  };
  const sl_cli_spec spec = {
      .cmd = "info",
      .head = "usage: sluice info FILE [--classes] [--set KEY=VALUE]...\n"
              "                   [--speed [--samples N] [--res R]]\n\n"
              "Prints a dataset file's format, layout version, sample count, "
              "classes,\ntargets, sample names, sizes, resolution histogram "
              "and codec mix, whether (a sample of)\nits JPEGs have the "
              "restart layout that lets crops skip data, and its boxes\n"
              "(detection annotations): how many, and a histogram of boxes a "
              "sample.\n",
      .column = 13,
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
      .pos = &path,
      .min_pos = 1,
      .max_pos = 1,
      .too_many = "one FILE only"};
  int parsed = sl_cli_parse(&spec, argc, argv, NULL);
  if (parsed >= 0)
    return parsed;
  bool sized = samples >= 0 || res >= 0;
  if (samples < 0)
    samples = 256;
  if (res < 0)
    res = 224;
  if (sized && !speed)
    return sl_cli_usage_error("info", "--samples and --res go with --speed");
  if (speed && classes_only)
    return sl_cli_usage_error("info", "--speed or --classes, not both");
  sl_config *cfg;
  if (sl_config_create(&cfg) != SL_OK) {
    fprintf(stderr, "sluice info: out of memory\n");
    return 1;
  }
  sl_status st = sl_config_set(cfg, "dataset.path", path);
  for (int i = 0; st == SL_OK && kv[i]; i += 2)
    st = sl_config_set(cfg, kv[i], kv[i + 1]);
  if (st != SL_OK) {
    int rc = sl_cli_usage_error("info", "%s", sl_config_errmsg(cfg));
    sl_config_destroy(cfg);
    return rc;
  }
  sl_dataset *ds;
  st = sl_dataset_open(&ds, cfg);
  sl_config_destroy(cfg);
  if (st != SL_OK) {
    fprintf(stderr, "sluice info: %s\n", sl_dataset_errmsg(ds));
    sl_dataset_close(ds);
    return 1;
  }
  if (classes_only) {
    print_classes(ds);
    sl_dataset_close(ds);
    return 0;
  }
  uint64_t n = sl_dataset_count(ds), total = 0, minb = UINT64_MAX, maxb = 0;
  uint64_t codecs[8] = {0}, gray = 0, rgb = 0, hist[NBUCKETS] = {0};
  uint64_t first_named = UINT64_MAX;
  unsigned minh = 65535, minw = 65535, maxh = 0, maxw = 0;
  /* The smallest and largest images by pixel count (the first of equals). */
  uint64_t small_px = UINT64_MAX, large_px = 0, small_i = 0, large_i = 0;
  unsigned small_w = 0, small_h = 0, large_w = 0, large_h = 0;
  for (uint64_t i = 0; i < n; i++) {
    sl_sample_meta m;
    const sl_sample_meta *e = &m;
    if (sl_dataset_info(ds, i, &m) != SL_OK) { /* i < count: cannot fail */
      fprintf(stderr, "sluice info: %s\n", sl_dataset_errmsg(ds));
      sl_dataset_close(ds);
      return 1;
    }
    if (e->name_bytes && first_named == UINT64_MAX)
      first_named = i;
    total += e->stored_bytes;
    minb = e->stored_bytes < minb ? e->stored_bytes : minb;
    maxb = e->stored_bytes > maxb ? e->stored_bytes : maxb;
    codecs[(unsigned)e->codec < 8 ? e->codec : 0]++;
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
    uint64_t px = (uint64_t)e->width * e->height;
    if (px < small_px)
      small_px = px, small_i = i, small_w = e->width, small_h = e->height;
    if (px > large_px)
      large_px = px, large_i = i, large_w = e->width, large_h = e->height;
  }
  char a[32], b[32], c[32], d[32], buf[4096];
  human(a, sizeof a, (double)sl_dataset_file_size(ds));
  printf("file:        %s\n", sl_url_shown(path, buf, sizeof buf));
  const char *layout = sl_dataset_entries(ds);
  bool foreign = strcmp(layout, "sluice") != 0;
  if (!foreign)
    printf("format:      %s, layout version %" PRIu32 "\n",
           sl_dataset_format(ds), sl_dataset_layout_version(ds));
  const char *fmt = sl_dataset_format(ds);
  bool wds = strcmp(fmt, "webdataset") == 0,
       folder = strcmp(fmt, "folder") == 0;
  if (wds)
    printf("format:      webdataset (tar shards; a sample is the members "
           "sharing a key)\n");
  struct stat sb;
  bool listed = folder && stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
  if (listed)
    printf("format:      folder (an image list: PATH LABEL lines, or "
           "im2rec's .lst;\n             paths from the list's folder)\n");
  else if (folder)
    printf("format:      folder (ImageFolder: class subfolders of image "
           "files)\n");
  else if (foreign && !wds)
    printf("format:      %s, entries %s (%s)\n", fmt, layout,
           strcmp(layout, "caffe") == 0 ? "Caffe Datums"
           : strcmp(layout, "pickle") == 0
               ? "each value a pickled (image bytes, label)"
           : strcmp(layout, "msgpack") == 0
               ? "each value msgpack [image bytes, label]"
           : strcmp(layout, "example") == 0
               ? "tf.train.Example records, in file order"
           : strcmp(layout, "irheader") == 0
               ? "image records with an IRHeader, in index or file order"
           : strcmp(layout, "array") ? "each value an image file"
                                     : "an h5py-style pixel array");
  const char *order = sl_dataset_sample_order(ds);
  if (foreign && !wds && order[0])
    printf("order:       samples %s\n", order);
  bool array = strcmp(layout, "array") == 0;
  if (wds || folder) {
    uint64_t sk = sl_dataset_skipped_entries(ds);
    if (!listed) /* a list names each file: none is skipped */
      printf("skipped:     %" PRIu64 " %s\n", sk,
             wds ? "runs of members without a .jpg/.jpeg/.png/.webp image"
                 : "image files sluice does not decode (bmp, ppm, pgm, tif)");
    printf("reads:       %s\n",
           wds ? "each sample's image member in place, by (offset, length) "
                 "from the tar\n             headers walked at open; no tar "
                 "call after open"
               : "each image file opened per read (pread or uring), indexed at "
                 "open\n             with its header's size and kind");
  }
  foreign = foreign && !wds && !folder;
  if (array) {
    printf("datasets:    %s\n",
           safe_name(sl_dataset_description(ds), buf, sizeof buf));
    printf("reads:       each sample's bytes by (offset, length) located at "
           "open, by mmap/pread;\n             no HDF5 call after open\n");
  }
  bool records =
      strcmp(layout, "example") == 0 || strcmp(layout, "irheader") == 0;
  if (records) {
    uint64_t sk = sl_dataset_skipped_entries(ds);
    if (sk)
      printf("skipped:     %" PRIu64 " record%s without image bytes "
             "(InsightFace's header and identity records)\n",
             sk, sk == 1 ? "" : "s");
    printf("reads:       each sample's image bytes by (offset, length) inside "
           "its record,\n             located at open (opening reads every "
           "record%s)\n",
           layout[0] == 'e' ? " and checks its CRCs" : "");
  }
  if (foreign && !array && !records) {
    uint64_t sk = sl_dataset_skipped_entries(ds),
             an = sl_dataset_annotated_count(ds);
    printf("skipped:     %" PRIu64 " entr%s that are not samples%s\n", sk,
           sk == 1 ? "y" : "ies",
           sk ? " (__keys__, __len__, num-samples, *.meta)" : "");
    printf("reads:       each sample's bytes by (offset, length) from an "
           "index built at open;\n             no LMDB call after open "
           "(opening reads every value: `sluice pack\n             --from` "
           "converts the file to sluice's layout, which opens without)\n");
    if (an)
      printf("annotated:   %" PRIu64 " SSD AnnotatedDatums (their boxes are "
             "not read)\n",
             an);
  }
  if (strcmp(layout, "sluice") != 0 && !array && !speed) {
    if (codecs[1] + codecs[7])
      printf("speed:       read in place, JPEG crops decode from the image's "
             "first row; `sluice\n             pack` writes the restart "
             "layout and DCT-scaled crops decode faster\n             "
             "(BENCHMARKS.md); `sluice info PATH --speed` measures it on this "
             "data\n");
    else
      printf("speed:       no JPEGs: packing would not make crops decode "
             "faster\n");
  }
  uint64_t nfiles = sl_dataset_file_count(ds);
  if (nfiles > 1)
    printf("file size:   %s in %" PRIu64 " files\n", a, nfiles);
  else
    printf("file size:   %s\n", a);
  sl_cache_info ci;
  if (sl_dataset_cache_info(ds, &ci) == SL_OK) {
    char used[32], bound[32];
    sl_format_bytes(ci.bytes, used, sizeof used);
    sl_format_bytes(ci.bound, bound, sizeof bound);
    printf("cache:       %s: %s of %s (io.cache_bytes) in %" PRIu64
           " objects; %" PRIu64 " of this dataset's %" PRIu64
           " shards cached\n",
           ci.dir, used, bound, ci.objects, ci.cached_files, ci.files);
  }
  printf("samples:     %" PRIu64 "\n", n);
  uint32_t k = sl_dataset_class_count(ds);
  printf("classes:     %" PRIu32 "%s", k, k ? ":" : "\n");
  for (uint32_t i = 0; i < k && i < SHOW_CLASSES; i++)
    printf(" %s%s", safe_name(sl_dataset_class_name(ds, i), buf, sizeof buf),
           i + 1 < k ? "," : "\n");
  if (k > SHOW_CLASSES)
    printf(" ... (%" PRIu32 " more: sluice info FILE --classes)\n",
           k - SHOW_CLASSES);
  uint32_t tw = sl_dataset_target_width(ds);
  if (tw)
    printf("targets:     %" PRIu32 " float%s per sample\n", tw,
           tw == 1 ? "" : "s");
  else
    printf("targets:     none\n");
  print_names(ds, first_named);
  if (n) {
    human(a, sizeof a, (double)total);
    human(b, sizeof b, (double)minb);
    human(c, sizeof c, (double)total / (double)n);
    human(d, sizeof d, (double)maxb);
    printf("payloads:    %s in all; per sample min %s, mean %s, max %s\n", a, b,
           c, d);
    printf("codecs:      jpeg %" PRIu64 ", png %" PRIu64 ", raw %" PRIu64,
           codecs[1] + codecs[7], codecs[2], codecs[3] + codecs[4] + codecs[5]);
    if (codecs[7])
      printf(" (jpeg with resolution levels %" PRIu64 ")", codecs[7]);
    if (codecs[6])
      printf(", webp %" PRIu64, codecs[6]);
    printf("%s\n", codecs[0] ? " (and damaged entries)" : "");
    if (codecs[4] + codecs[5])
      printf("raw layout:  CHW planes (Caffe): %" PRIu64 " in BGR order, "
             "%" PRIu64 " RGB or gray (dataset.channel_order)\n",
             codecs[5], codecs[4]);
    print_jpeg_layout(ds, n);
    print_levels(ds, total);
    printf("channels:    rgb %" PRIu64 ", gray %" PRIu64 "\n", rgb, gray);
    printf("image sizes: smallest %ux%u (sample %" PRIu64 "), largest %ux%u "
           "(sample %" PRIu64 ") (width x height, by pixels)\n",
           small_w, small_h, small_i, large_w, large_h, large_i);
    printf("             widths %u..%u, heights %u..%u\n", minw, maxw, minh,
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
  print_boxes(ds, n);
  const char *wr = sl_dataset_writer_settings(ds);
  printf("writer:      %s\n",
         *wr ? safe_name(wr, buf, sizeof buf) : "(not recorded)");
  int rc = speed ? sl_info_speed(ds, path, kv, samples, res) : 0;
  sl_dataset_close(ds);
  return rc;
}
