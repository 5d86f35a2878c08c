/* Expanding dataset.path into shard paths (shard_paths.h). */
#include "formats/files/shard_paths.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct expand {
  sl_shard_add_fn add;
  void *ctx;
  uint64_t count, bytes; /* paths and their bytes (NULs included) so far */
  char what[200];        /* the pattern, for messages (its start if long) */
} expand;

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

bool sl_shard_name_ends(const char *path, const char *ext) {
  size_t n = strcspn(path, "?#"), e = strlen(ext);
  return n >= e && strncmp(path + n - e, ext, e) == 0;
}

bool sl_shard_is_list_name(const char *path) {
  return ends_with(path, ".txt") || ends_with(path, ".shards");
}

bool sl_shard_is_pattern(const char *path) {
  const char *open = strchr(path, '{');
  return open && strchr(open, '}');
}

static bool parse_uint(const char *s, size_t len, uint64_t *v) {
  if (len == 0 || len > 18)
    return false;
  uint64_t x = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    x = x * 10 + (uint64_t)(s[i] - '0');
  }
  *v = x;
  return true;
}

/* A pattern is literal text and braces, parsed once: seg i is its literal
 * text lit then (unless it is the last) a brace of n alternatives, a range
 * {a..b} or a list {x,y,z}. Paths are then made by an odometer over the
 * braces (the last varies fastest), each brace text read once per change:
 * the count, the longest path and the bytes of all the paths are known,
 * and checked, before the first path is made. */
typedef struct seg {
  const char *lit;
  size_t lit_len;
  bool brace, range;
  const char *in; /* the brace's text between { and } */
  size_t in_len;
  uint64_t a, b; /* a range's bounds */
  int width;     /* a range's zero padding */
  uint64_t n;    /* alternatives */
  uint64_t sum;  /* bytes of all alternatives */
  size_t max;    /* bytes of the longest */
  /* the odometer */
  uint64_t at;      /* the current alternative */
  const char *item; /* a list's current item */
  size_t out_at;    /* where the segment starts in the path */
} seg;

static unsigned digits(uint64_t v) {
  unsigned d = 1;
  while (v >= 10) {
    v /= 10;
    d++;
  }
  return d;
}

/* The bytes of all the numbers a..b printed at least width wide. */
static uint64_t range_bytes(uint64_t a, uint64_t b, int width) {
  uint64_t sum = 0, lo = 0, hi = 9;
  for (unsigned d = 1; d <= 20 && lo <= b; d++) {
    uint64_t x = a > lo ? a : lo, y = b < hi ? b : hi;
    if (x <= y)
      sum += (y - x + 1) * (d > (unsigned)width ? d : (unsigned)width);
    lo = hi + 1;
    hi = hi > UINT64_MAX / 10 ? UINT64_MAX : hi * 10 + 9;
  }
  return sum;
}

static sl_status parse_brace(const expand *x, seg *g, sl_err *err) {
  const char *in = g->in;
  size_t inl = g->in_len;
  const char *dots = NULL;
  for (size_t i = 0; i + 1 < inl; i++)
    if (in[i] == '.' && in[i + 1] == '.') {
      dots = in + i;
      break;
    }
  if (dots) { /* {a..b}: numbers, zero-padded to the longer bound */
    size_t la = (size_t)(dots - in), lb = inl - la - 2;
    if (!parse_uint(in, la, &g->a) || !parse_uint(dots + 2, lb, &g->b) ||
        g->a > g->b)
      return sl_err_set(err, SL_ECONFIG,
                        "%s: brace range {%.*s}: two decimal numbers, the "
                        "first not above the second",
                        x->what, (int)inl, in);
    if (g->b - g->a >= SL_SHARDS_MAX)
      return sl_err_set(err, SL_ECONFIG, "%s: more than %u shards", x->what,
                        SL_SHARDS_MAX);
    bool pad = (la > 1 && in[0] == '0') || (lb > 1 && dots[2] == '0');
    g->range = true;
    g->width = pad ? (int)(la > lb ? la : lb) : 0;
    g->n = g->b - g->a + 1;
    g->sum = range_bytes(g->a, g->b, g->width);
    unsigned db = digits(g->b);
    g->max = db > (unsigned)g->width ? db : (size_t)g->width;
    return SL_OK;
  }
  /* {a,b,c} */
  g->n = 1;
  g->sum = inl;
  size_t l = 0;
  for (size_t i = 0; i < inl; i++) {
    if (in[i] == ',') {
      g->n++;
      g->sum--;
      l = 0;
    } else if (++l > g->max) {
      g->max = l;
    }
  }
  return SL_OK;
}

