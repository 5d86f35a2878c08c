/* sluice extract FILE INDEX... [--out DIR] [--force]: writes samples' stored
 * bytes to files, to look at what `verify` or the loader named by index. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice.h"
#include "tools/cli.h"

/* At most this many INDEX arguments (each one index or a FIRST-LAST range). */
enum { k_max_ranges = 256 };
_Static_assert(k_max_ranges == 256, "the too_many message spells it out");

typedef struct range {
  uint64_t first, last; /* inclusive */
} range;

/* Damaged records are counted, not printed: `verify` is the report. */
static void count_bad(void *user, uint64_t index, const char *reason) {
  (void)index, (void)reason;
  ++*(uint64_t *)user;
}

/* Makes folder dir and its missing parents, as mkdir -p does. Returns 0, or
 * 1 after saying which folder could not be made. */
static int make_dirs(const char *dir) {
  char p[4096];
  size_t n = strlen(dir);
  if (n >= sizeof p) {
    fprintf(stderr, "sluice extract: %s: path too long\n", dir);
    return 1;
  }
  memcpy(p, dir, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (p[i] != '/' && p[i] != 0)
      continue;
    char c = p[i];
    p[i] = 0;
    struct stat sb;
    if (mkdir(p, 0777) != 0 &&
        !(errno == EEXIST && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode))) {
      fprintf(stderr, "sluice extract: cannot create folder %s: %s\n", p,
              errno == EEXIST ? "a file of that name exists" : strerror(errno));
      return 1;
    }
    p[i] = c;
  }
  return 0;
}

static int parse_range(const char *s, range *r) {
  unsigned long long a, b;
  char buf[64];
  const char *dash = strchr(s, '-');
  if (!dash)
    return sl_cli_parse_u64(s, &a) && (r->first = r->last = a, 1);
  size_t n = (size_t)(dash - s);
  if (n == 0 || n >= sizeof buf)
    return 0;
  memcpy(buf, s, n);
  buf[n] = '\0';
  if (!sl_cli_parse_u64(buf, &a) || !sl_cli_parse_u64(dash + 1, &b) || b < a)
    return 0;
  r->first = a;
  r->last = b;
  return 1;
}

static const char *extension(const sl_sample_meta *in) {
  switch (in->codec) {
  case SL_IMAGE_JPEG:
  case SL_IMAGE_JPEG_LEVELS: /* level 0, the full-size JPEG */
    return "jpg";
  case SL_IMAGE_PNG:
    return "png";
  case SL_IMAGE_WEBP:
    return "webp";
  default:
    return in->channels == 1 ? "pgm" : "ppm";
  }
}

static int write_all(int fd, const void *p, size_t n) {
  const uint8_t *b = p;
  while (n > 0) {
    ssize_t w = write(fd, b, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    b += w;
    n -= (size_t)w;
  }
  return 0;
}

/* s as a JSON string's contents: quote, backslash and control bytes
 * escaped; other bytes as they are (class names are UTF-8 when they came
 * from COCO, VOC or a folder's names). */
static void json_string(FILE *f, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20 || c == 0x7f)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
}

/* INDEX.boxes.json (at path) of sample i: its size and boxes, coordinates
 * printed with 9 significant digits (float32 round-trips). Returns 0, or
 * 1 after printing why not. */
static int write_boxes(sl_dataset *ds, uint64_t i, const sl_sample_meta *m,
                       const char *path, int force) {
  const sl_box *b = NULL;
  uint32_t n = 0;
  if (sl_dataset_boxes(ds, i, &b, &n) != SL_OK) {
    fprintf(stderr, "sluice extract: %s\n", sl_dataset_errmsg(ds));
    return 1;
  }
  int fd = open(
      path, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0644);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    fprintf(stderr, "sluice extract: %s: %s%s\n", path, strerror(errno),
            errno == EEXIST ? " (--force replaces it)" : "");
    if (fd >= 0)
      close(fd);
    return 1;
  }
  fprintf(f,
          "{\"index\": %" PRIu64 ", \"width\": %" PRIu32
          ", \"height\": %" PRIu32 ", \"boxes\": [",
          i, m->width, m->height);
  for (uint32_t k = 0; k < n; k++) {
    const char *cls = sl_dataset_class_name(ds, (uint32_t)b[k].label);
    fprintf(f,
            "%s\n  {\"xyxy\": [%.9g, %.9g, %.9g, %.9g], \"label\": %" PRId32
            ", \"class\": \"",
            k ? "," : "", (double)b[k].x0, (double)b[k].y0, (double)b[k].x1,
            (double)b[k].y1, b[k].label);
    json_string(f, cls ? cls : "");
    fprintf(f, "\", \"crowd\": %s, \"difficult\": %s}",
            b[k].flags & SL_BOX_CROWD ? "true" : "false",
            b[k].flags & SL_BOX_DIFFICULT ? "true" : "false");
  }
  fprintf(f, "%s]}\n", n ? "\n" : "");
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    fprintf(stderr, "sluice extract: %s: %s\n", path, strerror(errno));
    unlink(path);
    return 1;
  }
  return 0;
}

