/* Expanding dataset.path into WebDataset shard paths (wds_paths.h). */
#include "formats/wds_paths.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct expand {
  sl_wds_add_fn add;
  void *ctx;
  uint64_t count;
  const char *what; /* the pattern, for messages */
} expand;

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

bool sl_wds_is_list_name(const char *path) {
  return ends_with(path, ".txt") || ends_with(path, ".shards");
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
  if (++x->count > SL_WDS_MAX_SHARDS)
    return sl_err_set(err, SL_ECONFIG, "%s: more than %u shards", x->what,
                      SL_WDS_MAX_SHARDS);
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
    if (b - a >= SL_WDS_MAX_SHARDS)
      return sl_err_set(err, SL_ECONFIG, "%s: more than %u shards", x->what,
                        SL_WDS_MAX_SHARDS);
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

sl_status sl_wds_expand(const char *path, bool list, sl_wds_add_fn add,
                        void *ctx, sl_err *err) {
  expand x = {.add = add, .ctx = ctx, .what = path};
  return list ? read_list(&x, path, err) : expand_one(&x, path, err);
}