/* Writes seg g's current alternative at g->out_at, its literal first;
 * returns where it ends. */
static size_t put_seg(seg *g, char *out) {
  size_t o = g->out_at;
  memcpy(out + o, g->lit, g->lit_len);
  o += g->lit_len;
  if (!g->brace)
    return o;
  if (g->range) {
    int w =
        snprintf(out + o, PATH_MAX - o, "%0*" PRIu64, g->width, g->a + g->at);
    return o + (size_t)w; /* fits: the longest path was checked */
  }
  const char *end = g->in + g->in_len;
  const char *comma = memchr(g->item, ',', (size_t)(end - g->item));
  size_t l = (size_t)((comma ? comma : end) - g->item);
  memcpy(out + o, g->item, l);
  return o + l;
}

/* Moves seg g to its next alternative; false when it wraps to the first. */
static bool next_alt(seg *g) {
  if (++g->at == g->n) {
    g->at = 0;
    g->item = g->in;
    return false;
  }
  if (!g->range) {
    const char *end = g->in + g->in_len;
    g->item = (const char *)memchr(g->item, ',', (size_t)(end - g->item)) + 1;
  }
  return true;
}

static sl_status expand_one(expand *x, const char *p, sl_err *err) {
  /* the segments: a brace needs at least 2 bytes of pattern */
  size_t plen = strlen(p), nseg = 1;
  const char *last = strrchr(p, '}');
  for (const char *o = p; last && (o = strchr(o, '{')) && o < last; o++)
    if (++nseg > SL_SHARD_BRACES_MAX + 1)
      return sl_err_set(err, SL_ECONFIG,
                        "%s: more than %d braces in a shard pattern", x->what,
                        SL_SHARD_BRACES_MAX);
  seg *g = calloc(nseg, sizeof *g);
  char *out = malloc(PATH_MAX);
  sl_status st =
      g && out ? SL_OK : sl_err_set(err, SL_ENOMEM, "%s: no memory", x->what);
  size_t n = 0;
  uint64_t count = 1, longest = 0, lits = 0;
  for (const char *s = p; st == SL_OK;) {
    const char *open = strchr(s, '{');
    const char *close = open ? strchr(open, '}') : NULL;
    seg *c = &g[n++];
    c->lit = s;
    if (!open || !close) {
      c->lit_len = plen - (size_t)(s - p);
      lits += c->lit_len;
      longest += c->lit_len;
      break;
    }
    c->lit_len = (size_t)(open - s);
    c->brace = true;
    c->in = c->item = open + 1;
    c->in_len = (size_t)(close - open - 1);
    st = parse_brace(x, c, err);
    if (st == SL_OK && count > SL_SHARDS_MAX / c->n)
      st = sl_err_set(err, SL_ECONFIG, "%s: more than %u shards", x->what,
                      SL_SHARDS_MAX);
    count *= c->n;
    lits += c->lit_len;
    longest += c->lit_len + c->max;
    s = close + 1;
  }
  /* Checked before any path is made: count, the longest, the bytes. */
  if (st == SL_OK && x->count + count > SL_SHARDS_MAX)
    st = sl_err_set(err, SL_ECONFIG, "%s: more than %u shards", x->what,
                    SL_SHARDS_MAX);
  if (st == SL_OK && longest >= PATH_MAX)
    st = sl_err_set(err, SL_ECONFIG, "%s: a shard path is too long", x->what);
  uint64_t bytes = count * (lits + 1); /* count <= 2^20, lits < 2^44 */
  for (size_t i = 0; st == SL_OK && i < n; i++)
    if (g[i].brace)
      bytes += count / g[i].n * g[i].sum;
  if (st == SL_OK && x->bytes + bytes > SL_SHARD_BYTES_MAX)
    st = sl_err_set(err, SL_ECONFIG,
                    "%s: %" PRIu64 " shard paths of %" PRIu64
                    " bytes in all (at most %u MiB of paths)",
                    x->what, x->count + count, x->bytes + bytes,
                    SL_SHARD_BYTES_MAX >> 20);
  if (st == SL_OK) {
    x->bytes += bytes;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
      g[i].out_at = o;
      o = put_seg(&g[i], out);
    }
    out[o] = '\0';
  }
  for (uint64_t k = 0; st == SL_OK && k < count; k++) {
    x->count++;
    st = x->add(x->ctx, out, err);
    if (st != SL_OK || k + 1 == count)
      break;
    size_t i = n - 1; /* the last brace that moves without wrapping */
    while (!g[i].brace || !next_alt(&g[i]))
      i--;
    size_t o = put_seg(&g[i], out);
    for (size_t j = i + 1; j < n; j++) {
      g[j].out_at = o;
      o = put_seg(&g[j], out);
    }
    out[o] = '\0';
  }
  free(out);
  free(g);
  return st;
}

