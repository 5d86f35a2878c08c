/* sluice pack SRC OUT: image folder (or list) → LMDB or HDF5 dataset file.
 *
 * Order of work: check options and OUT, list inputs, optionally shuffle,
 * then workers transcode (tools/pack/pack_pool.c) while this thread appends the
 * results in input order to an sl_writer, which gives the file its name
 * only at the end. SIGINT/SIGTERM/SIGHUP stop the work and discard what was
 * written; see sluice.h's "Writing datasets" for SIGKILL. The workers put
 * JPEGs into the restart layout themselves (sl_transcoder), so the writer
 * stores them as they are. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/safe_text.h"
#include "sluice.h"
#include "tools/cli.h"
#include "tools/pack/pack_detect.h"
#include "tools/pack/pack_out.h"
#include "tools/pack/pack_pool.h"
#include "tools/pack/pack_progress.h"
#include "tools/pack/pack_scan.h"

/* SIGINT, SIGTERM and SIGHUP are blocked in every thread while packing (the
 * workers inherit the mask) and polled by the writing thread between
 * samples. With no handler there is no global flag, nothing interrupts
 * liblmdb or HDF5 with EINTR, and a signal sent to the process (Ctrl-C,
 * kill) stays pending until it is seen, whichever thread the kernel would
 * have chosen (a handler may run late: ThreadSanitizer delays them until
 * the thread next enters its runtime, after the pack could be done). A signal
 * sent to one worker thread alone (tgkill) stays pending on that thread and
 * is not seen. A signal the caller set to be ignored (nohup) stays ignored:
 * blocking it would keep it pending. */
/* A line to stderr with what it names from files (photo paths, reasons
 * holding them) made safe: no control character taken from a file is
 * printed (common/safe_text.h); the final newline is kept. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  char raw[2048], safe[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  size_t len = n < 0 ? 0 : (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1;
  bool nl = len > 0 && raw[len - 1] == '\n';
  sl_safe_text(safe, sizeof safe, raw, len - nl);
  fprintf(stderr, "%s%s", safe, nl ? "\n" : "");
}

typedef struct stop_signals {
  sigset_t set, old;
} stop_signals;

static const int k_stop_signals[3] = {SIGINT, SIGTERM, SIGHUP};

static int stop_signals_block(stop_signals *st) {
  sigemptyset(&st->set);
  for (int k = 0; k < 3; k++) {
    struct sigaction now;
    if (sigaction(k_stop_signals[k], NULL, &now) != 0)
      return errno;
    if (now.sa_handler != SIG_IGN)
      sigaddset(&st->set, k_stop_signals[k]);
  }
  return pthread_sigmask(SIG_BLOCK, &st->set, &st->old);
}

/* The stop signal that is pending, or 0. (sigpending fails only for a bad
 * pointer.) */
static int stop_signal_pending(const stop_signals *st) {
  sigset_t pending;
  if (sigpending(&pending) != 0)
    return 0;
  for (int k = 0; k < 3; k++)
    if (sigismember(&st->set, k_stop_signals[k]) &&
        sigismember(&pending, k_stop_signals[k]))
      return k_stop_signals[k];
  return 0;
}

/* Takes the pending stop signals (they were answered) and restores the mask,
 * so that unblocking does not kill the process after it has cleaned up.
 * Restoring cannot fail with a mask pthread_sigmask gave us. */
static void stop_signals_restore(stop_signals *st) {
  const struct timespec now = {0, 0};
  while (stop_signal_pending(st) && sigtimedwait(&st->set, NULL, &now) > 0) {
  }
  (void)pthread_sigmask(SIG_SETMASK, &st->old, NULL);
}

typedef struct pack_args {
  const char *src, *out, *list;
  const char *coco;  /* --coco INSTANCES.json: src is the images folder */
  bool voc;          /* --voc: src is the VOCdevkit year folder */
  const char *split; /* --split NAME (VOC) */
  const char *fmt;   /* "lmdb" or "hdf5" */
  sl_pack_opts img;
  bool shuffle, strict, force;
  sl_progress_mode progress;
  uint64_t seed;
  int threads;
  uint32_t shards; /* --shards N: OUT a folder of N shards; 0: one file */
} pack_args;

