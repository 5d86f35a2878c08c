/* WebDataset tar shards: the shards' members walked once at open into the
 * index; a sample's payload is its image member's data, read in place.
 *
 * Samples are runs of consecutive members sharing a key (the path up to
 * the first dot of its basename, as webdataset groups them): the image is
 * the member whose extension is jpg, jpeg, png or webp; the label comes
 * from .cls (decimal text), else .txt when it is a decimal number (a
 * caption is not a label: the sample is unlabelled), else the integer
 * field dataset.label_key (default "label") of .json; with
 * dataset.targets_ext = npy, the sample's .npy member (a float32 1-D
 * array, the same length in every sample) holds its targets. Runs without
 * an image are skipped (counted in sl_source_skipped).
 *
 * Shards at URLs (s3://, http(s)://): formats/files/shards_remote.h, with
 * this file's walk.
 *
 * Memory: the index (24 B a sample; up to twice that while it grows at
 * open), the targets (4·K B a sample), the shard table (source.h), one
 * shard mapped at a time while it is walked; a .json member is parsed by
 * cJSON (memory in proportion to its size) and freed at once. */
#include "formats/core/source_impl.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/endian.h"
#include "common/map_guard.h"
#include "formats/core/format.h"
#include "formats/files/npy.h"
#include "formats/files/shard_paths.h"
#include "formats/files/shards_remote.h"
#include "formats/files/tar.h"

typedef struct part {
  bool set;
  uint64_t off, len; /* in the shard */
} part;

/* One sample being gathered: the members of one key. */
typedef struct group {
  char key[SL_TAR_NAME_MAX];
  bool open;
  uint64_t header; /* the first member's header, for messages */
  part image, cls, txt, json, npy;
} group;

typedef struct build {
  sl_source *src;
  uint64_t cap;     /* index entries allocated */
  size_t k;         /* the shard being walked */
  const uint8_t *p; /* its bytes */
  const char *label_key;
  bool want_npy;
  group g;
  sl_tar_member m;
  char *json; /* a .json member's copy, json_cap bytes */
  uint64_t json_cap;
  uint64_t tcap;                     /* rows of src->targets */
  char where[SL_TAR_NAME_MAX + 400]; /* the sample being flushed */
} build;

/* ---- the shard list ---------------------------------------------------- */

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

/* A list's first path (the first line that is not blank or a comment). */
static bool list_names_tar(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  char line[PATH_MAX];
  bool tar = false;
  while (fgets(line, sizeof line, f)) {
    size_t n = strlen(line);
    while (n && isspace((unsigned char)line[n - 1]))
      line[--n] = '\0';
    char *s = line;
    while (isspace((unsigned char)*s))
      s++;
    if (*s == '\0' || *s == '#')
      continue;
    tar = ends_with(s, ".tar");
    break;
  }
  fclose(f);
  return tar;
}

/* Whether path names WebDataset shards by its form (.tar, a brace pattern
 * with .tar, a .txt/.shards list whose first line names a .tar). */
static bool sl_wds_path_like(const char *path) {
  if (ends_with(path, ".tar"))
    return true;
  if (sl_shard_is_list_name(path))
    return list_names_tar(path);
  return false;
}

/* ---- one sample -------------------------------------------------------- */

static sl_status grow_index(build *b, sl_err *err) {
  sl_source *src = b->src;
  if (src->count < b->cap)
    return SL_OK;
  uint64_t cap = b->cap ? b->cap * 2 : 1024;
  sl_sample_info *ix = realloc(src->index, (size_t)cap * sizeof *ix);
  if (!ix)
    return sl_err_set(err, SL_ENOMEM, "%s: the index of %" PRIu64 " samples",
                      src->path, cap);
  src->index = ix;
  b->cap = cap;
  return SL_OK;
}