static sl_status read_list(expand *x, const char *path, sl_err *err) {
  FILE *f = fopen(path, "r");
  if (!f)
    return sl_err_errno(err, SL_EIO, errno, "%s", path);
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
  memcpy(dir, path, dl);
  dir[dl] = '\0';
  char *line = NULL, *full = malloc(PATH_MAX);
  size_t cap = 0;
  uint64_t lines = 0, bytes = 0;
  sl_status st = full ? SL_OK : sl_err_set(err, SL_ENOMEM, "%s", path);
  ssize_t n;
  while (st == SL_OK && (n = getline(&line, &cap, f)) >= 0) {
    lines++;
    bytes += (uint64_t)n;
    if (bytes > (64u << 20)) {
      st = sl_err_set(err, SL_ECONFIG, "%s: a list of more than 64 MiB", path);
      break;
    }
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' ||
                     line[n - 1] == ' ' || line[n - 1] == '\t'))
      line[--n] = '\0';
    char *s = line;
    while (*s == ' ' || *s == '\t')
      s++;
    if (*s == '\0' || *s == '#')
      continue;
    int w = snprintf(full, PATH_MAX, "%s%s", *s == '/' ? "" : dir, s);
    if (w < 0 || w >= PATH_MAX) {
      st = sl_err_set(err, SL_ECONFIG, "%s: line %" PRIu64 ": path too long",
                      path, lines);
      break;
    }
    st = expand_one(x, full, err);
  }
  if (st == SL_OK && ferror(f))
    st = sl_err_errno(err, SL_EIO, errno, "%s: read", path);
  if (st == SL_OK && x->count == 0)
    st = sl_err_set(err, SL_ECONFIG, "%s: a shard list without shards", path);
  free(line);
  free(full);
  fclose(f);
  return st;
}

sl_status sl_shard_expand(const char *path, bool list, sl_shard_add_fn add,
                          void *ctx, sl_err *err) {
  expand x = {.add = add, .ctx = ctx};
  size_t l = strlen(path);
  snprintf(x.what, sizeof x.what, "%.*s%s", l < 160 ? (int)l : 160, path,
           l < 160 ? "" : "...");
  return list ? read_list(&x, path, err) : expand_one(&x, path, err);
}

/* ---- TFDS: PREFIX-IIIII-of-NNNNN ---------------------------------------- */

typedef struct tfds_name {
  size_t prefix; /* bytes before "-IIIII-of-NNNNN" */
  int iw, nw;    /* digits of the index and of the count */
  uint64_t index, count;
} tfds_name;

static int tfds_path(char *out, const char *prefix, const tfds_name *t,
                     uint64_t k);