typedef struct pack_stats {
  uint64_t packed, kept, rewritten, reencoded, bytes_in, bytes_out;
  uint64_t boxes;      /* --coco/--voc: boxes stored */
  sl_pack_notes skips; /* what was not packed, and why */
} pack_stats;

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* The format OUT's name implies (what sl_writer_create picks too), or NULL. */
static const char *format_for(const char *path) {
  if (ends_with(path, ".lmdb") || ends_with(path, ".mdb"))
    return "lmdb";
  if (ends_with(path, ".h5") || ends_with(path, ".hdf5"))
    return "hdf5";
  return NULL;
}

/* "1/2,3/4" → bits m - 1 of the scales m/8; "none" → 0. */
static int parse_levels(const char *s, unsigned *mask) {
  *mask = 0;
  if (!strcmp(s, "none"))
    return 0;
  while (*s) {
    char *end;
    long num = strtol(s, &end, 10), den;
    if (end == s || *end != '/')
      return -1;
    s = end + 1;
    den = strtol(s, &end, 10);
    if (end == s || num < 1 || den < 2 || den > 8 || 8 % den || num >= den)
      return -1;
    *mask |= 1u << (num * (8 / den) - 1);
    s = end;
    if (*s == ',')
      s++;
    else if (*s)
      return -1;
  }
  return *mask && __builtin_popcount(*mask) <= 3 ? 0 : -1;
}

static int parse_levels_arg(const char *arg, void *dst) {
  return parse_levels(arg, dst) == 0;
}

/* --shuffle SEED: the seed, and that there is one. */
static int parse_shuffle(const char *arg, void *dst) {
  pack_args *a = dst;
  unsigned long long seed;
  if (!sl_cli_parse_u64(arg, &seed))
    return 0;
  a->seed = seed;
  a->shuffle = true;
  return 1;
}

static const char *const k_formats[] = {"lmdb", "hdf5", NULL};
/* In sl_progress_mode's order. */
static const char *const k_progress[] = {"auto", "lines", "none", NULL};
_Static_assert(SL_PROGRESS_AUTO == 0 && SL_PROGRESS_LINES == 1 &&
                   SL_PROGRESS_NONE == 2,
               "k_progress follows sl_progress_mode");