/* A decimal label: optional sign, digits, surrounding white space. */
static bool parse_label(const uint8_t *p, uint64_t len, int32_t *out) {
  uint64_t i = 0;
  while (i < len && isspace(p[i]))
    i++;
  bool neg = i < len && p[i] == '-';
  i += neg;
  int64_t v = 0;
  uint64_t d = 0;
  for (; i < len && p[i] >= '0' && p[i] <= '9'; i++, d++) {
    v = v * 10 + (p[i] - '0');
    if (v > INT32_MAX)
      return false;
  }
  while (i < len && isspace(p[i]))
    i++;
  if (d == 0 || i != len || (neg && v != 1))
    return false; /* -1 (unlabelled) is the one negative label */
  *out = neg ? -1 : (int32_t)v;
  return true;
}

/* The label of a .json member: field label_key, an integer. */
static const char *json_label(build *b, const part *j, int32_t *label,
                              char *why, size_t cap) {
  /* Parsed from a copy: cJSON's allocations then never hold across a
   * read of the mapping (a fault there jumps out: walk_members). */
  if (j->len > b->json_cap) {
    char *t = realloc(b->json, (size_t)j->len);
    if (!t) {
      snprintf(why, cap, "no memory for a %" PRIu64 "-byte .json member",
               j->len);
      return why;
    }
    b->json = t;
    b->json_cap = j->len;
  }
  memcpy(b->json, b->p + j->off, (size_t)j->len);
  cJSON *doc = cJSON_ParseWithLength(b->json, (size_t)j->len);
  if (!doc) {
    snprintf(why, cap, ".json member is not JSON");
    return why;
  }
  const char *r = NULL;
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(doc, b->label_key);
  if (!f) {
    if (b->src->label_key) { /* named by the user: it must be there */
      snprintf(why, cap, ".json member has no field \"%s\"", b->label_key);
      r = why;
    }
  } else if (!cJSON_IsNumber(f) || f->valuedouble != floor(f->valuedouble) ||
             f->valuedouble < -1 || f->valuedouble > INT32_MAX) {
    snprintf(why, cap,
             ".json field \"%s\" is not an integer label (-1 .. 2^31-1)",
             b->label_key);
    r = why;
  } else {
    *label = (int32_t)f->valuedouble;
  }
  cJSON_Delete(doc);
  return r;
}

/* The targets of a .npy member into sample i's row (the first sets the
 * width). */
static const char *npy_targets(build *b, uint64_t i, const part *np, char *why,
                               size_t cap, sl_err *err, sl_status *st) {
  sl_source *src = b->src;
  uint64_t k = 0, data = 0;
  if (sl_npy_f32_vector(b->p + np->off, np->len, &k, &data, why, cap) != 0)
    return why;
  if (k > 65535) {
    snprintf(why, cap, ".npy of %" PRIu64 " floats (at most 65535)", k);
    return why;
  }
  if (src->target_width == 0 && src->targets_refused == 0) {
    /* The first: rows for the samples so far (every earlier row is 0),
     * grown with the index (target_room) up to the shards' bytes. */
    int r = sl_source_alloc_targets(src, i + 1, (uint32_t)k,
                                    sl_source_bytes_held(src), why, cap);
    if (r == -2) {
      *st = sl_err_set(err, SL_ENOMEM, "%s: sample %" PRIu64 " (%s): %s",
                       src->path, i, b->where, why);
      return NULL;
    }
    if (r != 0)
      return why;
    b->tcap = i + 1;
  } else if (k != src->target_width) {
    if (k == src->targets_refused)
      snprintf(why, cap,
               ".npy of %" PRIu64 " floats, not read: the first "
               "sample's were refused",
               k);
    else
      snprintf(why, cap, ".npy of %" PRIu64 " floats, earlier samples %" PRIu32,
               k, src->target_width);
    return why;
  }
  float *t = src->targets + i * k;
  for (uint64_t q = 0; q < k; q++) {
    uint32_t u = sl_get_le32(b->p + np->off + data + 4 * q);
    memcpy(&t[q], &u, 4);
  }
  return NULL;
}

/* Row i of the targets table, which grows as the samples come (doubling)
 * up to the rows the shards' bytes could hold (4 K bytes a row in a sound
 * set); past that (verify, samples without targets) the table is dropped:
 * NULL, or the reason for sample i. */
