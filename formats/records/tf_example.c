/* The tf.train.Example wire-format parser (formats/records/tf_example.h). */
#include "formats/records/tf_example.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "formats/core/protowire.h"

typedef sl_pw rd;

/* Where a message is: the reason's buffer and the feature's key (NULL
 * outside a feature). */
typedef struct ex {
  char *why;
  size_t cap;
  const uint8_t *key;
  size_t klen;
} ex;

static int fail(const ex *x, const char *msg, size_t at) {
  if (!x->key) {
    snprintf(x->why, x->cap, "Example %s (byte %zu of the record)", msg, at);
    return -1;
  }
  char k[68]; /* the key as text: up to 64 bytes, unprintable ones as '?' */
  size_t n = x->klen > 64 ? 64 : x->klen;
  for (size_t q = 0; q < n; q++)
    k[q] = isprint(x->key[q]) ? (char)x->key[q] : '?';
  k[n] = '\0';
  snprintf(x->why, x->cap,
           "Example feature '%s%s': %s (byte %zu of the record)", k,
           n < x->klen ? "..." : "", msg, at);
  return -1;
}

/* The next tag of message `what`: its field and wire type. */
static int tag(rd *r, const ex *x, const char *what, uint64_t *field,
               unsigned *wt) {
  size_t at = r->pos;
  uint64_t t;
  char msg[96];
  if (sl_pw_varint(r, &t) != 0) {
    snprintf(msg, sizeof msg, "%s: tag runs past the end", what);
    return fail(x, msg, at);
  }
  *wt = (unsigned)(t & 7);
  *field = t >> 3;
  if (*wt == 3 || *wt == 4 || *wt == 6 || *wt == 7) {
    snprintf(msg, sizeof msg, "%s: unknown wire type %u", what, *wt);
    return fail(x, msg, at);
  }
  if (*field == 0) {
    snprintf(msg, sizeof msg, "%s: field number 0", what);
    return fail(x, msg, at);
  }
  return 0;
}

/* A length-delimited field's body as its own reader. */
static int sub(rd *r, const ex *x, const char *what, rd *out) {
  size_t at = r->pos;
  uint64_t len;
  if (sl_pw_varint(r, &len) != 0 || len > r->end - r->pos) {
    char msg[96];
    snprintf(msg, sizeof msg, "%s: length runs past the end", what);
    return fail(x, msg, at);
  }
  *out = (rd){r->b, r->pos, r->pos + (size_t)len};
  r->pos += (size_t)len;
  return 0;
}

static int skip_unknown(rd *r, const ex *x, const char *what, unsigned wt,
                        size_t at) {
  if (sl_pw_skip(r, wt, NULL) == 0)
    return 0;
  char msg[96];
  snprintf(msg, sizeof msg, "%s: unknown field runs past the end", what);
  return fail(x, msg, at);
}

static int bytes_list(rd r, const ex *x, sl_feature *f) {
  while (r.pos < r.end) {
    size_t at = r.pos;
    uint64_t field;
    unsigned wt;
    if (tag(&r, x, "BytesList", &field, &wt) != 0)
      return -1;
    if (field != 1) {
      if (skip_unknown(&r, x, "BytesList", wt, at) != 0)
        return -1;
      continue;
    }
    rd v = {0};
    if (wt != SL_WT_LEN)
      return fail(x, "BytesList value is not length-delimited", at);
    if (sub(&r, x, "BytesList value", &v) != 0)
      return -1;
    if (f->count++ == 0) {
      f->first_off = v.pos;
      f->first_len = v.end - v.pos;
    }
  }
  return 0;
}

static int float_list(rd r, const ex *x, sl_feature *f) {
  while (r.pos < r.end) {
    size_t at = r.pos;
    uint64_t field;
    unsigned wt;
    if (tag(&r, x, "FloatList", &field, &wt) != 0)
      return -1;
    if (field != 1) {
      if (skip_unknown(&r, x, "FloatList", wt, at) != 0)
        return -1;
      continue;
    }
    if (wt == SL_WT_I32) {
      if (r.end - r.pos < 4)
        return fail(x, "FloatList value runs past the end", at);
      if (f->count++ == 0)
        f->first_float = sl_pw_float(r.b + r.pos);
      r.pos += 4;
    } else if (wt == SL_WT_LEN) {
      rd v = {0};
      if (sub(&r, x, "FloatList packed values", &v) != 0)
        return -1;
      if ((v.end - v.pos) % 4)
        return fail(x, "FloatList packed values are not 4-byte floats", at);
      if (f->count == 0 && v.end > v.pos)
        f->first_float = sl_pw_float(r.b + v.pos);
      f->count += (v.end - v.pos) / 4;
    } else {
      return fail(x, "FloatList value has a bad wire type", at);
    }
  }
  return 0;
}

static int int64_list(rd r, const ex *x, sl_feature *f) {
  while (r.pos < r.end) {
    size_t at = r.pos;
    uint64_t field, v;
    unsigned wt;
    if (tag(&r, x, "Int64List", &field, &wt) != 0)
      return -1;
    if (field != 1) {
      if (skip_unknown(&r, x, "Int64List", wt, at) != 0)
        return -1;
      continue;
    }
    if (wt == SL_WT_VARINT) {
      if (sl_pw_varint(&r, &v) != 0)
        return fail(x, "Int64List value runs past the end", at);
      if (f->count++ == 0)
        f->first_int = (int64_t)v;
    } else if (wt == SL_WT_LEN) {
      rd p;
      if (sub(&r, x, "Int64List packed values", &p) != 0)
        return -1;
      while (p.pos < p.end) {
        size_t vat = p.pos;
        if (sl_pw_varint(&p, &v) != 0) /* past the run's end, or too long */
          return fail(x, "Int64List packed varint runs past its run", vat);
        if (f->count++ == 0)
          f->first_int = (int64_t)v;
      }
    } else {
      return fail(x, "Int64List value has a bad wire type", at);
    }
  }
  return 0;
}

