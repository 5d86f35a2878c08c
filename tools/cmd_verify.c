/* sluice verify FILE [--decode] [--threads N]: checks every record; names
 * each bad one. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "formats/source.h"
#include "tools/cli.h"
#include "tools/pack_image.h"
#include "tools/pack_progress.h"

typedef struct verify_state {
  const char *path;
  uint64_t bad;
} verify_state;

/* One decoding thread's share: samples [first, end). Bad samples are kept
 * as lines and printed in index order after the threads finish. */
typedef struct decode_part {
  const sl_source *src;
  const char *path;
  uint64_t first, end;
  atomic_uint_fast64_t *done, *bytes;
  char **lines;
  size_t nlines, cap;
  int failed; /* out of memory */
  pthread_t thread;
} decode_part;

static void on_bad(void *user, uint64_t i, const char *reason) {
  verify_state *v = user;
  v->bad++;
  fprintf(stderr, "%s: sample %" PRIu64 ": %s\n", v->path, i, reason);
}

static void usage(FILE *f) {
  fprintf(f, "usage: sluice verify FILE [--decode] [--threads N] [--quiet]"
             "\n\n"
             "Checks every record's header and bounds; --decode also "
             "decodes every image\n(with N threads, default: online CPUs) "
             "and compares its size with the index.\nEach bad sample is "
             "named (index, key or offset, reason); the exit status is 1\n"
             "if any is bad.\n");
}

static void add_line(decode_part *p, const char *line) {
  if (p->nlines == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 16;
    char **l = realloc(p->lines, cap * sizeof *l);
    if (!l) {
      p->failed = 1;
      return;
    }
    p->lines = l;
    p->cap = cap;
  }
  if (!(p->lines[p->nlines] = strdup(line)))
    p->failed = 1;
  else
    p->nlines++;
}

static void *decode_range(void *arg) {
  decode_part *p = arg;
  sl_pack_codec *codec = sl_pack_codec_create();
  size_t cap = (size_t)sl_source_max_length(p->src) + 1;
  uint8_t *buf = malloc(cap);
  if (!codec || !buf)
    p->failed = 1;
  uint64_t i = p->first;
  for (; !p->failed && i < p->end; i++) {
    const sl_sample_info *e = sl_source_info(p->src, i);
    char line[768], why[256];
    if (e->codec != 0) { /* codec 0: reported at open */
      const uint8_t *d;
      size_t len;
      sl_err err = {0};
      if (sl_source_read(p->src, i, buf, cap, &d, &len, &err) != SL_OK) {
        add_line(p, err.msg);
      } else if (sl_pack_decode_check(codec, d, len, e->codec, e->height,
                                      e->width, e->channels, why, sizeof why)) {
        snprintf(line, sizeof line,
                 "%s: sample %" PRIu64 " (offset %" PRIu64 "): %s", p->path, i,
                 e->offset, why);
        add_line(p, line);
      }
    }
    atomic_fetch_add(p->done, 1);
    atomic_fetch_add(p->bytes, e->length);
  }
  /* A failed part still counts its samples, or the caller waits forever
   * for them; p->failed makes the run fail. */
  atomic_fetch_add(p->done, p->end - i);
  free(buf);
  sl_pack_codec_destroy(codec);
  return NULL;
}

/* Decodes every sample with threads threads; returns the bad count, or -1
 * when it could not run. */
static int64_t decode_all(const sl_source *src, const char *path, int threads,
                          int quiet) {
  uint64_t n = sl_source_count(src);
  if ((uint64_t)threads > n)
    threads = n ? (int)n : 1;
  decode_part *parts = calloc((size_t)threads, sizeof *parts);
  atomic_uint_fast64_t done = 0, bytes = 0;
  if (!parts)
    return -1;
  int started = 0;
  for (int t = 0; t < threads; t++) {
    decode_part *p = &parts[t];
    p->src = src;
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
  sl_progress_init(&prog, n, "images", quiet);
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
  int decode = 0, quiet = 0;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int threads = cpus > 0 ? (int)(cpus > 256 ? 256 : cpus) : 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--decode"))
      decode = 1;
    else if (!strcmp(argv[i], "--quiet"))
      quiet = 1;
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      long long t;
      if (!sl_cli_parse_int(argv[++i], 1, 256, &t))
        return sl_cli_usage_error("verify", "--threads: '%s' (1..256)",
                                  argv[i]);
      threads = (int)t;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
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
  if (sl_source_open_verify(&src, path, SL_FORMAT_AUTO, SL_SOURCE_PREAD, on_bad,
                            &v, &err) != SL_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  uint64_t n = sl_source_count(src);
  if (decode) {
    int64_t bad = decode_all(src, path, threads, quiet);
    if (bad < 0) {
      fprintf(stderr, "sluice verify: out of memory or no threads\n");
      sl_source_close(src);
      return 1;
    }
    v.bad += (uint64_t)bad;
  }
  sl_source_close(src);
  if (v.bad) {
    printf("%s: %" PRIu64 " of %" PRIu64 " samples are bad\n", path, v.bad, n);
    return 1;
  }
  printf("%s: %" PRIu64 " samples, all records in bounds%s\n", path, n,
         decode ? ", all images decode" : "");
  return 0;
}
