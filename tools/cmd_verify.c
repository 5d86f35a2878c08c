/* sluice verify FILE [--decode] [--threads N]: checks every record; names
 * each bad one. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/url_shown.h"
#include "sluice.h"
#include "tools/cli.h"
#include "tools/grow.h"
#include "tools/pack/pack_progress.h"

typedef struct verify_state {
  const char *path;
  uint64_t bad;
} verify_state;

/* One decoding thread's share: samples [first, end). Bad samples are kept
 * as lines and printed in index order after the threads finish. */
typedef struct decode_part {
  sl_dataset *ds;
  const char *path;
  uint64_t first, end;
  atomic_uint_fast64_t *done, *bytes;
  char **lines;
  size_t nlines, cap;
  int failed; /* out of memory */
  pthread_t thread;
} decode_part;

/* Replaces control characters, so that a damaged name stays on its line. */
static void printable(char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      *s = '?';
}

/* "  (from NAME)" for sample i into buf, or "" when it has none or it
 * cannot be read. At the line's end, so that "PATH: sample I: reason"
 * reads the same with or without names. */
static void name_part(sl_dataset *ds, uint64_t i, char *buf, size_t cap) {
  char name[SL_SAMPLE_NAME_MAX + 1];
  sl_sample_meta m;
  buf[0] = '\0';
  if (sl_dataset_info(ds, i, &m) != SL_OK || m.name_bytes == 0 ||
      sl_dataset_name(ds, i, name, sizeof name) != SL_OK || !name[0])
    return;
  printable(name);
  snprintf(buf, cap, "  (from %s)", name);
}

/* From the opening thread, during open. A damaged sample's index entry is
 * blanked, name included: its line has no name. */
static void on_bad(void *user, uint64_t i, const char *reason) {
  verify_state *v = user;
  v->bad++;
  fprintf(stderr, "%s: sample %" PRIu64 ": %s\n", v->path, i, reason);
}

/* Boxes reaching past their image's edge: warnings, not damage (COCO has
 * boxes a pixel or so past the edge; the loader clips every box to the
 * image and to its crop). The first WARN_BOXES are named, then counted. */
enum { WARN_BOXES = 10 };
typedef struct box_edges {
  uint64_t boxes, past, outside, samples;
} box_edges;

static void check_box_edges(sl_dataset *ds, const char *path, box_edges *e) {
  uint64_t n = sl_dataset_count(ds);
  for (uint64_t i = 0; i < n; i++) {
    sl_sample_meta m;
    const sl_box *b;
    uint32_t k = 0;
    if (sl_dataset_info(ds, i, &m) != SL_OK || m.codec == 0 ||
        sl_dataset_boxes(ds, i, &b, &k) != SL_OK)
      continue;
    e->boxes += k;
    bool any = false;
    for (uint32_t j = 0; j < k; j++) {
      float w = (float)m.width, h = (float)m.height;
      if (b[j].x0 >= 0 && b[j].y0 >= 0 && b[j].x1 <= w && b[j].y1 <= h)
        continue;
      bool out = b[j].x1 <= 0 || b[j].y1 <= 0 || b[j].x0 >= w || b[j].y0 >= h;
      if (e->past + e->outside < WARN_BOXES)
        fprintf(stderr,
                "%s: sample %" PRIu64 ": box %" PRIu32
                " (%g, %g, %g, %g) %s its %" PRIu32 "x%" PRIu32
                " image (a warning: the loader clips boxes to the image)\n",
                path, i, j, (double)b[j].x0, (double)b[j].y0, (double)b[j].x1,
                (double)b[j].y1,
                out ? "lies outside" : "reaches past the edge of", m.width,
                m.height);
      e->past += !out;
      e->outside += out;
      any = true;
    }
    e->samples += any;
  }
}

static void add_line(decode_part *p, const char *line) {
  char **l = sl_cli_grow(p->lines, &p->cap, p->nlines + 1, sizeof *l, 16);
  if (!l) {
    p->failed = 1;
    return;
  }
  p->lines = l;
  if (!(p->lines[p->nlines] = strdup(line)))
    p->failed = 1;
  else
    p->nlines++;
}