/* Returns -1 to go on, 0 after --help, 2 after a usage error. */
static int parse_args(int argc, char **argv, pack_args *a) {
  memset(a, 0, sizeof *a);
  a->img.quality = 90;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  long long threads = cpus > 0 ? (cpus > 256 ? 256 : cpus) : 1;
  long long max_side = 0, quality = 90, shards = 0;
  int fmt = -1, progress = SL_PROGRESS_AUTO;
  bool quiet = false;
  const char *pos[2];
  const sl_cli_opt opts[] = {
      {.name = "--list",
       .kind = SL_CLI_STRING,
       .value = "FILE",
       .needs = "a file",
       .help = "'relative/path label' lines instead of class folders",
       .dst = &a->list},
      {.name = "--coco",
       .kind = SL_CLI_STRING,
       .value = "JSON",
       .needs = "a COCO instances file",
       .help = "a COCO instances file: its images (under IMAGES_DIR) with\n"
               "their boxes; classes = categories in id order; label -1",
       .dst = &a->coco},
      {.name = "--voc",
       .kind = SL_CLI_FLAG,
       .help = "SRC is a VOCdevkit year folder (VOC2007): JPEGImages/ with\n"
               "Annotations/*.xml's boxes; classes = VOC's 20 (or the\n"
               "names found, sorted); label -1",
       .dst = &a->voc},
      {.name = "--split",
       .kind = SL_CLI_STRING,
       .value = "NAME",
       .needs = "a split name",
       .help = "with --voc: only ImageSets/Main/NAME.txt's images\n"
               "(--coco/--voc store pixels as the files hold them, without\n"
               "EXIF rotation, as the boxes were drawn; --max-side scales\n"
               "the boxes with the image)",
       .dst = &a->split},
      {.name = "--format",
       .kind = SL_CLI_ENUM,
       .value = "F",
       .choices = k_formats,
       .help = "lmdb | hdf5 (default: from OUT's extension, .lmdb/.h5)",
       .dst = &fmt},
      {.name = "--max-side",
       .kind = SL_CLI_INT,
       .value = "N",
       .lo = 1,
       .hi = 65535,
       .help = "resize images whose longer side exceeds N (default: none)",
       .dst = &max_side},
      {.name = "--quality",
       .kind = SL_CLI_INT,
       .value = "Q",
       .lo = 1,
       .hi = 100,
       .help = "JPEG quality of re-encoded images, 1-100 (default 90)",
       .dst = &quality},
      {.name = "--reencode",
       .kind = SL_CLI_FLAG,
       .help = "re-encode every image (default: rewrite JPEGs that need no\n"
               "change losslessly into sluice's restart layout)",
       .dst = &a->img.reencode},
      {.name = "--keep-jpeg",
       .kind = SL_CLI_FLAG,
       .help = "store JPEGs that need no change byte for byte (packs\n"
               "faster; crops of them decode slower)",
       .dst = &a->img.keep_jpeg},
      {.name = "--levels",
       .kind = SL_CLI_CUSTOM,
       .value = "L",
       .needs = "scales below 1 in eighths, like 1/2 or 1/2,3/4 (at most 3), "
                "or none",
       .help = "also store each JPEG at smaller sizes, L = scales like\n"
               "1/2 or 1/2,3/4 (eighths, at most 3; 'none'), so low-\n"
               "resolution crops decode fewer bits (default: none)",
       .dst = &a->img.levels,
       .parse = parse_levels_arg},
      {.name = "--shuffle",
       .kind = SL_CLI_CUSTOM,
       .value = "SEED",
       .needs = "an integer seed",
       .help = "store the samples in a random order fixed by SEED",
       .dst = a,
       .parse = parse_shuffle},
      {.name = "--threads",
       .kind = SL_CLI_INT,
       .value = "N",
       .lo = 1,
       .hi = 256,
       .help = "decode/encode threads (default: online CPUs)",
       .dst = &threads},
      {.name = "--strict",
       .kind = SL_CLI_FLAG,
       .help = "fail on the first unreadable image instead of skipping it",
       .dst = &a->strict},
      {.name = "--force",
       .kind = SL_CLI_FLAG,
       .help = "replace OUT if it exists",
       .dst = &a->force},
      {.name = "--shards",
       .kind = SL_CLI_INT,
       .value = "N",
       .lo = 1,
       .hi = 100000,
       .help = "OUT is a folder of N shards (part-00000.lmdb, ...; --format\n"
               "picks lmdb, the default, or hdf5) and the sluice.index that\n"
               "makes them one dataset; the same shards for any --threads",
       .dst = &shards},
      {.name = "--quiet",
       .kind = SL_CLI_FLAG,
       .help = "no progress display (--progress none)",
       .dst = &quiet},
      {.name = "--progress",
       .kind = SL_CLI_ENUM,
       .value = "M",
       .choices = k_progress,
       .help = "auto (a bar on a terminal), lines (a 'progress DONE TOTAL\n"
               "BYTES' line every 0.25 s, for programs) or none",
       .dst = &progress},
  };
  const sl_cli_spec spec = {
      .cmd = "pack",
      .head = "usage: sluice pack SRC OUT [options]\n"
              "       sluice pack --coco INSTANCES.json IMAGES_DIR OUT "
              "[options]\n"
              "       sluice pack --voc VOCDIR OUT [--split NAME] [options]\n"
              "       sluice pack --from FILE OUT [--set KEY=VALUE]... (any "
              "dataset sluice\n"
              "                   reads, in sluice's layout: sluice pack "
              "--from x --help)\n\n"
              "Packs the images under SRC into one LMDB or HDF5 file OUT.\n"
              "SRC is a folder of class subfolders (labels = sorted folder "
              "names),\nor the root that --list paths are relative to.\n\n",
      .tail = "\nSkipped images are listed in OUT.skipped.txt. The same "
              "inputs and options\ngive a byte-identical OUT for any "
              "--threads.\n",
      .column = 17,
      .opts = opts,
      .nopts = sizeof opts / sizeof opts[0],
      .pos = pos,
      .min_pos = 2,
      .max_pos = 2,
      .too_many = "SRC and OUT only (two arguments)"};
  int rc = sl_cli_parse(&spec, argc, argv, NULL);
  if (rc >= 0)
    return rc;
  a->img.max_side = (int)max_side;
  a->img.quality = (int)quality;
  a->threads = (int)threads;
  a->shards = (uint32_t)shards;
  a->fmt = fmt >= 0 ? k_formats[fmt] : NULL;
  /* --quiet wins over any --progress, wherever each was given. */
  a->progress = quiet ? SL_PROGRESS_NONE : (sl_progress_mode)progress;
  if ((a->coco != NULL) + a->voc + (a->list != NULL) > 1)
    return sl_cli_usage_error("pack", "--coco, --voc and --list exclude "
                                      "each other");
  if (a->split && !a->voc)
    return sl_cli_usage_error("pack", "--split is for --voc");
  /* The boxes were drawn on the pixels as stored. */
  a->img.keep_orientation = a->coco || a->voc;
  if (a->img.levels && a->img.keep_jpeg)
    return sl_cli_usage_error("pack", "--levels and --keep-jpeg exclude "
                                      "each other");
  if (a->img.reencode && a->img.keep_jpeg)
    return sl_cli_usage_error("pack", "--reencode and --keep-jpeg exclude "
                                      "each other");
  a->src = pos[0];
  a->out = pos[1];
  if (!a->fmt)
    a->fmt = a->shards ? "lmdb" : format_for(a->out);
  if (!a->fmt)
    return sl_cli_usage_error("pack",
                              "cannot tell the format of '%s': name "
                              "it .lmdb or .h5, or give --format",
                              a->out);
  return -1;
}