/* Whether s[0, len) ends in -IIIII-of-NNNNN with index < count. */
static bool tfds_split(const char *s, size_t len, tfds_name *t) {
  size_t e = len, q = e;
  while (q > 0 && s[q - 1] >= '0' && s[q - 1] <= '9')
    q--;
  size_t nw = e - q;
  if (nw == 0 || q < 4 || memcmp(s + q - 4, "-of-", 4) != 0)
    return false;
  size_t ie = q - 4, is = ie;
  while (is > 0 && s[is - 1] >= '0' && s[is - 1] <= '9')
    is--;
  size_t iw = ie - is;
  if (iw == 0 || is == 0 || s[is - 1] != '-' ||
      !parse_uint(s + is, iw, &t->index) || !parse_uint(s + q, nw, &t->count) ||
      t->index >= t->count)
    return false;
  t->prefix = is - 1;
  t->iw = (int)iw;
  t->nw = (int)nw;
  return true;
}

/* What path names: one existing shard, or a prefix with shards beside it
 * (t->count 0: neither). prefix gets PREFIX (PATH_MAX bytes). */
static sl_status tfds_find(const char *path, tfds_name *t, char *prefix,
                           sl_err *err) {
  size_t len = strlen(path);
  struct stat sb;
  t->count = 0;
  if (len >= PATH_MAX)
    return SL_OK;
  if (stat(path, &sb) == 0) {
    tfds_name n;
    if (S_ISREG(sb.st_mode) && tfds_split(path, len, &n)) {
      *t = n;
      memcpy(prefix, path, n.prefix);
      prefix[n.prefix] = '\0';
    }
    return SL_OK; /* an existing file is a prefix of nothing */
  }
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  size_t bl = strlen(base);
  char dir[PATH_MAX];
  size_t dl = slash ? (size_t)(slash - path) : 0;
  if (slash) {
    memcpy(dir, path, dl ? dl : 1); /* "/x": the root */
    dir[dl ? dl : 1] = '\0';
  } else {
    memcpy(dir, ".", 2);
  }
  if (bl == 0)
    return SL_OK;
  DIR *d = opendir(dir);
  if (!d)
    return errno == ENOENT || errno == ENOTDIR
               ? SL_OK /* then the path is simply missing: said later */
               : sl_err_errno(err, SL_EIO, errno, "%s: read folder %s", path,
                              dir);
  struct dirent *de;
  sl_status st = SL_OK;
  while ((de = readdir(d))) {
    size_t l = strlen(de->d_name);
    tfds_name n;
    if (l <= bl || memcmp(de->d_name, base, bl) != 0 ||
        !tfds_split(de->d_name, l, &n) || n.prefix != bl)
      continue;
    if (t->count && n.count != t->count) {
      st = sl_err_set(err, SL_ECONFIG,
                      "%s: TFDS shards of two sets beside it (-of-%0*" PRIu64
                      " and -of-%0*" PRIu64 "): name one shard",
                      path, t->nw, t->count, n.nw, n.count);
      break;
    }
    if (!t->count || n.iw > t->iw)
      *t = n; /* the widest index: the writer's padding */
  }
  closedir(d);
  if (st == SL_OK && t->count) {
    t->prefix = len;
    memcpy(prefix, path, len + 1);
  }
  return st;
}

sl_status sl_shard_tfds_named(const char *name, sl_shard_add_fn add, void *ctx,
                              bool *named, sl_err *err) {
  size_t len = strlen(name);
  tfds_name t;
  *named = false;
  if (len >= PATH_MAX || sl_shard_is_pattern(name) ||
      !tfds_split(name, len, &t) || t.count < 2)
    return SL_OK;
  if (t.count > SL_SHARDS_MAX)
    return sl_err_set(err, SL_ECONFIG,
                      "%s: more than %u shards (-of-%" PRIu64 ")", name,
                      SL_SHARDS_MAX, t.count);
  char *prefix = malloc(t.prefix + 1), *p = malloc(PATH_MAX);
  sl_status st =
      prefix && p ? SL_OK : sl_err_set(err, SL_ENOMEM, "%s: no memory", name);
  if (st == SL_OK) {
    memcpy(prefix, name, t.prefix);
    prefix[t.prefix] = '\0';
  }
  for (uint64_t k = 0; st == SL_OK && k < t.count; k++)
    st = tfds_path(p, prefix, &t, k) != 0
             ? sl_err_set(err, SL_ECONFIG, "%s: a shard name is too long", name)
             : add(ctx, p, err);
  free(prefix);
  free(p);
  *named = st == SL_OK;
  return st;
}