/* Why sample i failed to decode with status st, into why: the dataset's
 * message without its "PATH: sample I: " head. Another thread may fail
 * between our call and the copy, leaving its own message (which names its
 * sample): then decode again, and after a few tries say only the status. */
static void decode_reason(decode_part *p, uint64_t i, sl_status st, void *buf,
                          size_t cap, char *why, size_t why_cap) {
  char head[4200], msg[1200];
  int hn = snprintf(head, sizeof head, "%s: sample %" PRIu64, p->path, i);
  size_t len;
  for (int tries = 0; tries < 4; tries++) {
    sl_dataset_errmsg_copy(p->ds, msg, sizeof msg);
    if (hn > 0 && (size_t)hn < sizeof head && !strncmp(msg, head, (size_t)hn) &&
        (msg[hn] == ':' || msg[hn] == ' ')) {
      const char *r = msg + hn + (msg[hn] == ':');
      snprintf(why, why_cap, "%s", r + (*r == ' '));
      return;
    }
    if (sl_dataset_decode(p->ds, i, buf, cap, &len) == SL_OK)
      break; /* cannot happen for a file read-only since open */
  }
  snprintf(why, why_cap, "%s (%s)", sl_strerror(st), sl_status_name(st));
}

static void *decode_range(void *arg) {
  decode_part *p = arg;
  size_t cap = 0;
  uint8_t *buf = NULL;
  uint64_t i = p->first;
  for (; !p->failed && i < p->end; i++) {
    sl_sample_meta m;
    if (sl_dataset_info(p->ds, i, &m) != SL_OK) { /* i < count: cannot */
      p->failed = 1;
      break;
    }
    size_t need = (size_t)m.width * m.height * m.channels;
    if (m.codec != 0 && need > cap) { /* codec 0: reported at open */
      uint8_t *b = realloc(buf, need);
      if (!b) {
        p->failed = 1;
        break;
      }
      buf = b;
      cap = need;
    }
    size_t len;
    sl_status st;
    if (m.codec != 0 &&
        (st = sl_dataset_decode(p->ds, i, buf, cap, &len)) != SL_OK) {
      char line[10000], why[1200], named[SL_SAMPLE_NAME_MAX + 16];
      decode_reason(p, i, st, buf, cap, why, sizeof why);
      name_part(p->ds, i, named, sizeof named);
      snprintf(line, sizeof line, "%s: sample %" PRIu64 ": %s%s", p->path, i,
               why, named);
      add_line(p, line);
    }
    atomic_fetch_add(p->done, 1);
    atomic_fetch_add(p->bytes, m.stored_bytes);
  }
  /* A failed part still counts its samples, or the caller waits forever
   * for them; p->failed makes the run fail. */
  atomic_fetch_add(p->done, p->end - i);
  free(buf);
  return NULL;
}

/* Decodes every sample with threads threads; returns the bad count, or -1
 * when it could not run. */
static int64_t decode_all(sl_dataset *ds, const char *path, int threads,
                          int quiet) {
  uint64_t n = sl_dataset_count(ds);
  if ((uint64_t)threads > n)
    threads = n ? (int)n : 1;
  decode_part *parts = calloc((size_t)threads, sizeof *parts);
  atomic_uint_fast64_t done = 0, bytes = 0;
  if (!parts)
    return -1;
  int started = 0;
  for (int t = 0; t < threads; t++) {
    decode_part *p = &parts[t];
    p->ds = ds;
    p->path = path;
    p->first = n * (uint64_t)t / (uint64_t)threads;
    p->end = n * (uint64_t)(t + 1) / (uint64_t)threads;
    p->done = &done;
    p->bytes = &bytes;
    if (pthread_create(&p->thread, NULL, decode_range, p) != 0)
      break;
    started++;
  }
  sl_progress prog;
  sl_progress_init(&prog, n, "images",
                   quiet ? SL_PROGRESS_NONE : SL_PROGRESS_AUTO);
  while (started == threads && atomic_load(&done) < n) {
    struct timespec ts = {0, 100000000L};
    nanosleep(&ts, NULL);
    sl_progress_update(&prog, atomic_load(&done), atomic_load(&bytes), false);
  }
  for (int t = 0; t < started; t++)
    pthread_join(parts[t].thread, NULL);
  if (started == threads)
    sl_progress_update(&prog, atomic_load(&done), atomic_load(&bytes), true);
  sl_progress_end(&prog);
  int64_t bad = started == threads ? 0 : -1;
  for (int t = 0; t < started; t++) {
    for (size_t k = 0; k < parts[t].nlines; k++) {
      fprintf(stderr, "%s\n", parts[t].lines[k]);
      free(parts[t].lines[k]);
    }
    if (bad >= 0)
      bad += (int64_t)parts[t].nlines;
    if (parts[t].failed)
      bad = -1;
    free(parts[t].lines);
  }
  free(parts);
  return bad;
}