/* OUT.skipped.txt, written atomically; removed when nothing was skipped. */
static int write_report(const pack_args *a, const pack_stats *s, char *path,
                        size_t cap) {
  snprintf(path, cap, "%s.skipped.txt", a->out);
  if (s->skips.n == 0) {
    if (unlink(path) != 0 && errno != ENOENT)
      say("sluice pack: cannot remove old %s: %s\n", path, strerror(errno));
    return 0;
  }
  char tmp[PATH_MAX + 32];
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f)
    return -1;
  fprintf(f, "# sluice pack: %zu input(s) skipped; path<TAB>reason\n",
          s->skips.n);
  for (size_t i = 0; i < s->skips.n; i++)
    fprintf(f, "%s\t%s\n", s->skips.v[i].path, s->skips.v[i].reason);
  int bad = ferror(f) != 0;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    unlink(tmp);
    return -1;
  }
  return 0;
}

/* --max-side resized the image: its boxes go with it (the stored pixels'
 * coordinates, scaled by the output over the input size per axis). */
static void scale_boxes(sl_pack_item *it, const sl_pack_result *r) {
  if (!it->nboxes || !r->src_width || !r->src_height ||
      (r->width == r->src_width && r->height == r->src_height))
    return;
  double sx = (double)r->width / r->src_width,
         sy = (double)r->height / r->src_height;
  for (uint32_t k = 0; k < it->nboxes; k++) {
    sl_box *b = &it->boxes[k];
    b->x0 = (float)(b->x0 * sx);
    b->x1 = (float)(b->x1 * sx);
    b->y0 = (float)(b->y0 * sy);
    b->y1 = (float)(b->y1 * sy);
  }
}

/* Takes results in order and writes them. Returns 0, 1 (failed), 130
 * (interrupted). */