/* One Feature into f, merged with what f holds from earlier occurrences
 * of the entry's value (protobuf's merge of a oneof). */
static int feature(rd r, const ex *x, sl_feature *f) {
  while (r.pos < r.end) {
    size_t at = r.pos;
    uint64_t field;
    unsigned wt;
    if (tag(&r, x, "Feature", &field, &wt) != 0)
      return -1;
    if (field < 1 || field > 3) {
      if (skip_unknown(&r, x, "Feature", wt, at) != 0)
        return -1;
      continue;
    }
    sl_feature_kind k = field == 1   ? SL_FEATURE_BYTES
                        : field == 2 ? SL_FEATURE_FLOAT
                                     : SL_FEATURE_INT64;
    if (wt != SL_WT_LEN)
      return fail(x, "Feature list is not length-delimited", at);
    rd l;
    if (sub(&r, x, sl_feature_kind_name(k), &l) != 0)
      return -1;
    if (f->kind != k) { /* another member of the oneof replaces it */
      memset(f, 0, sizeof *f);
      f->kind = k;
    }
    int rc = k == SL_FEATURE_BYTES   ? bytes_list(l, x, f)
             : k == SL_FEATURE_FLOAT ? float_list(l, x, f)
                                     : int64_list(l, x, f);
    if (rc != 0)
      return -1;
  }
  return 0;
}

/* One map entry: the key first (it may follow the value on the wire), then
 * every value occurrence merged; out[k] for a key asked for. */
static int entry(rd r, ex *x, const char *const *keys, size_t nkeys,
                 sl_feature *out) {
  rd scan = r;
  bool has_key = false;
  size_t koff = 0, klen = 0;
  while (scan.pos < scan.end) {
    size_t at = scan.pos;
    uint64_t field;
    unsigned wt;
    if (tag(&scan, x, "feature map entry", &field, &wt) != 0)
      return -1;
    if (field == 1 || field == 2) {
      rd v = {0};
      if (wt != SL_WT_LEN)
        return fail(x,
                    field == 1 ? "feature key is not length-delimited"
                               : "Feature is not length-delimited",
                    at);
      if (sub(&scan, x, field == 1 ? "feature key" : "Feature", &v) != 0)
        return -1;
      if (field == 1) /* the last key wins */
        has_key = true, koff = v.pos, klen = v.end - v.pos;
    } else if (skip_unknown(&scan, x, "feature map entry", wt, at) != 0) {
      return -1;
    }
  }
  x->key = has_key ? r.b + koff : (const uint8_t *)"";
  x->klen = klen;
  sl_feature f = {0};
  while (r.pos < r.end) { /* the structure was checked above */
    uint64_t field;
    unsigned wt;
    rd v = {0};
    if (tag(&r, x, "feature map entry", &field, &wt) != 0)
      return -1;
    if (field != 2) {
      (void)sl_pw_skip(&r, wt, NULL);
      continue;
    }
    if (sub(&r, x, "Feature", &v) != 0 || feature(v, x, &f) != 0)
      return -1;
  }
  for (size_t k = 0; k < nkeys; k++)
    if (strlen(keys[k]) == klen && memcmp(keys[k], x->key, klen) == 0)
      out[k] = f; /* a key given twice: the last entry wins */
  x->key = NULL;
  return 0;
}

static int features(rd r, ex *x, const char *const *keys, size_t nkeys,
                    sl_feature *out) {
  while (r.pos < r.end) {
    size_t at = r.pos;
    uint64_t field;
    unsigned wt;
    if (tag(&r, x, "Features", &field, &wt) != 0)
      return -1;
    if (field != 1) {
      if (skip_unknown(&r, x, "Features", wt, at) != 0)
        return -1;
      continue;
    }
    rd e;
    if (wt != SL_WT_LEN)
      return fail(x, "Features map entry is not length-delimited", at);
    if (sub(&r, x, "Features map entry", &e) != 0 ||
        entry(e, x, keys, nkeys, out) != 0)
      return -1;
  }
  return 0;
}

int sl_example_parse(const uint8_t *record, size_t n, const char *const *keys,
                     size_t nkeys, sl_feature *out, char *why, size_t cap) {
  memset(out, 0, nkeys * sizeof *out);
  ex x = {why, cap, NULL, 0};
  rd r = {record, 0, n};
  while (r.pos < r.end) {
    size_t at = r.pos;
    uint64_t field;
    unsigned wt;
    if (tag(&r, &x, "Example", &field, &wt) != 0)
      return -1;
    if (field != 1) {
      if (skip_unknown(&r, &x, "Example", wt, at) != 0)
        return -1;
      continue;
    }
    rd f;
    if (wt != SL_WT_LEN)
      return fail(&x, "features is not length-delimited", at);
    if (sub(&r, &x, "features", &f) != 0 ||
        features(f, &x, keys, nkeys, out) != 0)
      return -1;
  }
  return 0;
}

const char *sl_feature_kind_name(sl_feature_kind k) {
  switch (k) {
  case SL_FEATURE_BYTES:
    return "BytesList";
  case SL_FEATURE_FLOAT:
    return "FloatList";
  case SL_FEATURE_INT64:
    return "Int64List";
  default:
    return "no value";
  }
}