int sl_cmd_verify(int argc, char **argv) {
  const char *path = NULL;
  bool decode = false, quiet = false;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  long long threads = cpus > 0 ? (cpus > 256 ? 256 : cpus) : 1;
  const sl_cli_opt opts[] = {
      {.name = "--decode",
       .kind = SL_CLI_FLAG,
       .help = "also decode every image with the loader's own decoder and\n"
               "compare its size with the index",
       .dst = &decode},
      {.name = "--threads",
       .kind = SL_CLI_INT,
       .value = "N",
       .lo = 1,
       .hi = 256,
       .help = "decode threads (default: online CPUs)",
       .dst = &threads},
      {.name = "--quiet",
       .kind = SL_CLI_FLAG,
       .help = "no progress display",
       .dst = &quiet},
  };
  const sl_cli_spec spec = {
      .cmd = "verify",
      .head = "usage: sluice verify FILE [--decode] [--threads N] [--quiet]\n\n"
              "Checks every record's header and bounds; --decode also "
              "decodes every image\nwith the loader's own decoder (N "
              "threads, default: online CPUs) and compares\nits size with "
              "the index. Each bad sample is named (index, the image it was"
              "\npacked from when the file records it, key or offset, "
              "reason); the exit\nstatus is 1 if any is bad. Boxes are "
              "checked when the file is opened (a\nnon-finite or inverted "
              "box, or a class the file lacks, is damage); a box that\n"
              "reaches past its image's edge is a warning, counted (the "
              "loader clips it).\n\n",
      .column = 12,
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
      .pos = &path,
      .min_pos = 1,
      .max_pos = 1,
      .too_many = "one FILE only"};
  int rc = sl_cli_parse(&spec, argc, argv, NULL);
  if (rc >= 0)
    return rc;
  /* What is printed of the path: a URL without its credentials. */
  char shown[4096];
  const char *name = sl_url_shown(path, shown, sizeof shown);
  verify_state v = {name, 0};
  sl_dataset *ds;
  if (sl_dataset_open_verify(&ds, path, on_bad, &v) != SL_OK) {
    fprintf(stderr, "%s\n", sl_dataset_errmsg(ds));
    sl_dataset_close(ds);
    return 1;
  }
  uint64_t n = sl_dataset_count(ds);
  box_edges edges = {0};
  check_box_edges(ds, name, &edges);
  if (decode) {
    int64_t bad = decode_all(ds, name, (int)threads, quiet);
    if (bad < 0) {
      fprintf(stderr, "sluice verify: out of memory or no threads\n");
      sl_dataset_close(ds);
      return 1;
    }
    v.bad += (uint64_t)bad;
  }
  sl_dataset_close(ds);
  if (v.bad) {
    printf("%s: %" PRIu64 " of %" PRIu64 " samples are bad\n", name, v.bad, n);
    return 1;
  }
  printf("%s: %" PRIu64 " samples, all records in bounds%s", name, n,
         decode ? ", all images decode" : "");
  if (edges.boxes)
    printf("; %" PRIu64 " boxes, %" PRIu64 " reaching past and %" PRIu64
           " outside their image's edge in %" PRIu64
           " sample%s (warnings: clipped by the loader)",
           edges.boxes, edges.past, edges.outside, edges.samples,
           edges.samples == 1 ? "" : "s");
  printf("\n");
  return 0;
}