/* Writes sample i; returns 0, or 1 after printing why not. */
static int extract_one(sl_dataset *ds, const char *file, uint64_t i,
                       const char *dir, int force, uint8_t *buf, size_t cap) {
  sl_sample_meta m;
  const sl_sample_meta *in = &m;
  size_t len;
  char name[SL_SAMPLE_NAME_MAX + 1] = "";
  if (sl_dataset_info(ds, i, &m) != SL_OK ||
      sl_dataset_read(ds, i, buf, cap, &len) != SL_OK) {
    fprintf(stderr, "sluice extract: %s\n", sl_dataset_errmsg(ds));
    return 1;
  }
  if (m.name_bytes && sl_dataset_name(ds, i, name, sizeof name) != SL_OK) {
    /* the bytes are what was asked for: extract them without the name */
    fprintf(stderr, "sluice extract: %s (its name left out)\n",
            sl_dataset_errmsg(ds));
    name[0] = '\0';
  }
  const uint8_t *data = buf;
  uint8_t *hwc = NULL; /* planar raw, interleaved for the PNM */
  char path[4096], header[64] = "";
  const char *ext = extension(in);
  bool planar =
      in->codec == SL_IMAGE_RAW_CHW || in->codec == SL_IMAGE_RAW_CHW_BGR;
  if (in->codec == SL_IMAGE_RAW || planar) { /* a viewable PNM */
    if ((uint64_t)in->width * in->height * in->channels != len) {
      fprintf(stderr,
              "sluice extract: %s: sample %" PRIu64
              ": %zu bytes is not a %ux%ux%u array\n",
              file, i, len, in->width, in->height, in->channels);
      return 1;
    }
    snprintf(header, sizeof header, "P%c\n%u %u\n255\n",
             in->channels == 1 ? '5' : '6', in->width, in->height);
  }
  if (in->codec == SL_IMAGE_JPEG_LEVELS) {
    const uint8_t *jpg;
    size_t jl;
    if (!sl_image_level(buf, len, 0, &jpg, &jl, NULL, NULL)) {
      fprintf(stderr,
              "sluice extract: %s: sample %" PRIu64 ": damaged level record\n",
              file, i);
      return 1;
    }
    data = jpg;
    len = jl;
  }
  if (planar && in->channels == 3) { /* Caffe's CHW planes to RGB pixels */
    size_t plane = (size_t)in->width * in->height;
    if (!(hwc = malloc(len))) {
      fprintf(stderr, "sluice extract: no memory for %zu bytes\n", len);
      return 1;
    }
    bool bgr = in->codec == SL_IMAGE_RAW_CHW_BGR;
    for (size_t p = 0; p < plane; p++)
      for (size_t c = 0; c < 3; c++)
        hwc[p * 3 + c] = buf[(bgr ? 2 - c : c) * plane + p];
    data = hwc;
  }
  size_t dl = strlen(dir);
  const char *sep = dl && dir[dl - 1] == '/' ? "" : "/";
  if (snprintf(path, sizeof path, "%s%s%" PRIu64 ".%s", dir, sep, i, ext) >=
      (int)sizeof path) {
    fprintf(stderr, "sluice extract: %s: path too long\n", dir);
    free(hwc);
    return 1;
  }
  int fd = open(
      path, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0644);
  if (fd < 0) {
    fprintf(stderr, "sluice extract: %s: %s%s\n", path, strerror(errno),
            errno == EEXIST ? " (--force replaces it)" : "");
    free(hwc);
    return 1;
  }
  int bad = write_all(fd, header, strlen(header)) || write_all(fd, data, len);
  free(hwc);
  int saved = errno;
  if (close(fd) != 0 && !bad) {
    bad = 1;
    saved = errno;
  }
  if (bad) {
    fprintf(stderr, "sluice extract: %s: %s\n", path, strerror(saved));
    unlink(path);
    return 1;
  }
  char bpath[4200] = "";
  if (sl_dataset_max_boxes(ds) > 0) {
    snprintf(bpath, sizeof bpath, "%s%s%" PRIu64 ".boxes.json", dir, sep, i);
    if (write_boxes(ds, i, in, bpath, force))
      return 1;
  }
  const char *cls =
      in->label >= 0 ? sl_dataset_class_name(ds, (uint32_t)in->label) : NULL;
  for (char *c = name; *c; c++) /* a damaged name stays on one line */
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      *c = '?';
  printf("%" PRIu64 "\tlabel %" PRId32 "\t%s\t%" PRIu32 "x%" PRIu32 "x%" PRIu32
         "\t%zu bytes\t%s%s%s%s",
         i, in->label, cls ? cls : "-", in->width, in->height, in->channels,
         len, path, *name ? "  (from " : "", name, *name ? ")" : "");
  if (bpath[0])
    printf("\t%" PRIu32 " box%s: %s", in->box_count,
           in->box_count == 1 ? "" : "es", bpath);
  printf("\n");
  return 0;
}