static const char *target_room(build *b, uint64_t i, char *why, size_t cap,
                               sl_err *err, sl_status *st) {
  sl_source *src = b->src;
  uint32_t k = src->target_width;
  if (!k || i < b->tcap)
    return NULL;
  uint64_t most = sl_source_bytes_held(src) / 4 / k;
  uint64_t rows = b->tcap * 2 > i + 1 ? b->tcap * 2 : i + 1;
  if (rows > most)
    rows = most;
  if (i >= rows) {
    snprintf(why, cap,
             "%" PRIu64 " samples of %" PRIu32 " float targets need more bytes "
             "than the shards hold (the targets are not read)",
             i + 1, k);
    free(src->targets);
    src->targets = NULL;
    src->target_width = 0;
    src->targets_refused = k;
    return why;
  }
  float *t = realloc(src->targets, (size_t)rows * k * sizeof *t);
  if (!t) {
    *st = sl_err_set(err, SL_ENOMEM,
                     "%s: sample %" PRIu64 " (%s): no memory for the targets "
                     "of %" PRIu64 " samples (%" PRIu32 " floats each)",
                     src->path, i, b->where, rows, k);
    return NULL;
  }
  src->targets = t;
  b->tcap = rows;
  return NULL;
}

static sl_status flush(build *b, sl_err *err) {
  group *g = &b->g;
  sl_source *src = b->src;
  if (!g->open)
    return SL_OK;
  g->open = false;
  if (!g->image.set) {
    src->skipped++;
    return SL_OK;
  }
  sl_status st = grow_index(b, err);
  if (st != SL_OK)
    return st;
  uint64_t i = src->count++;
  sl_sample_info *e = &src->index[i];
  memset(e, 0, sizeof *e);
  e->label = -1;
  const sl_file_span *f = &src->spans[b->k];
  char why[200];
  snprintf(b->where, sizeof b->where, "shard %s, key %s, at offset %" PRIu64,
           sl_source_file_path(src, b->k), g->key, g->header);
  const char *bad = target_room(b, i, why, sizeof why, err, &st);
  if (st != SL_OK)
    return st;
  if (src->target_width)
    memset(src->targets + i * src->target_width, 0,
           src->target_width * sizeof(float));
  if (!bad && g->image.len > UINT32_MAX) {
    snprintf(why, sizeof why, "image member of %" PRIu64 " bytes",
             g->image.len);
    bad = why;
  }
  if (!bad)
    bad = sl_source_take_image(b->p + g->image.off, (size_t)g->image.len,
                               f->base + g->image.off, e, why, sizeof why);
  int32_t label = -1;
  if (!bad && g->cls.set &&
      !parse_label(b->p + g->cls.off, g->cls.len, &label)) {
    snprintf(why, sizeof why, ".cls member is not a decimal label");
    bad = why;
  } else if (!bad && !g->cls.set && g->txt.set) {
    if (!parse_label(b->p + g->txt.off, g->txt.len, &label))
      label = -1; /* a caption: unlabelled */
  } else if (!bad && !g->cls.set && g->json.set) {
    bad = json_label(b, &g->json, &label, why, sizeof why);
  }
  if (!bad && b->want_npy) {
    if (!g->npy.set) {
      snprintf(why, sizeof why, "no .npy member (dataset.targets_ext = npy)");
      bad = why;
    } else {
      bad = npy_targets(b, i, &g->npy, why, sizeof why, err, &st);
      if (st != SL_OK)
        return st;
    }
  }
  if (bad)
    return sl_source_bad_entry(src, i, b->where, bad, err);
  e->label = label;
  return sl_source_check_entry(src, i, b->where, err);
}

/* The extension after the basename's first dot, lowercased into ext
 * (cap bytes; "" when none or too long), and the key's length. */
static size_t split_name(const char *name, char *ext, size_t cap) {
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  const char *dot = strchr(base, '.');
  ext[0] = '\0';
  if (!dot)
    return strlen(name);
  size_t l = strlen(dot + 1);
  if (l < cap) {
    for (size_t i = 0; i <= l; i++)
      ext[i] = (char)tolower((unsigned char)dot[1 + i]);
  }
  return (size_t)(dot - name);
}