static int run(const pack_args *a, const sl_pack_inputs *in, sl_pack_out *out,
               pack_stats *s, const stop_signals *st, int *stopped_by) {
  char msg[512];
  sl_pack_pool *pool;
  if (sl_pack_pool_start(&pool, in, &a->img, a->threads, msg, sizeof msg)) {
    say("sluice pack: %s\n", msg);
    return 1;
  }
  if (a->progress != SL_PROGRESS_NONE) /* the work starts now (tests wait
                                          for this line) */
    say("sluice pack: %zu images, %" PRIu32 " classes -> %s (%s), %d "
        "threads\n",
        in->n, in->nclasses, a->out, a->fmt, a->threads);
  sl_progress prog;
  sl_progress_init(&prog, in->n, "images", a->progress);
  int rc = 0;
  for (size_t i = 0; i < in->n && rc == 0;) {
    sl_pack_result r;
    size_t in_bytes;
    if ((*stopped_by = stop_signal_pending(st)) != 0) {
      rc = 130;
      break;
    }
    if (!sl_pack_pool_next(pool, &r, &in_bytes, 100)) {
      sl_progress_update(&prog, i, s->bytes_in, false);
      continue;
    }
    s->bytes_in += in_bytes;
    if (!r.data) {
      if (r.no_memory) { /* the machine's fault, not the input's: stop */
        sl_progress_end(&prog);
        say("sluice pack: %s: %s (nothing written)\n", in->items[i].path,
            r.reason);
        rc = 1;
      } else if (a->strict) {
        sl_progress_end(&prog);
        say("sluice pack: %s: %s (--strict: nothing written)\n",
            in->items[i].path, r.reason);
        rc = 1;
      } else if (sl_pack_notes_add(&s->skips, in->items[i].path, r.reason)) {
        say("sluice pack: out of memory\n");
        rc = 1;
      }
    } else if (in->items[i].want_w && (r.src_width != in->items[i].want_w ||
                                       r.src_height != in->items[i].want_h)) {
      /* The boxes would not fit the pixels: skip, as a bad image is. */
      char why[160];
      snprintf(why, sizeof why,
               "the annotation says %" PRIu32 "x%" PRIu32
               " but the image is %" PRIu32 "x%" PRIu32,
               in->items[i].want_w, in->items[i].want_h, r.src_width,
               r.src_height);
      sl_pack_result_free(&r);
      if (a->strict) {
        sl_progress_end(&prog);
        say("sluice pack: %s: %s (--strict: nothing written)\n",
            in->items[i].path, why);
        rc = 1;
      } else if (sl_pack_notes_add(&s->skips, in->items[i].path, why)) {
        say("sluice pack: out of memory\n");
        rc = 1;
      }
    } else {
      sl_pack_item *it = &in->items[i];
      scale_boxes(it, &r);
      sl_writer *w = sl_pack_out_writer(out, i, msg, sizeof msg);
      if (!w) {
        sl_progress_end(&prog);
        say("sluice pack: %s\n", msg);
        rc = 1;
      } else if (sl_writer_add_annotated(w, r.data, r.len, it->label,
                                         it->targets, it->path + it->name_off,
                                         it->boxes, it->nboxes) != SL_OK) {
        sl_progress_end(&prog);
        say("sluice pack: %s\n", sl_writer_errmsg(w));
        rc = 1;
      } else {
        s->packed++;
        s->boxes += it->nboxes;
        s->bytes_out += r.len;
        s->reencoded += r.reencoded;
        s->rewritten += r.rewritten;
        s->kept += !r.reencoded && !r.rewritten;
      }
      sl_pack_result_free(&r);
    }
    i++;
    sl_progress_update(&prog, i, s->bytes_in, i == in->n);
  }
  sl_progress_end(&prog);
  sl_pack_pool_stop(pool);
  if (rc == 0 && (*stopped_by = stop_signal_pending(st)) != 0)
    rc = 130;
  return rc;
}

/* Files reached under two names (symlinks) are packed under each: said,
 * since the same photo then carries two labels or counts twice. */
static void warn_twice(const sl_pack_inputs *in) {
  enum { k_show = 20 };
  for (size_t i = 0; i < in->twice.n && i < k_show; i++)
    say("sluice pack: warning: %s is %s\n", in->twice.v[i].path,
        in->twice.v[i].reason);
  if (in->twice.n > k_show)
    say("sluice pack: warning: %zu more files reached under a second "
        "name (symlinks?)\n",
        in->twice.n - k_show);
}

/* Class folders without an image still take a label: named in the
 * summary, so a model's output count is not a surprise. */