int sl_cmd_extract(int argc, char **argv) {
  const char *dir = ".";
  bool force = false;
  /* FILE, then the INDEX arguments. */
  const char *pos[1 + k_max_ranges];
  const sl_cli_opt opts[] = {
      {.name = "--out",
       .kind = SL_CLI_STRING,
       .value = "DIR",
       .needs = "a directory",
       .help = "where the files go (default: the current directory;\n"
               "made, with its parents, if missing)",
       .dst = &dir},
      {.name = "--force",
       .kind = SL_CLI_FLAG,
       .help = "replace existing files (default: keep them)",
       .dst = &force},
  };
  const sl_cli_spec spec = {
      .cmd = "extract",
      .head =
          "usage: sluice extract FILE INDEX... [--out DIR] [--force]\n\n"
          "Writes each sample's stored bytes to DIR (default: the current "
          "directory;\nmade, with its parents, if missing) as INDEX.jpg, "
          "INDEX.png or INDEX.webp,\nand a raw array as INDEX.ppm (RGB) or "
          "INDEX.pgm (gray), and prints index,\nlabel, class, size and file "
          "for each (and the image it was packed from, when\nthe file "
          "records it). INDEX is a sample index or an inclusive range "
          "FIRST-LAST.\nExisting files are kept unless --force is given; "
          "every index is checked\nbefore anything is written. Samples "
          "with damaged records are refused; the\nothers of such a file "
          "can still be extracted.\n"
          "A file with boxes also gets INDEX.boxes.json beside each image: "
          "its size\nand its boxes as {\"xyxy\": [x0, y0, x1, y1], "
          "\"label\", \"class\", \"crowd\",\n\"difficult\"} in the "
          "stored image's pixels (an empty list for a sample\nwithout "
          "any).\n\n",
      .column = 10,
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
      .pos = pos,
      .min_pos = 2,
      .max_pos = 1 + k_max_ranges,
      .too_many = "more than 256 INDEX arguments"};
  int npos;
  int rc = sl_cli_parse(&spec, argc, argv, &npos);
  if (rc >= 0)
    return rc;
  const char *file = pos[0];
  int nranges = npos - 1;
  range ranges[k_max_ranges];
  for (int i = 0; i < nranges; i++)
    if (!parse_range(pos[1 + i], &ranges[i]))
      return sl_cli_usage_error(
          "extract", "'%s' is not an index or a FIRST-LAST range", pos[1 + i]);
  /* Verify mode, so that a file with a damaged record still gives up its
   * other samples (a plain open refuses the whole file). */
  sl_dataset *ds;
  uint64_t nbad = 0;
  if (sl_dataset_open_verify(&ds, file, count_bad, &nbad) != SL_OK) {
    fprintf(stderr, "sluice extract: %s\n", sl_dataset_errmsg(ds));
    sl_dataset_close(ds);
    return 1;
  }
  uint64_t n = sl_dataset_count(ds);
  for (int r = 0; r < nranges; r++) {
    if (ranges[r].last >= n) {
      fprintf(stderr,
              "sluice extract: %s has %" PRIu64 " samples (0..%" PRIu64
              "): index %" PRIu64 " is out of range; nothing written\n",
              file, n, n ? n - 1 : 0, ranges[r].last);
      sl_dataset_close(ds);
      return 1;
    }
    for (uint64_t i = ranges[r].first; nbad && i <= ranges[r].last; i++) {
      sl_sample_meta m;
      if (sl_dataset_info(ds, i, &m) == SL_OK && m.codec == 0) { /* unusable */
        fprintf(stderr,
                "sluice extract: %s: sample %" PRIu64
                " has a damaged record (`sluice verify` says why); nothing "
                "written\n",
                file, i);
        sl_dataset_close(ds);
        return 1;
      }
    }
  }
  /* Every index is good: now the folder may be made. */
  if (make_dirs(dir)) {
    sl_dataset_close(ds);
    return 1;
  }
  size_t cap = (size_t)sl_dataset_max_stored_bytes(ds);
  uint8_t *buf = malloc(cap ? cap : 1);
  int failed = !buf;
  if (!buf)
    fprintf(stderr, "sluice extract: out of memory for %zu bytes\n", cap);
  for (int r = 0; r < nranges && !failed; r++)
    for (uint64_t i = ranges[r].first; i <= ranges[r].last && !failed; i++)
      failed = extract_one(ds, file, i, dir, force, buf, cap);
  free(buf);
  sl_dataset_close(ds);
  return failed;
}