sl_status sl_shard_tfds_count(const char *path, unsigned *shards, sl_err *err) {
  char *prefix = malloc(PATH_MAX);
  if (!prefix)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  tfds_name t;
  sl_status st = tfds_find(path, &t, prefix, err);
  free(prefix);
  *shards = 0;
  if (st == SL_OK && t.count > SL_SHARDS_MAX)
    return sl_err_set(err, SL_ECONFIG,
                      "%s: more than %u shards (-of-%" PRIu64 ")", path,
                      SL_SHARDS_MAX, t.count);
  if (st == SL_OK)
    *shards = (unsigned)t.count;
  return st;
}

static int tfds_path(char *out, const char *prefix, const tfds_name *t,
                     uint64_t k) {
  int w = snprintf(out, PATH_MAX, "%s-%0*" PRIu64 "-of-%0*" PRIu64, prefix,
                   t->iw, k, t->nw, t->count);
  return w < 0 || w >= PATH_MAX ? -1 : 0;
}

/* Calls add for each of the N shards path names (sl_shard_tfds_count > 0),
 * in order, after checking every one exists: a missing shard is SL_EIO
 * naming it ("shard 4 of 1024 is missing"). */
static sl_status sl_shard_tfds(const char *path, sl_shard_add_fn add, void *ctx,
                               sl_err *err) {
  char *prefix = malloc(PATH_MAX), *p = malloc(PATH_MAX);
  tfds_name t = {0};
  sl_status st = prefix && p
                     ? tfds_find(path, &t, prefix, err)
                     : sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  if (st == SL_OK && (t.count == 0 || t.count > SL_SHARDS_MAX))
    st = sl_err_set(err, SL_ECONFIG, "%s: not TFDS shards (NAME-00000-of-N)",
                    path);
  /* every shard first: a missing one is named before any is opened */
  for (uint64_t k = 0; st == SL_OK && k < t.count; k++) {
    struct stat sb;
    if (tfds_path(p, prefix, &t, k) != 0)
      st = sl_err_set(err, SL_ECONFIG, "%s: a shard path is too long", path);
    else if (stat(p, &sb) != 0)
      st = sl_err_errno(err, SL_EIO, errno,
                        "%s: TFDS shard %" PRIu64 " of %" PRIu64
                        " is missing (%s)",
                        path, k, t.count, p);
  }
  for (uint64_t k = 0; st == SL_OK && k < t.count; k++)
    if (tfds_path(p, prefix, &t, k) == 0)
      st = add(ctx, p, err);
  free(prefix);
  free(p);
  return st;
}

/* ---- collected --------------------------------------------------------- */

static sl_status collect(void *ctx, const char *p, sl_err *err) {
  sl_shard_list *l = ctx;
  size_t n = strlen(p) + 1;
  if (l->cap - l->len < n) {
    size_t cap = l->cap ? l->cap * 2 : 4096;
    while (cap - l->len < n)
      cap *= 2;
    char *b = realloc(l->blob, cap);
    if (!b)
      return sl_err_set(err, SL_ENOMEM, "%s: shard names", p);
    l->blob = b;
    l->cap = cap;
  }
  memcpy(l->blob + l->len, p, n);
  l->len += n;
  l->n++;
  return SL_OK;
}

sl_status sl_shard_list_of(const char *path, bool tfds, sl_shard_list *l,
                           sl_err *err) {
  *l = (sl_shard_list){0};
  unsigned n = 0;
  sl_status st = SL_OK;
  if (tfds && !sl_shard_is_list_name(path) && !sl_shard_is_pattern(path))
    st = sl_shard_tfds_count(path, &n, err);
  if (st == SL_OK)
    st =
        n ? sl_shard_tfds(path, collect, l, err)
          : sl_shard_expand(path, sl_shard_is_list_name(path), collect, l, err);
  if (st != SL_OK)
    sl_shard_list_free(l);
  return st;
}

void sl_shard_list_free(sl_shard_list *l) {
  free(l->blob);
  *l = (sl_shard_list){0};
}