static void say_empty_classes(const sl_pack_inputs *in) {
  if (in->nclasses == 0)
    return;
  uint8_t *has = calloc(in->nclasses, 1);
  if (!has)
    return;
  for (size_t i = 0; i < in->n; i++)
    if (in->items[i].label >= 0 && (uint32_t)in->items[i].label < in->nclasses)
      has[in->items[i].label] = 1;
  uint32_t nempty = 0;
  for (uint32_t c = 0; c < in->nclasses; c++)
    nempty += !has[c];
  if (nempty) {
    printf("note: %" PRIu32 " class folder%s without images still take%s a "
           "label:",
           nempty, nempty == 1 ? "" : "s", nempty == 1 ? "s" : "");
    for (uint32_t c = 0, shown = 0; c < in->nclasses && shown < 20; c++)
      if (!has[c]) {
        printf(" %s (label %" PRIu32 ")", in->classes[c], c);
        shown++;
      }
    printf("%s\n", nempty > 20 ? " ..." : "");
  }
  free(has);
}

static int pack(const pack_args *a) {
  struct stat sb;
  if (!a->force && lstat(a->out, &sb) == 0) {
    say("sluice pack: %s exists (use --force to replace it)\n", a->out);
    return 1;
  }
  double t0 = sl_now();
  sl_pack_inputs in;
  char msg[1024], detect_ids[SL_SETTINGS_MAX + 1] = "";
  int scanned =
      a->coco  ? sl_pack_scan_coco(&in, a->coco, a->src, detect_ids,
                                   sizeof detect_ids - 400, msg, sizeof msg)
      : a->voc ? sl_pack_scan_voc(&in, a->src, a->split, detect_ids,
                                  sizeof detect_ids - 400, msg, sizeof msg)
               : sl_pack_scan(&in, a->src, a->list, msg, sizeof msg);
  if (scanned) {
    say("sluice pack: %s\n", msg);
    sl_pack_inputs_free(&in);
    return 1;
  }
  if (in.n == 0) {
    if (in.skipped.n)
      say("sluice pack: no images found under %s (%zu skipped, first: %s: "
          "%s)\n",
          a->src, in.skipped.n, in.skipped.v[0].path, in.skipped.v[0].reason);
    else
      say("sluice pack: no images found under %s\n", a->src);
    sl_pack_inputs_free(&in);
    return 1;
  }
  warn_twice(&in);
  if (a->shuffle)
    sl_pack_shuffle(&in, a->seed);
  stop_signals st;
  int rc_mask = stop_signals_block(&st);
  if (rc_mask != 0) {
    say("sluice pack: blocking stop signals: %s\n", strerror(rc_mask));
    sl_pack_inputs_free(&in);
    return 1;
  }
  int stopped_by = 0;
  sl_pack_out *out = NULL;
  pack_stats s;
  memset(&s, 0, sizeof s);
  int rc = 0;
  /* What the scan found but did not take goes in the skip report too. */
  for (size_t i = 0; rc == 0 && i < in.skipped.n; i++)
    if (sl_pack_notes_add(&s.skips, in.skipped.v[i].path,
                          in.skipped.v[i].reason)) {
      say("sluice pack: out of memory\n");
      rc = 1;
    }
  /* Longer than the writer takes (SL_SETTINGS_MAX), cut below. */
  char settings[SL_SETTINGS_MAX + sizeof detect_ids + 512];
  char seed[32] = "none";
  if (a->shuffle)
    snprintf(seed, sizeof seed, "%" PRIu64, a->seed);
  char levels[48] = "none";
  for (int m = 7, n = 0; m >= 1; m--)
    if (a->img.levels & (1u << (m - 1)))
      n += snprintf(levels + n, sizeof levels - (size_t)n, "%s%d/8",
                    n ? "," : "", m);
  snprintf(settings, sizeof settings,
           "sluice %s pack max_side=%d "
           "quality=%d reencode=%d keep_jpeg=%d levels=%s shuffle=%s "
           "input=%s%s%s%s%s",
           sl_version_string(), a->img.max_side, a->img.quality,
           a->img.reencode, a->img.keep_jpeg, levels, seed,
           a->coco   ? "coco"
           : a->voc  ? "voc"
           : a->list ? "list"
                     : "folders",
           a->split ? " voc_split=" : "", a->split ? a->split : "",
           detect_ids[0] ? " " : "", detect_ids);
  settings[SL_SETTINGS_MAX] = '\0';
  sl_writer_options wo;
  memset(&wo, 0, sizeof wo);
  wo.format = a->fmt;
  wo.target_width = in.target_width;
  wo.keep_jpeg = 1; /* the workers made every JPEG what it must be */
  wo.levels = a->img.levels;
  wo.replace = a->force;
  wo.settings = settings;
  if (rc == 0 && sl_pack_out_open(&out, a->out, a->shards, in.n, &wo,
                                  (const char *const *)in.classes, in.nclasses,
                                  msg, sizeof msg) != 0) {
    say("sluice pack: %s\n", msg);
    rc = 1;
  }
  if (rc == 0)
    rc = run(a, &in, out, &s, &st, &stopped_by);
  if (rc == 0 && s.packed == 0) {
    say("sluice pack: none of the %zu images could be packed "
        "(first: %s: %s)\n",
        in.n, s.skips.n ? s.skips.v[0].path : "?",
        s.skips.n ? s.skips.v[0].reason : "?");
    rc = 1;
  }
  if (rc == 0 && sl_pack_out_commit(out, msg, sizeof msg) != 0) {
    say("sluice pack: %s\n", msg);
    rc = 1;
  }
  sl_pack_out_close(out, rc == 0);
  if (rc == 130)
    say("sluice pack: interrupted by signal %d; %s not "
        "written\n",
        stopped_by, a->out);
  char report[PATH_MAX + 32] = "";
  if (rc == 0 && write_report(a, &s, report, sizeof report) != 0) {
    say("sluice pack: cannot write %s: %s\n", report, strerror(errno));
    rc = 1;
  }
  if (rc == 0) {
    double el = sl_now() - t0;
    char shards[48] = "";
    if (a->shards)
      snprintf(shards, sizeof shards, "%" PRIu32 " shards, ", a->shards);
    printf("packed %" PRIu64 " of %zu images into %s (%s%s, %" PRIu32
           " classes): %.1f MB; %" PRIu64 " kept as is, %" PRIu64
           " rewritten, %" PRIu64
           " re-encoded; %zu skipped%s%s%s; %.1f s, %.0f images/s\n",
           s.packed, in.n, a->out, shards, a->fmt, in.nclasses,
           (double)s.bytes_out / 1e6, s.kept, s.rewritten, s.reencoded,
           s.skips.n, s.skips.n ? " (listed in " : "", s.skips.n ? report : "",
           s.skips.n ? ")" : "", el, el > 0 ? (double)in.n / el : 0.0);
    if (a->coco || a->voc)
      printf("boxes: %" PRIu64 " stored (coordinates in each image's stored "
             "pixels%s)\n",
             s.boxes, a->img.max_side ? ", scaled with --max-side" : "");
    else if (!a->list)
      say_empty_classes(&in);
  }
  sl_pack_notes_free(&s.skips);
  sl_pack_inputs_free(&in);
  stop_signals_restore(&st);
  return rc;
}

/* libjpeg allocates each image's coefficients (about 3 bytes per pixel)
 * and frees them again; above glibc's default 128 KiB mmap threshold every
 * image then costs fresh zeroed pages from the kernel. Keeping such blocks
 * on the heap made pack 3-16% faster on one thread (400 ImageNet-like
 * files, alternating runs; within noise on two). The process is ours:
 * this is the command, not the library. */
static void keep_image_buffers_on_heap(void) {
#if defined(__GLIBC__)
  (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
  (void)mallopt(M_TRIM_THRESHOLD, 128 << 20);
#endif
}

int sl_cmd_pack(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--from") || !strncmp(argv[i], "--from=", 7))
      return sl_cmd_pack_from(argc, argv);
  pack_args a;
  keep_image_buffers_on_heap();
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0)
    return rc; /* --help, or a usage error */
  return pack(&a);
}
