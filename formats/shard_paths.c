/* Expanding dataset.path into shard paths (shard_paths.h). */
#include "formats/shard_paths.h"

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
  uint64_t count;
  const char *what; /* the pattern, for messages */
} expand;

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
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

static sl_status emit(expand *x, const char *p, sl_err *err) {
  if (++x->count > SL_SHARDS_MAX)
    return sl_err_set(err, SL_ECONFIG, "%s: more than %u shards", x->what,
                      SL_SHARDS_MAX);
  return x->add(x->ctx, p, err);
}

/* Expands the first brace of s (prefix already in out[0..ol)). */
static sl_status brace(expand *x, const char *s, char *out, size_t ol,
                       sl_err *err) {
  const char *open = strchr(s, '{');
  const char *close = open ? strchr(open, '}') : NULL;
  if (!open || !close) {
    size_t l = strlen(s);
    if (ol + l >= PATH_MAX)
      return sl_err_set(err, SL_ECONFIG, "%s: a shard path is too long",
                        x->what);
    memcpy(out + ol, s, l + 1);
    return emit(x, out, err);
  }
  size_t pre = (size_t)(open - s);
  if (ol + pre >= PATH_MAX)
    return sl_err_set(err, SL_ECONFIG, "%s: a shard path is too long", x->what);
  memcpy(out + ol, s, pre);
  ol += pre;
  const char *in = open + 1, *rest = close + 1;
  size_t inl = (size_t)(close - in);
  const char *dots = NULL;
  for (size_t i = 0; i + 1 < inl; i++)
    if (in[i] == '.' && in[i + 1] == '.') {
      dots = in + i;
      break;
    }
  sl_status st = SL_OK;
  if (dots) { /* {a..b}: numbers, zero-padded to the longer bound */
    uint64_t a, b;
    size_t la = (size_t)(dots - in), lb = inl - la - 2;
    if (!parse_uint(in, la, &a) || !parse_uint(dots + 2, lb, &b) || a > b)
      return sl_err_set(err, SL_ECONFIG,
                        "%s: brace range {%.*s}: two decimal numbers, the "
                        "first not above the second",
                        x->what, (int)inl, in);
    if (b - a >= SL_SHARDS_MAX)
      return sl_err_set(err, SL_ECONFIG, "%s: more than %u shards", x->what,
                        SL_SHARDS_MAX);
    bool pad = (la > 1 && in[0] == '0') || (lb > 1 && dots[2] == '0');
    int width = pad ? (int)(la > lb ? la : lb) : 0;
    for (uint64_t v = a; v <= b && st == SL_OK; v++) {
      int w = snprintf(out + ol, PATH_MAX - ol, "%0*" PRIu64, width, v);
      if (w < 0 || (size_t)w >= PATH_MAX - ol)
        return sl_err_set(err, SL_ECONFIG, "%s: a shard path is too long",
                          x->what);
      st = brace(x, rest, out, ol + (size_t)w, err);
    }
    return st;
  }
  /* {a,b,c} */
  const char *item = in;
  for (;;) {
    const char *comma = memchr(item, ',', (size_t)(close - item));
    const char *end = comma ? comma : close;
    size_t l = (size_t)(end - item);
    if (ol + l >= PATH_MAX)
      return sl_err_set(err, SL_ECONFIG, "%s: a shard path is too long",
                        x->what);
    memcpy(out + ol, item, l);
    st = brace(x, rest, out, ol + l, err);
    if (st != SL_OK || !comma)
      return st;
    item = comma + 1;
  }
}

static sl_status expand_one(expand *x, const char *p, sl_err *err) {
  char *out = malloc(PATH_MAX);
  if (!out)
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", x->what);
  sl_status st = brace(x, p, out, 0, err);
  free(out);
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
  expand x = {.add = add, .ctx = ctx, .what = path};
  return list ? read_list(&x, path, err) : expand_one(&x, path, err);
}

/* ---- TFDS: PREFIX-IIIII-of-NNNNN ---------------------------------------- */

typedef struct tfds_name {
  size_t prefix; /* bytes before "-IIIII-of-NNNNN" */
  int iw, nw;    /* digits of the index and of the count */
  uint64_t index, count;
} tfds_name;

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

sl_status sl_shard_tfds(const char *path, sl_shard_add_fn add, void *ctx,
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