static sl_status member(build *b, sl_err *err) {
  const sl_tar_member *m = &b->m;
  if (!sl_tar_is_file(m))
    return SL_OK; /* directories, links... */
  char ext[16];
  size_t kl = split_name(m->name, ext, sizeof ext);
  if (ext[0] == '\0')
    return SL_OK; /* no extension: not part of a sample */
  group *g = &b->g;
  if (!g->open || strlen(g->key) != kl || memcmp(g->key, m->name, kl) != 0) {
    sl_status st = flush(b, err);
    if (st != SL_OK)
      return st;
    *g = (group){.open = true, .header = m->header};
    memcpy(g->key, m->name, kl);
    g->key[kl] = '\0';
  }
  part p = {.set = true, .off = m->data, .len = m->size};
  if (!strcmp(ext, "jpg") || !strcmp(ext, "jpeg") || !strcmp(ext, "png") ||
      !strcmp(ext, "webp")) {
    if (!g->image.set)
      g->image = p;
  } else if (!strcmp(ext, "cls")) {
    g->cls = p;
  } else if (!strcmp(ext, "txt")) {
    g->txt = p;
  } else if (!strcmp(ext, "json")) {
    g->json = p;
  } else if (!strcmp(ext, "npy")) {
    g->npy = p;
  }
  return SL_OK;
}

/* The members of the mapped shard b->p, run under common/map_guard.h's
 * guard (sl_guard_call): a shard that shrinks while it is walked faults
 * past its new end, and that becomes an error naming the shard and the
 * offset. What the walk allocates lives in b->src and b (b->json), so a
 * jump out of it loses nothing. */
typedef struct walk_call {
  build *b;
  uint64_t size;
  const char *name;
  sl_err *err;
  sl_status st;
} walk_call;

static void walk_members(void *ctx) {
  walk_call *c = ctx;
  build *b = c->b;
  uint64_t pos = 0;
  char why[SL_TAR_NAME_MAX + 200];
  for (;;) {
    int rc = sl_tar_next(b->p, c->size, &pos, &b->m, why, sizeof why);
    if (rc < 0) {
      c->st = sl_err_set(c->err, SL_EFORMAT, "%s: %s", c->name, why);
      return;
    }
    if (rc == 0)
      break;
    if ((c->st = member(b, c->err)) != SL_OK)
      return;
  }
  c->st = flush(b, c->err); /* a sample never spans shards */
}

static sl_status walk_shard(build *b, sl_err *err) {
  sl_source *src = b->src;
  const sl_file_span *f = &src->spans[b->k];
  const char *name = sl_source_file_path(src, b->k);
  src->file_first[b->k] = src->count;
  if (f->size == 0)
    return SL_OK;
  if (f->size > SIZE_MAX)
    return sl_err_set(err, SL_ETOOBIG, "%s: too large to map", name);
  void *m = mmap(NULL, (size_t)f->size, PROT_READ, MAP_SHARED, f->fd, 0);
  if (m == MAP_FAILED)
    return sl_err_errno(err, SL_EIO, errno, "%s: mmap", name);
  (void)madvise(m, (size_t)f->size, MADV_SEQUENTIAL); /* advisory */
  b->p = m;
  b->g.open = false;
  walk_call c = {b, f->size, name, err, SL_OK};
  sl_status st = sl_guard_install(err);
  size_t at = 0;
  if (st == SL_OK && !sl_guard_call(walk_members, &c, m, (size_t)f->size, &at))
    st = sl_err_set(err, SL_EIO,
                    "%s: offset %zu cannot be read (SIGBUS) while "
                    "its members were indexed: the shard shrank (truncated or "
                    "copied over) since it was opened, or a disk error; it "
                    "was %" PRIu64 " bytes",
                    name, at, f->size);
  else if (st == SL_OK)
    st = c.st;
  munmap(m, (size_t)f->size);
  b->p = NULL;
  return st;
}

/* ---- open -------------------------------------------------------------- */

/* The walk of the shards (formats/files/shards_remote.h's walker, which
 * the local open runs too). */
static sl_status wds_begin(sl_source *src, void **ctx, sl_err *err) {
  build *b = calloc(1, sizeof *b);
  if (!b)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", src->path);
  b->src = src;
  b->label_key = src->label_key ? src->label_key : "label";
  b->want_npy = src->targets_ext != NULL;
  *ctx = b;
  return SL_OK;
}

static sl_status wds_shard(void *ctx, size_t k, sl_err *err) {
  build *b = ctx;
  b->k = k;
  return walk_shard(b, err);
}

static sl_status wds_end(void *ctx, sl_status st, const char *path,
                         sl_err *err) {
  build *b = ctx;
  sl_source *src = b->src;
  free(b->json);
  free(b);
  if (st == SL_OK && src->count && src->count < (uint64_t)SIZE_MAX) {
    /* the index grew by doubling: give the slack back */
    sl_sample_info *ix =
        realloc(src->index, (size_t)src->count * sizeof *src->index);
    if (ix)
      src->index = ix;
    if (src->target_width) {
      float *t = realloc(src->targets,
                         (size_t)src->count * src->target_width * sizeof *t);
      if (t)
        src->targets = t;
    }
  }
  if (st == SL_OK && src->count == 0)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: no samples: no member of %zu shard(s) is a .jpg, "
                    ".jpeg, .png or .webp image",
                    path, src->nfiles);
  return st;
}

static const sl_shard_walker wds_walker = {
    .begin = wds_begin, .shard = wds_shard, .end = wds_end};

/* Indexes WebDataset tar shards (path: a shard, a brace pattern or a list
 * file, local or at a URL): the format row's index_many. */
static sl_status sl_source_index_wds(sl_source *src, const char *path,
                                     sl_err *err) {
  if (src->targets_ext && strcmp(src->targets_ext, "npy") != 0)
    return sl_err_set(err, SL_ECONFIG,
                      "%s: dataset.targets_ext = %s: only npy (a float32 "
                      "1-D array) is read",
                      path, src->targets_ext);
  if (sl_url_kind_of(path) != SL_URL_NONE) {
    /* What the index depends on besides the shards. */
    char opts[600];
    snprintf(opts, sizeof opts, "label_key=%.256s;targets_ext=%.256s",
             src->label_key ? src->label_key : "",
             src->targets_ext ? src->targets_ext : "");
    return sl_source_index_remote_shards(src, path, &wds_walker, opts,
                                         src->reindex, err);
  }
  sl_shard_list ps;
  sl_status st = sl_shard_list_of(path, false, &ps, err);
  if (st == SL_OK)
    st = sl_source_add_shards(src, &ps, path, err);
  sl_shard_list_free(&ps);
  if (st != SL_OK)
    return st;
  void *ctx = NULL; /* set by wds_begin when it succeeds */
  st = wds_begin(src, &ctx, err);
  if (st != SL_OK)
    return st;
  for (size_t k = 0; st == SL_OK && k < src->nfiles; k++)
    st = wds_shard(ctx, k, err);
  return wds_end(ctx, st, path, err);
}

/* ---- the row ------------------------------------------------------------- */

static sl_status wds_claim(const char *path, sl_format_kind *kind, bool *mine,
                           sl_err *err) {
  (void)err;
  if (sl_url_kind_of(path) != SL_URL_NONE) {
    /* At a URL, a list's first line is not looked at: of the foreign
     * shard sets, WebDataset's are read from URLs. */
    *mine = ends_with(path, ".tar") ||
            (sl_shard_is_list_name(path) &&
             (*kind == SL_FORMAT_AUTO || *kind == SL_FORMAT_WEBDATASET));
    return SL_OK;
  }
  *mine = sl_wds_path_like(path);
  return SL_OK;
}

const sl_format sl_format_webdataset = {
    .kind = SL_FORMAT_WEBDATASET,
    .name = "webdataset",
    .title = "WebDataset",
    .what = "WebDataset shards",
    .options = SL_FOPT_LABEL_KEY | SL_FOPT_TARGETS_EXT,
    .entries =
        SL_ENTRIES_BIT(SL_ENTRIES_AUTO) | SL_ENTRIES_BIT(SL_ENTRIES_IMAGES),
    .claim = wds_claim,
    .index_many = sl_source_index_wds,
};
