/* sl_config: the options table (options.def) turned into a parser, a
 * validator, typed getters and a listing.
 *
 * Memory: one fixed array of values, one per option, plus a heap copy of each
 * string value; nothing grows with use. A failing load or validation keeps
 * its list of messages (as long as the file's errors) until the next call. */
#include "loader/config.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"
#include "loader/dmix_spec.h"

typedef enum {
  T_INT,
  T_SIZE,
  T_FLOAT,
  T_FLOATS,
  T_ENUM,
  T_BOOL,
  T_STRING,
  T_STEPS
} opt_type;

typedef struct opt_def {
  const char *key;
  opt_type type;
  const char *def;
  const char *lo, *hi;
  const char *choices;
  const char *help;
} opt_def;

static const opt_def k_opts[SL_OPT_COUNT_] = {
#define SL_OPT_DEF_(id, key, type, def, lo, hi, choices, help)                 \
  {key, T_##type, def, lo, hi, choices, help},
    SL_OPTIONS(SL_OPT_DEF_)
#undef SL_OPT_DEF_
};

static const char *const k_type_names[] = {"int",  "size", "float",  "floats",
                                           "enum", "bool", "string", "steps"};

typedef struct opt_value {
  union {
    int64_t i;  /* INT */
    uint64_t z; /* SIZE */
    double f;   /* FLOAT */
    int e;      /* ENUM: index into choices */
    bool b;     /* BOOL */
    struct {
      int n;
      double v[SL_FLOATS_MAX];
    } fl;           /* FLOATS */
    sl_steps steps; /* STEPS */
  } u;
  char *s; /* STRING (owned) */
} opt_value;

struct sl_config {
  opt_value v[SL_OPT_COUNT_];
  /* The name sl_config_set last set each key by (BY_*): setting a renamed
   * key by its other name too is refused. An INI file resets the keys it
   * sets, as its values replace theirs. */
  unsigned char set_by[SL_OPT_COUNT_];
  sl_log_fn log_fn;
  void *log_user;
  sl_err err;
  /* Every message of the last failing load or validation, one a line, when
   * there were more than err.msg holds (NULL otherwise): what
   * sl_config_errmsg shows. */
  char *msgs;
};

/* ---- Error lists -----------------------------------------------------------
 * A file's errors, each on a line of its own: the first sets the code; the
 * whole list goes on the heap, and err.msg keeps as many as fit (then how
 * many more), which is the message left if the heap copy cannot grow. */

typedef struct err_list {
  sl_err first; /* the code, and the messages that fit */
  int count;    /* messages added */
  int untold;   /* of which not in first.msg */
  char *all;    /* every message, '\n'-separated; NULL if none or no memory */
  size_t len, cap;
  bool oom; /* a message could not be added to all */
} err_list;

static void err_list_add(err_list *l, const sl_err *e) {
  if (l->count++ == 0) {
    l->first = *e;
  } else {
    size_t used = strlen(l->first.msg), need = strlen(e->msg) + 1;
    /* Room for the "(N more errors)" line too. */
    if (l->untold == 0 && used + need + 40 < sizeof l->first.msg) {
      l->first.msg[used] = '\n';
      memcpy(l->first.msg + used + 1, e->msg, need);
    } else {
      l->untold++;
    }
  }
  if (l->oom)
    return;
  size_t n = strlen(e->msg);
  if (l->len + n + 2 > l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 1024;
    while (cap < l->len + n + 2)
      cap *= 2;
    char *p = realloc(l->all, cap);
    if (!p) {
      l->oom = true;
      return;
    }
    l->all = p;
    l->cap = cap;
  }
  if (l->len > 0)
    l->all[l->len++] = '\n';
  memcpy(l->all + l->len, e->msg, n + 1);
  l->len += n;
}

static void err_list_free(err_list *l) {
  free(l->all);
  l->all = NULL;
}

/* Forgets the last failure's message list (every call that starts over). */
static void msgs_clear(sl_config *cfg) {
  free(cfg->msgs);
  cfg->msgs = NULL;
}

/* Hands the list to cfg as its last error; returns its code (SL_OK when
 * empty). name: the file, for the count of untold messages. */
static sl_status err_list_finish(err_list *l, sl_config *cfg,
                                 const char *name) {
  msgs_clear(cfg);
  if (l->count == 0) {
    err_list_free(l);
    return SL_OK;
  }
  if (l->untold > 0) {
    size_t used = strlen(l->first.msg);
    snprintf(l->first.msg + used, sizeof l->first.msg - used,
             "\n%s%s%d more error%s", name ? name : "", name ? ": " : "",
             l->untold, l->untold > 1 ? "s" : "");
  }
  cfg->err = l->first;
  if (l->untold > 0 && !l->oom) {
    cfg->msgs = l->all;
    l->all = NULL;
  }
  err_list_free(l);
  return cfg->err.code;
}

/* ---- Value parsing ------------------------------------------------------- */

static const char *skip_space(const char *p) {
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

static bool parse_int(const char *text, int64_t *out) {
  const char *p = skip_space(text);
  if (*p == '\0')
    return false;
  errno = 0;
  char *end;
  long long x = strtoll(p, &end, 10);
  if (errno != 0 || end == p || *skip_space(end) != '\0')
    return false;
  *out = (int64_t)x;
  return true;
}

static bool parse_double(const char *text, double *out) {
  const char *p = skip_space(text);
  if (*p == '\0')
    return false;
  errno = 0;
  char *end;
  double x = strtod(p, &end);
  if (errno != 0 || end == p || *skip_space(end) != '\0' || !isfinite(x))
    return false;
  *out = x;
  return true;
}

bool sl_parse_size(const char *text, uint64_t *out) {
  const char *p = skip_space(text);
  if (*p == '\0' || *p == '-')
    return false;
  errno = 0;
  char *end;
  double x = strtod(p, &end);
  if (errno != 0 || end == p || !isfinite(x) || x < 0)
    return false;
  const char *u = skip_space(end);
  /* Binary units (KiB = 2^10; K alone too) and decimal ones (kB = 10^3),
   * in any case: "1 gb" is "1 GB", 10^9 bytes, as 1 GiB is 2^30. */
  static const struct {
    const char *name;
    double mult;
  } units[] = {
      {"", 1.0},     {"B", 1.0},      {"K", 0x1p10}, {"KiB", 0x1p10},
      {"M", 0x1p20}, {"MiB", 0x1p20}, {"G", 0x1p30}, {"GiB", 0x1p30},
      {"T", 0x1p40}, {"TiB", 0x1p40}, {"kB", 1e3},   {"KB", 1e3},
      {"MB", 1e6},   {"GB", 1e9},     {"TB", 1e12},
  };
  size_t ulen = strcspn(u, " \t");
  if (*skip_space(u + ulen) != '\0')
    return false;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strlen(units[i].name) == ulen &&
        strncasecmp(u, units[i].name, ulen) == 0) {
      double bytes = x * units[i].mult;
      if (bytes >= 0x1p64 || bytes != floor(bytes))
        return false;
      *out = (uint64_t)bytes;
      return true;
    }
  }
  return false;
}

static bool parse_bool(const char *text, bool *out) {
  static const char *const yes[] = {"true", "yes", "on", "1"};
  static const char *const no[] = {"false", "no", "off", "0"};
  const char *p = skip_space(text);
  size_t n = strlen(p);
  while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
    n--;
  for (size_t i = 0; i < 4; i++) {
    if (strlen(yes[i]) == n && strncasecmp(p, yes[i], n) == 0)
      return *out = true, true;
    if (strlen(no[i]) == n && strncasecmp(p, no[i], n) == 0)
      return *out = false, true;
  }
  return false;
}

/* Index of word (trimmed text) in "a|b|c", or -1. */
static int choice_index(const char *choices, const char *text) {
  const char *p = skip_space(text);
  size_t n = strlen(p);
  while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
    n--;
  int idx = 0;
  for (const char *c = choices; *c;) {
    size_t len = strcspn(c, "|");
    if (len == n && strncmp(c, p, n) == 0)
      return idx;
    c += len;
    if (*c == '|')
      c++;
    idx++;
  }
  return -1;
}

static size_t edit_distance(const char *a, const char *b);

/* The choice nearest to text, written into out: one within the distance
 * nearest_key allows a key, or one that text starts with or that starts
 * with text ("trivialaugment" -> trivial, "randaug" -> randaugment), case
 * ignored. False when none is close or text is empty. */
static bool nearest_choice(const char *choices, const char *text, char *out,
                           size_t cap) {
  char low[64];
  const char *p = skip_space(text);
  size_t n = 0;
  for (; p[n] && n + 1 < sizeof low; n++)
    low[n] = (char)tolower((unsigned char)p[n]);
  if (p[n])
    return false; /* too long to be a typo of a choice */
  while (n > 0 && (low[n - 1] == ' ' || low[n - 1] == '\t'))
    n--;
  low[n] = '\0';
  if (n == 0)
    return false;
  size_t best_d = (size_t)-1, limit = n / 3 + 2;
  for (const char *c = choices; *c;) {
    size_t len = strcspn(c, "|");
    char choice[64];
    if (len < sizeof choice) {
      memcpy(choice, c, len);
      choice[len] = '\0';
      size_t d = edit_distance(low, choice);
      size_t shorter = len < n ? len : n;
      if (shorter >= 3 && strncmp(low, choice, shorter) == 0 && d > 1)
        d = 1; /* one is the other's start */
      if (d <= limit && d < best_d && len < cap) {
        best_d = d;
        memcpy(out, choice, len + 1);
      }
    }
    c += len;
    if (*c == '|')
      c++;
  }
  return best_d != (size_t)-1;
}

/* Is count allowed by a FLOATS choices string like "2" or "1|3"? */
static bool count_allowed(const char *choices, int count) {
  for (const char *c = choices; *c;) {
    if (atoi(c) == count)
      return true;
    c += strcspn(c, "|");
    if (*c == '|')
      c++;
  }
  return false;
}

/* Text of what an option accepts: "1..65536", "mmap|pread", ... */
static void describe_allowed(const opt_def *d, char *buf, size_t len) {
  switch (d->type) {
  case T_INT:
  case T_FLOAT:
    snprintf(buf, len, "%s..%s", d->lo, d->hi);
    break;
  case T_SIZE:
    snprintf(buf, len,
             "%s..%s (units KiB MiB GiB TiB = 1024^n, also K M G T; kB MB "
             "GB TB = 1000^n; any case)",
             d->lo, d->hi);
    break;
  case T_FLOATS:
    snprintf(buf, len, "%s comma-separated numbers in %s..%s", d->choices,
             d->lo, d->hi);
    break;
  case T_ENUM:
    snprintf(buf, len, "%s", d->choices);
    break;
  case T_BOOL:
    snprintf(buf, len, "true|false");
    break;
  case T_STRING:
    snprintf(buf, len, "any text");
    break;
  case T_STEPS:
    snprintf(buf, len, "up to %d 'epoch:res' pairs, epochs increasing from 0",
             SL_STEPS_MAX);
    break;
  }
}

static bool parse_steps(const char *text, sl_steps *out, char *why,
                        size_t why_len) {
  sl_steps st = {0};
  const char *p = skip_space(text);
  if (*p == '\0') {
    *out = st;
    return true;
  }
  while (*p) {
    if (st.n == SL_STEPS_MAX) {
      snprintf(why, why_len, "more than %d steps", SL_STEPS_MAX);
      return false;
    }
    char *end;
    errno = 0;
    long long ep = strtoll(p, &end, 10);
    if (end == p || errno || ep < 0) {
      snprintf(why, why_len, "step %d: expected an epoch number", st.n + 1);
      return false;
    }
    p = skip_space(end);
    if (*p != ':') {
      snprintf(why, why_len, "step %d: expected ':' after the epoch", st.n + 1);
      return false;
    }
    p = skip_space(p + 1);
    long long res = strtoll(p, &end, 10);
    if (end == p || errno || res < 8 || res > 8192) {
      snprintf(why, why_len, "step %d: resolution must be in 8..8192",
               st.n + 1);
      return false;
    }
    if (st.n == 0 && ep != 0) {
      snprintf(why, why_len, "the first step must start at epoch 0");
      return false;
    }
    if (st.n > 0 && ep <= st.v[st.n - 1].epoch) {
      snprintf(why, why_len, "step %d: epochs must increase", st.n + 1);
      return false;
    }
    st.v[st.n].epoch = ep;
    st.v[st.n].res = res;
    st.n++;
    p = skip_space(end);
    if (*p == ',')
      p = skip_space(p + 1);
    else if (*p != '\0') {
      snprintf(why, why_len, "step %d: expected ',' between steps", st.n);
      return false;
    }
  }
  *out = st;
  return true;
}

/* Parses text as option d into *out (not touching out->s ownership: a STRING
 * result is returned freshly allocated in out->s). On failure writes why. */
static bool parse_value(const opt_def *d, const char *text, opt_value *out,
                        char *why, size_t why_len) {
  char allowed[128];
  describe_allowed(d, allowed, sizeof allowed);
  why[0] = '\0';
  switch (d->type) {
  case T_INT: {
    int64_t x, lo, hi;
    if (!parse_int(d->lo, &lo) || !parse_int(d->hi, &hi)) {
      snprintf(why, why_len, "options table: bad bounds for %s", d->key);
      return false;
    }
    if (!parse_int(text, &x) || x < lo || x > hi) {
      snprintf(why, why_len, "expected an integer in %s", allowed);
      return false;
    }
    out->u.i = x;
    return true;
  }
  case T_SIZE: {
    uint64_t x, lo, hi;
    if (!sl_parse_size(d->lo, &lo) || !sl_parse_size(d->hi, &hi)) {
      snprintf(why, why_len, "options table: bad bounds for %s", d->key);
      return false;
    }
    if (!sl_parse_size(text, &x) || x < lo || x > hi) {
      snprintf(why, why_len, "expected a size in %s", allowed);
      return false;
    }
    out->u.z = x;
    return true;
  }
  case T_FLOAT: {
    double x, lo, hi;
    if (!parse_double(d->lo, &lo) || !parse_double(d->hi, &hi)) {
      snprintf(why, why_len, "options table: bad bounds for %s", d->key);
      return false;
    }
    if (!parse_double(text, &x) || x < lo || x > hi) {
      snprintf(why, why_len, "expected a number in %s", allowed);
      return false;
    }
    out->u.f = x;
    return true;
  }
  case T_FLOATS: {
    double lo, hi;
    if (!parse_double(d->lo, &lo) || !parse_double(d->hi, &hi)) {
      snprintf(why, why_len, "options table: bad bounds for %s", d->key);
      return false;
    }
    int n = 0;
    char item[64];
    for (const char *p = text;;) {
      size_t len = strcspn(p, ",");
      double x;
      if (n == SL_FLOATS_MAX || len >= sizeof item) {
        snprintf(why, why_len, "expected %s", allowed);
        return false;
      }
      memcpy(item, p, len);
      item[len] = '\0';
      if (!parse_double(item, &x) || x < lo || x > hi) {
        snprintf(why, why_len, "item %d is not a number in %s..%s; expected %s",
                 n + 1, d->lo, d->hi, allowed);
        return false;
      }
      out->u.fl.v[n++] = x;
      p += len;
      if (*p != ',')
        break;
      p++;
    }
    if (!count_allowed(d->choices, n)) {
      snprintf(why, why_len, "%d value%s given; expected %s", n,
               n == 1 ? "" : "s", allowed);
      return false;
    }
    out->u.fl.n = n;
    return true;
  }
  case T_ENUM: {
    int idx = choice_index(d->choices, text);
    if (idx < 0) {
      char near[64];
      if (nearest_choice(d->choices, text, near, sizeof near))
        snprintf(why, why_len, "expected one of %s (did you mean %s?)", allowed,
                 near);
      else
        snprintf(why, why_len, "expected one of %s", allowed);
      return false;
    }
    out->u.e = idx;
    return true;
  }
  case T_BOOL:
    if (!parse_bool(text, &out->u.b)) {
      snprintf(why, why_len, "expected true or false");
      return false;
    }
    return true;
  case T_STRING: {
    const char *p = skip_space(text);
    out->s = strdup(p);
    if (!out->s) {
      snprintf(why, why_len, "out of memory");
      return false;
    }
    return true;
  }
  case T_STEPS:
    return parse_steps(text, &out->u.steps, why, why_len);
  }
  return false;
}

/* ---- Key lookup and suggestions ----------------------------------------- */

/* Old names of renamed keys, each still read as its new key. "layout" is
 * kept for a batch's NCHW/NHWC (augment.layout): the entry kind and an
 * HDF5 array's axis order took words of their own. */
static const struct {
  const char *old_key;
  sl_opt id;
} k_old_names[] = {
    {"dataset.layout", SL_OPT_DATASET_ENTRIES},
    {"dataset.array_layout", SL_OPT_DATASET_AXIS_ORDER},
};

static int find_key(const char *key) {
  for (int i = 0; i < SL_OPT_COUNT_; i++)
    if (strcmp(k_opts[i].key, key) == 0)
      return i;
  for (size_t i = 0; i < sizeof k_old_names / sizeof k_old_names[0]; i++)
    if (strcmp(k_old_names[i].old_key, key) == 0)
      return (int)k_old_names[i].id;
  return -1;
}

/* The old name of option id; NULL if it has none. */
static const char *old_name_of(int id) {
  for (size_t i = 0; i < sizeof k_old_names / sizeof k_old_names[0]; i++)
    if ((int)k_old_names[i].id == id)
      return k_old_names[i].old_key;
  return NULL;
}

/* Which name a key was set by: none, its own, or its old one. */
enum { BY_NONE, BY_KEY, BY_OLD_NAME };

static unsigned char named_by(const char *key, int id) {
  return strcmp(key, k_opts[id].key) == 0 ? BY_KEY : BY_OLD_NAME;
}

/* The one-line note that key is an old name, through the config's log
 * callback (none set: nothing). */
static void note_old_name(const sl_config *cfg, const char *where,
                          const char *key, int id) {
  if (!cfg->log_fn || named_by(key, id) != BY_OLD_NAME)
    return;
  char msg[640]; /* where (320) and an INI key (256) fit */
  snprintf(msg, sizeof msg, "%s%s is the old name of %s; it still works", where,
           key, k_opts[id].key);
  cfg->log_fn(cfg->log_user, SL_LOG_INFO, msg);
}

/* A key set by both its names is refused: one would silently undo the
 * other. after: what follows the message ("" for nothing). */
static sl_status both_names(sl_err *err, const char *where, int id,
                            const char *after) {
  const char *old = old_name_of(id), *key = k_opts[id].key;
  return sl_err_set(err, SL_ECONFIG,
                    "%s%s and %s are one key (%s is its old name): set only "
                    "%s%s",
                    where, old, key, old, key, after);
}

/* Levenshtein distance, bounded to short strings (keys are < 64 bytes). */
static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 63 || lb > 63)
    return (size_t)-1;
  size_t row[64];
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t cost = (a[i - 1] == b[j - 1]) ? 0 : 1;
      size_t best = diag + cost;
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

/* The known key nearest to key, comparing whole keys and the part after the
 * dot (so "[loader] path" suggests dataset.path); NULL if nothing is close. */
static const char *nearest_key(const char *key) {
  const char *best = NULL;
  size_t best_d = (size_t)-1;
  const char *dot = strchr(key, '.');
  const char *leaf = dot ? dot + 1 : key;
  for (int i = 0; i < SL_OPT_COUNT_; i++) {
    size_t d = edit_distance(key, k_opts[i].key);
    const char *kdot = strchr(k_opts[i].key, '.');
    size_t dl = edit_distance(leaf, kdot + 1);
    if (dl != (size_t)-1 && dl + 1 < d)
      d = dl + 1;
    if (d < best_d) {
      best_d = d;
      best = k_opts[i].key;
    }
  }
  size_t limit = strlen(leaf) / 3 + 2;
  return best_d <= limit ? best : NULL;
}

static sl_status unknown_key(sl_err *err, const char *where, const char *key) {
  const char *near = nearest_key(key);
  if (near)
    return sl_err_set(err, SL_ECONFIG, "%sunknown key '%s' (did you mean %s?)",
                      where, key, near);
  return sl_err_set(
      err, SL_ECONFIG,
      "%sunknown key '%s' (`sluice config --list` shows them all)", where, key);
}

/* ---- Values: set, copy, free --------------------------------------------- */

static void value_free(const opt_def *d, opt_value *v) {
  if (d->type == T_STRING) {
    free(v->s);
    v->s = NULL;
  }
}

/* Parses text into slot id of vals, replacing the old value on success.
 * name: the key as given (an old name stays as the user wrote it). */
static sl_status set_value(opt_value *vals, int id, const char *name,
                           const char *text, const char *where, sl_err *err) {
  const opt_def *d = &k_opts[id];
  opt_value nv = vals[id];
  nv.s = NULL;
  char why[256];
  if (!parse_value(d, text, &nv, why, sizeof why))
    return sl_err_set(err, SL_ECONFIG, "%s%s = '%s': %s", where, name, text,
                      why);
  value_free(d, &vals[id]);
  vals[id] = nv;
  return SL_OK;
}

static void values_free(opt_value *vals) {
  for (int i = 0; i < SL_OPT_COUNT_; i++)
    value_free(&k_opts[i], &vals[i]);
}

static bool values_copy(opt_value *dst, const opt_value *src) {
  memcpy(dst, src, sizeof(opt_value) * SL_OPT_COUNT_);
  bool ok = true;
  for (int i = 0; i < SL_OPT_COUNT_; i++) {
    if (k_opts[i].type == T_STRING) {
      dst[i].s = src[i].s ? strdup(src[i].s) : NULL;
      if (src[i].s && !dst[i].s)
        ok = false;
    }
  }
  return ok;
}

/* ---- Cross-field validation --------------------------------------------- */

typedef struct check_ctx {
  const opt_value *v;
  err_list *list;
  const char *name; /* the file, prefixed to each message; NULL for none */
  const bool *bad;  /* keys whose line was bad (NULL: none), see keys_read */
} check_ctx;

/* True when no key of the relation had a bad line: a bad value leaves the
 * key at its old value, and a relation on that would be an echo of the
 * line's own error, not a new one. The settings that choose which
 * relations hold (resolution.schedule, augment.crop) are not among them:
 * a typo there leaves the default, whose relations are still worth telling
 * in the same run. */
static bool keys_read(const check_ctx *c, const int *ids, size_t n) {
  for (size_t i = 0; c->bad && i < n; i++)
    if (c->bad[ids[i]])
      return false;
  return true;
}
#define KEYS_READ_(c, ...)                                                     \
  keys_read(c, (const int[]){__VA_ARGS__},                                     \
            sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

static void check_fail(check_ctx *c, const char *fmt, ...) SL_PRINTF(2, 3);
static void check_fail(check_ctx *c, const char *fmt, ...) {
  char body[SL_ERRMSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  sl_err e;
  sl_err_set(&e, SL_ECONFIG, "%s%s%s", c->name ? c->name : "",
             c->name ? ": " : "", body);
  err_list_add(c->list, &e);
}

/* Relations between options, each checked only when the setting that
 * reads its keys is chosen (a constant schedule never reads
 * resolution.min, a center crop never augment.scale). Every relation
 * that fails is added to the list, not only the first. */
static void validate_values(check_ctx *c) {
  const opt_value *v = c->v;
#define V(id) v[SL_OPT_##id]
#define K(id) SL_OPT_##id
  bool linear = V(RESOLUTION_SCHEDULE).u.e == SL_SCHEDULE_LINEAR;
  bool steps = V(RESOLUTION_SCHEDULE).u.e == SL_SCHEDULE_STEPS;
  bool rrc = V(AUGMENT_CROP).u.e == SL_CROP_RANDOM_RESIZED;
  if (linear && V(RESOLUTION_MIN).u.i > V(RESOLUTION_MAX).u.i &&
      KEYS_READ_(c, K(RESOLUTION_MIN), K(RESOLUTION_MAX)))
    check_fail(c,
               "resolution.min (%lld) must not exceed resolution.max "
               "(%lld) with resolution.schedule = linear",
               (long long)V(RESOLUTION_MIN).u.i,
               (long long)V(RESOLUTION_MAX).u.i);
  if (linear && V(RESOLUTION_START_EPOCH).u.i > V(RESOLUTION_END_EPOCH).u.i &&
      KEYS_READ_(c, K(RESOLUTION_START_EPOCH), K(RESOLUTION_END_EPOCH)))
    check_fail(c,
               "resolution.start_epoch (%lld) must not exceed "
               "resolution.end_epoch (%lld)",
               (long long)V(RESOLUTION_START_EPOCH).u.i,
               (long long)V(RESOLUTION_END_EPOCH).u.i);
  const sl_steps *st = &V(RESOLUTION_STEPS).u.steps;
  if (steps && st->n == 0 && KEYS_READ_(c, K(RESOLUTION_STEPS)))
    check_fail(c, "resolution.schedule = steps needs resolution.steps "
                  "(e.g. '0:128, 6:160, 12:224')");
  /* resolution.max is the bound of every schedule: a step above it is
   * refused rather than trained at silently. */
  int top = -1;
  for (int i = 0; steps && i < st->n; i++)
    if (st->v[i].res > V(RESOLUTION_MAX).u.i &&
        (top < 0 || st->v[i].res > st->v[top].res))
      top = i;
  if (top >= 0 && KEYS_READ_(c, K(RESOLUTION_STEPS), K(RESOLUTION_MAX)))
    check_fail(c,
               "resolution.steps: step %d (%lld:%lld) exceeds resolution.max "
               "(%lld), the largest resolution any epoch may take: raise "
               "resolution.max to %lld or lower the step",
               top + 1, (long long)st->v[top].epoch, (long long)st->v[top].res,
               (long long)V(RESOLUTION_MAX).u.i, (long long)st->v[top].res);
  if (V(LOADER_RANK).u.i >= V(LOADER_WORLD_SIZE).u.i &&
      KEYS_READ_(c, K(LOADER_RANK), K(LOADER_WORLD_SIZE)))
    check_fail(c,
               "loader.rank (%lld) must be less than loader.world_size "
               "(%lld)",
               (long long)V(LOADER_RANK).u.i,
               (long long)V(LOADER_WORLD_SIZE).u.i);
  if (rrc && V(AUGMENT_SCALE).u.fl.v[0] > V(AUGMENT_SCALE).u.fl.v[1] &&
      KEYS_READ_(c, K(AUGMENT_SCALE)))
    check_fail(c,
               "augment.scale: the lower bound (%g) exceeds the upper "
               "(%g)",
               V(AUGMENT_SCALE).u.fl.v[0], V(AUGMENT_SCALE).u.fl.v[1]);
  if (rrc && V(AUGMENT_RATIO).u.fl.v[0] > V(AUGMENT_RATIO).u.fl.v[1] &&
      KEYS_READ_(c, K(AUGMENT_RATIO)))
    check_fail(c,
               "augment.ratio: the lower bound (%g) exceeds the upper "
               "(%g)",
               V(AUGMENT_RATIO).u.fl.v[0], V(AUGMENT_RATIO).u.fl.v[1]);
  if (V(AUGMENT_MEAN).u.fl.n != V(AUGMENT_STD).u.fl.n &&
      KEYS_READ_(c, K(AUGMENT_MEAN), K(AUGMENT_STD)))
    check_fail(c, "augment.mean has %d values but augment.std has %d",
               V(AUGMENT_MEAN).u.fl.n, V(AUGMENT_STD).u.fl.n);
  if (V(AUGMENT_COLOR_JITTER).u.fl.v[3] > 0.5 &&
      KEYS_READ_(c, K(AUGMENT_COLOR_JITTER)))
    check_fail(c,
               "augment.color_jitter: hue %g exceeds 0.5 (ColorJitter's "
               "bound)",
               V(AUGMENT_COLOR_JITTER).u.fl.v[3]);
  if (V(AUGMENT_BLUR_KERNEL).u.i % 2 == 0 &&
      KEYS_READ_(c, K(AUGMENT_BLUR_KERNEL)))
    check_fail(c,
               "augment.blur_kernel: %lld is even "
               "(a kernel has a center: odd sizes only)",
               (long long)V(AUGMENT_BLUR_KERNEL).u.i);
  if (V(AUGMENT_AUTO).u.e == SL_AUTO_RANDAUGMENT &&
      V(AUGMENT_AUTO_MAGNITUDE).u.f > (double)(V(AUGMENT_AUTO_BINS).u.i - 1) &&
      KEYS_READ_(c, K(AUGMENT_AUTO_MAGNITUDE), K(AUGMENT_AUTO_BINS)))
    check_fail(c,
               "augment.auto_magnitude: %g is past the last of "
               "augment.auto_bins = %lld bins (0..%lld)",
               V(AUGMENT_AUTO_MAGNITUDE).u.f,
               (long long)V(AUGMENT_AUTO_BINS).u.i,
               (long long)V(AUGMENT_AUTO_BINS).u.i - 1);
  static const sl_opt ranges[] = {SL_OPT_AUGMENT_BLUR_SIGMA,
                                  SL_OPT_AUGMENT_ERASING_SCALE,
                                  SL_OPT_AUGMENT_ERASING_RATIO};
  for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++)
    if (v[ranges[k]].u.fl.v[0] > v[ranges[k]].u.fl.v[1] &&
        KEYS_READ_(c, (int)ranges[k]))
      check_fail(c, "%s: the lower bound (%g) exceeds the upper (%g)",
                 k_opts[ranges[k]].key, v[ranges[k]].u.fl.v[0],
                 v[ranges[k]].u.fl.v[1]);
  if (KEYS_READ_(c, K(DATASET_MIX), K(DATASET_WEIGHTS))) {
    sl_dmix_spec spec;
    sl_err e;
    if (sl_dmix_spec_parse(&spec, V(DATASET_MIX).s, V(DATASET_WEIGHTS).s, &e) !=
        SL_OK)
      check_fail(c, "%s", e.msg);
  }
  if (V(DATASET_MIX).s[0] && V(DATASET_PATH).s[0] &&
      KEYS_READ_(c, K(DATASET_MIX), K(DATASET_PATH)))
    check_fail(c,
               "dataset.mix and dataset.path are both set (dataset.path = "
               "%s): a mixed loader reads the datasets dataset.mix lists; "
               "put that one among them",
               V(DATASET_PATH).s);
#undef K
#undef V
}

/* ---- Public API ------------------------------------------------------------
 */

sl_status sl_config_create(sl_config **out) {
  if (!out)
    return SL_EINVAL;
  *out = NULL;
  sl_config *cfg = calloc(1, sizeof *cfg);
  if (!cfg)
    return SL_ENOMEM;
  for (int i = 0; i < SL_OPT_COUNT_; i++) {
    sl_status st = set_value(cfg->v, i, k_opts[i].key, k_opts[i].def,
                             "default: ", &cfg->err);
    if (st != SL_OK) { /* a bad default is a bug in options.def */
      values_free(cfg->v);
      free(cfg);
      return st;
    }
  }
  *out = cfg;
  return SL_OK;
}

void sl_config_destroy(sl_config *cfg) {
  if (!cfg)
    return;
  values_free(cfg->v);
  free(cfg->msgs);
  free(cfg);
}

sl_status sl_config_set(sl_config *cfg, const char *key, const char *value) {
  if (!cfg)
    return SL_EINVAL;
  sl_err_clear(&cfg->err);
  msgs_clear(cfg);
  if (!key || !value)
    return sl_err_set(&cfg->err, SL_EINVAL, "sl_config_set: NULL key or value");
  int id = find_key(key);
  if (id < 0)
    return unknown_key(&cfg->err, "", key);
  unsigned char by = named_by(key, id);
  if (cfg->set_by[id] != BY_NONE && cfg->set_by[id] != by)
    return both_names(&cfg->err, "", id, "");
  sl_status st = set_value(cfg->v, id, key, value, "", &cfg->err);
  if (st == SL_OK) {
    cfg->set_by[id] = by;
    note_old_name(cfg, "", key, id);
  }
  return st;
}

sl_status sl_config_get(const sl_config *cfg, const char *key, char *buf,
                        size_t len) {
  if (!cfg || !key || !buf || len == 0)
    return SL_EINVAL;
  int id = find_key(key);
  if (id < 0)
    return SL_ECONFIG;
  return sl_cfg_text(cfg, (sl_opt)id, buf, len);
}

sl_status sl_cfg_text(const sl_config *cfg, sl_opt id, char *buf, size_t len) {
  if ((unsigned)id >= SL_OPT_COUNT_ || len == 0)
    return SL_EINVAL;
  const opt_def *d = &k_opts[id];
  const opt_value *v = &cfg->v[id];
  int n = 0;
  switch (d->type) {
  case T_INT:
    n = snprintf(buf, len, "%lld", (long long)v->u.i);
    break;
  case T_SIZE: {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    uint64_t x = v->u.z;
    int u = 0;
    while (u < 4 && x != 0 && x % 1024 == 0) {
      x /= 1024;
      u++;
    }
    n = snprintf(buf, len, "%llu%s", (unsigned long long)x, units[u]);
    break;
  }
  case T_FLOAT:
    n = snprintf(buf, len, "%.17g", v->u.f);
    break;
  case T_FLOATS: {
    size_t off = 0;
    for (int i = 0; i < v->u.fl.n; i++) {
      int k = snprintf(buf + off, len - off, "%s%.17g", i ? ", " : "",
                       v->u.fl.v[i]);
      if (k < 0 || (size_t)k >= len - off)
        return SL_ETOOBIG;
      off += (size_t)k;
    }
    return SL_OK;
  }
  case T_ENUM: {
    const char *c = d->choices;
    for (int i = 0; i < v->u.e; i++)
      c += strcspn(c, "|") + 1;
    n = snprintf(buf, len, "%.*s", (int)strcspn(c, "|"), c);
    break;
  }
  case T_BOOL:
    n = snprintf(buf, len, "%s", v->u.b ? "true" : "false");
    break;
  case T_STRING:
    n = snprintf(buf, len, "%s", v->s ? v->s : "");
    break;
  case T_STEPS: {
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < v->u.steps.n; i++) {
      int k = snprintf(buf + off, len - off, "%s%lld:%lld", i ? ", " : "",
                       (long long)v->u.steps.v[i].epoch,
                       (long long)v->u.steps.v[i].res);
      if (k < 0 || (size_t)k >= len - off)
        return SL_ETOOBIG;
      off += (size_t)k;
    }
    return SL_OK;
  }
  }
  return (n < 0 || (size_t)n >= len) ? SL_ETOOBIG : SL_OK;
}

sl_status sl_cfg_check(const sl_config *cfg, sl_err *err) {
  err_list l = {0};
  check_ctx c = {.v = cfg->v, .list = &l};
  validate_values(&c);
  sl_err_clear(err);
  if (l.count > 0 && err)
    *err = l.first;
  err_list_free(&l);
  return l.count > 0 ? l.first.code : SL_OK;
}

sl_status sl_config_validate(sl_config *cfg) {
  if (!cfg)
    return SL_EINVAL;
  sl_err_clear(&cfg->err);
  err_list l = {0};
  check_ctx c = {.v = cfg->v, .list = &l};
  validate_values(&c);
  return err_list_finish(&l, cfg, NULL);
}

void sl_config_set_log(sl_config *cfg, sl_log_fn fn, void *user) {
  if (!cfg)
    return;
  cfg->log_fn = fn;
  cfg->log_user = user;
}

const char *sl_config_errmsg(const sl_config *cfg) {
  if (!cfg)
    return "NULL config";
  return cfg->msgs ? cfg->msgs : cfg->err.msg;
}

size_t sl_option_count(void) {
  return SL_OPT_COUNT_;
}

sl_status sl_option_info_get(size_t i, sl_option_info *out) {
  if (i >= SL_OPT_COUNT_ || !out)
    return SL_EINVAL;
  const opt_def *d = &k_opts[i];
  out->key = d->key;
  out->type = k_type_names[d->type];
  out->default_value = d->def;
  describe_allowed(d, out->allowed, sizeof out->allowed);
  out->help = d->help;
  return SL_OK;
}

/* ---- INI loading ----------------------------------------------------------
 * inih calls the handler per "key = value"; a reader wrapper counts lines so
 * each message names its line (Debian builds inih without
 * INI_HANDLER_LINENO). The file is applied to a copy of the values, which
 * replaces the config's only if the whole file is good. */

typedef struct ini_ctx {
  const sl_config *cfg; /* for its log callback */
  const char *name;
  char dir[PATH_MAX]; /* the file's folder, for relative paths; "" for none */
  bool partial;       /* apply the good lines even when others are bad */
  opt_value vals[SL_OPT_COUNT_];
  int line_of[SL_OPT_COUNT_];      /* line where each key was set, 0 if not */
  unsigned char by[SL_OPT_COUNT_]; /* the name each was set by (BY_*) */
  bool bad[SL_OPT_COUNT_];         /* keys set on a bad line */
  int line;                        /* line the reader returned last */
  FILE *file;                      /* for the file reader */
  const char *text;                /* for the string reader */
  err_list errs;                   /* the bad lines' messages */
} ini_ctx;

/* inih (as Debian builds it) takes ';' after whitespace as the start of an
 * inline comment; '#' is as common in INI files, so the readers cut a line
 * at a '#' after a space or tab too, keeping its newline. A value cannot
 * hold " #" or " ;" then; "a#b" stays whole. */
static void cut_hash_comment(char *line) {
  for (char *p = line + 1; *p; p++)
    if (*p == '#' && (p[-1] == ' ' || p[-1] == '\t')) {
      size_t n = strlen(p);
      bool nl = n > 0 && p[n - 1] == '\n';
      p[0] = nl ? '\n' : '\0';
      p[nl ? 1 : 0] = '\0';
      return;
    }
}

static void add_error(ini_ctx *ctx, const sl_err *e);

/* inih stops calling the handler on a line it cannot parse, and tells only
 * the first such line: the readers find them (every one) themselves, by
 * inih's rules: a line is blank, a comment, "[section]" or "key = value"
 * (or "key: value"). */
static void check_syntax(ini_ctx *ctx, const char *line) {
  const char *p = skip_space(line);
  if (*p == '\0' || *p == '\n' || *p == '\r' || *p == ';' || *p == '#')
    return;
  if (*p == '[' ? strchr(p, ']') != NULL : strcspn(p, "=:") < strlen(p))
    return;
  sl_err e;
  sl_err_set(&e, SL_ECONFIG,
             "%s:%d: syntax error (expected '[section]' or 'key = value')",
             ctx->name, ctx->line);
  add_error(ctx, &e);
}

static char *ini_file_reader(char *str, int num, void *stream) {
  ini_ctx *ctx = stream;
  char *r = fgets(str, num, ctx->file);
  if (r) {
    ctx->line++;
    cut_hash_comment(r);
    check_syntax(ctx, r);
  }
  return r;
}

static char *ini_string_reader(char *str, int num, void *stream) {
  ini_ctx *ctx = stream;
  if (!ctx->text || *ctx->text == '\0' || num < 2)
    return NULL;
  size_t len = strcspn(ctx->text, "\n");
  if (ctx->text[len] == '\n')
    len++;
  if (len > (size_t)num - 1)
    len = (size_t)num - 1;
  memcpy(str, ctx->text, len);
  str[len] = '\0';
  ctx->text += len;
  ctx->line++;
  cut_hash_comment(str);
  check_syntax(ctx, str);
  return str;
}

static void add_error(ini_ctx *ctx, const sl_err *e) {
  err_list_add(&ctx->errs, e);
}

/* Options naming files: a relative one set in an INI file is taken from
 * the file's folder (as CMake and tox read theirs), so a config works from
 * any working directory; sl_config_set keeps what it is given. */
static bool is_path_option(int id) {
  return id == SL_OPT_DATASET_PATH || id == SL_OPT_DATASET_LABEL_FILE ||
         id == SL_OPT_DATASET_LABELS_PATH;
}

/* A path of an INI file taken from its folder dir: absolute paths and URLs
 * (s3://, https://) stay as they are. Appends to out at *off; false when
 * it does not fit. */
static bool join_path(const char *dir, const char *p, size_t n, char *out,
                      size_t len, size_t *off) {
  bool keep = p[0] == '/' || (n >= 3 && memmem(p, n, "://", 3));
  int k = keep ? snprintf(out + *off, len - *off, "%.*s", (int)n, p)
               : snprintf(out + *off, len - *off, "%s%s%.*s", dir,
                          dir[strlen(dir) - 1] == '/' ? "" : "/", (int)n, p);
  if (k < 0 || (size_t)k >= len - *off)
    return false;
  *off += (size_t)k;
  return true;
}

/* dataset.mix's comma list with each path taken from dir (blank items
 * kept blank, for the list's own check to name). */
static bool join_items(const char *dir, const char *list, char *out,
                       size_t len) {
  size_t off = 0;
  out[0] = '\0';
  for (const char *p = list;;) {
    size_t n = strcspn(p, ",");
    const char *a = skip_space(p);
    size_t m = n - (size_t)(a - p);
    while (m > 0 && (a[m - 1] == ' ' || a[m - 1] == '\t'))
      m--;
    if (m > 0 && !join_path(dir, a, m, out, len, &off))
      return false;
    if (p[n] != ',')
      return true;
    if (off + 2 >= len)
      return false;
    out[off++] = ',';
    out[off++] = ' ';
    out[off] = '\0';
    p += n + 1;
  }
}

/* The folder of the INI file at path, absolute when it can be resolved. */
static void ini_dir(const char *path, char *dir, size_t len) {
  const char *slash = strrchr(path, '/');
  char given[PATH_MAX];
  if (!slash)
    snprintf(given, sizeof given, ".");
  else if (slash == path)
    snprintf(given, sizeof given, "/");
  else
    snprintf(given, sizeof given, "%.*s", (int)(slash - path), path);
  char real[PATH_MAX];
  snprintf(dir, len, "%s", realpath(given, real) ? real : given);
}

/* Every bad line is reported (add_error); a bad value leaves the key as it
 * was, so a later line's error is its own, not an echo. */
static int on_ini_entry(void *user, const char *section, const char *name,
                        const char *value) {
  ini_ctx *ctx = user;
  char where[320];
  snprintf(where, sizeof where, "%s:%d: ", ctx->name, ctx->line);
  char key[256];
  sl_err e;
  sl_err_clear(&e);
  if (section[0] == '\0') {
    sl_err_set(&e, SL_ECONFIG, "%skey '%s' is outside any [section]", where,
               name);
    add_error(ctx, &e);
    return 0;
  }
  snprintf(key, sizeof key, "%s.%s", section, name);
  int id = find_key(key);
  if (id < 0) {
    unknown_key(&e, where, key);
    add_error(ctx, &e);
    return 0;
  }
  unsigned char by = named_by(key, id);
  if (ctx->line_of[id] && ctx->by[id] != by) {
    char after[64];
    snprintf(after, sizeof after, " (the other set on line %d)",
             ctx->line_of[id]);
    both_names(&e, where, id, after);
    add_error(ctx, &e);
    return 0;
  }
  if (ctx->line_of[id]) {
    sl_err_set(&e, SL_ECONFIG, "%sduplicate key %s (first set on line %d)",
               where, key, ctx->line_of[id]);
    add_error(ctx, &e);
    return 0;
  }
  ctx->line_of[id] = ctx->line;
  ctx->by[id] = by;
  note_old_name(ctx->cfg, where, key, id);
  char joined[SL_DMIX_TEXT_MAX];
  const char *p = skip_space(value);
  if (id == SL_OPT_DATASET_MIX && ctx->dir[0]) { /* each path of the list */
    if (!join_items(ctx->dir, p, joined, sizeof joined)) {
      sl_err_set(&e, SL_ECONFIG,
                 "%s%s: the paths from the file's folder are too long", where,
                 key);
      ctx->bad[id] = true;
      add_error(ctx, &e);
      return 0;
    }
    value = joined;
  }
  /* A URL (s3://, https://) is no path to join. */
  if (is_path_option(id) && ctx->dir[0] && *p && *p != '/' &&
      !strstr(p, "://")) {
    int n = snprintf(joined, sizeof joined, "%s%s%s", ctx->dir,
                     ctx->dir[strlen(ctx->dir) - 1] == '/' ? "" : "/", p);
    if (n < 0 || (size_t)n >= sizeof joined) {
      sl_err_set(&e, SL_ECONFIG,
                 "%s%s: the path from the file's folder is "
                 "too long",
                 where, key);
      ctx->bad[id] = true;
      add_error(ctx, &e);
      return 0;
    }
    value = joined;
  }
  if (set_value(ctx->vals, id, key, value, where, &e) != SL_OK) {
    ctx->bad[id] = true;
    add_error(ctx, &e);
    return 0;
  }
  return 1;
}

/* Parses the whole file, reporting every bad line, then checks the
 * relations between the values it leaves (but not those on a key of a bad
 * line), so one run shows every error. The values replace the config's
 * only if there is no error, or with ctx->partial. */
static sl_status load_ini(sl_config *cfg, ini_ctx *ctx, ini_reader reader) {
  msgs_clear(cfg);
  ctx->cfg = cfg;
  if (!values_copy(ctx->vals, cfg->v)) {
    values_free(ctx->vals);
    return sl_err_set(&cfg->err, SL_ENOMEM, "%s: out of memory", ctx->name);
  }
  int rc = ini_parse_stream(reader, ctx, on_ini_entry, ctx);
  if (rc > 0 && ctx->errs.count == 0) {
    sl_err e;
    sl_err_set(&e, SL_ECONFIG,
               "%s:%d: syntax error (expected '[section]' or 'key = value')",
               ctx->name, rc);
    add_error(ctx, &e);
  } else if (rc < 0) {
    sl_err e;
    sl_err_set(&e, SL_ENOMEM, "%s: parser out of memory", ctx->name);
    add_error(ctx, &e);
  }
  check_ctx c = {
      .v = ctx->vals, .list = &ctx->errs, .name = ctx->name, .bad = ctx->bad};
  validate_values(&c);
  bool apply = ctx->errs.count == 0 || (ctx->partial && rc >= 0);
  sl_status st = err_list_finish(&ctx->errs, cfg, ctx->name);
  if (apply) {
    values_free(cfg->v);
    memcpy(cfg->v, ctx->vals, sizeof cfg->v);
    for (int i = 0; i < SL_OPT_COUNT_; i++)
      if (ctx->line_of[i])
        cfg->set_by[i] = BY_NONE;
  } else {
    values_free(ctx->vals);
  }
  return st;
}

static sl_status load_ini_file(sl_config *cfg, const char *path, bool partial) {
  if (!cfg)
    return SL_EINVAL;
  sl_err_clear(&cfg->err);
  msgs_clear(cfg);
  if (!path)
    return sl_err_set(&cfg->err, SL_EINVAL, "sl_config_load_ini: NULL path");
  ini_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx)
    return sl_err_set(&cfg->err, SL_ENOMEM, "%s: out of memory", path);
  ctx->name = path;
  ctx->partial = partial;
  ini_dir(path, ctx->dir, sizeof ctx->dir);
  ctx->file = fopen(path, "r");
  if (!ctx->file) {
    sl_status st = sl_err_errno(&cfg->err, SL_EIO, errno, "%s", path);
    free(ctx);
    return st;
  }
  sl_status st = load_ini(cfg, ctx, ini_file_reader);
  if (st == SL_OK && ferror(ctx->file))
    st = sl_err_set(&cfg->err, SL_EIO, "%s: read error", path);
  fclose(ctx->file);
  free(ctx);
  return st;
}

sl_status sl_config_load_ini(sl_config *cfg, const char *path) {
  return load_ini_file(cfg, path, false);
}

sl_status sl_config_check_ini(sl_config *cfg, const char *path) {
  return load_ini_file(cfg, path, true);
}

sl_status sl_config_load_ini_string(sl_config *cfg, const char *text,
                                    const char *name) {
  if (!cfg)
    return SL_EINVAL;
  sl_err_clear(&cfg->err);
  msgs_clear(cfg);
  if (!text)
    return sl_err_set(&cfg->err, SL_EINVAL,
                      "sl_config_load_ini_string: NULL text");
  ini_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx)
    return sl_err_set(&cfg->err, SL_ENOMEM, "out of memory");
  ctx->name = name ? name : "<string>";
  ctx->text = text;
  sl_status st = load_ini(cfg, ctx, ini_string_reader);
  free(ctx);
  return st;
}

/* ---- Internal getters ------------------------------------------------------
 */

int64_t sl_cfg_int(const sl_config *cfg, sl_opt id) {
  return cfg->v[id].u.i;
}
uint64_t sl_cfg_size(const sl_config *cfg, sl_opt id) {
  return cfg->v[id].u.z;
}
double sl_cfg_float(const sl_config *cfg, sl_opt id) {
  return cfg->v[id].u.f;
}
const double *sl_cfg_floats(const sl_config *cfg, sl_opt id, int *n) {
  if (n)
    *n = cfg->v[id].u.fl.n;
  return cfg->v[id].u.fl.v;
}
void sl_cfg_mean_std(const sl_config *cfg, float mean[3], float std[3]) {
  int nm, ns;
  const double *m = sl_cfg_floats(cfg, SL_OPT_AUGMENT_MEAN, &nm);
  const double *s = sl_cfg_floats(cfg, SL_OPT_AUGMENT_STD, &ns);
  for (int c = 0; c < 3; c++) {
    mean[c] = (float)m[nm == 3 ? c : 0];
    std[c] = (float)s[ns == 3 ? c : 0];
  }
}
int sl_cfg_enum(const sl_config *cfg, sl_opt id) {
  return cfg->v[id].u.e;
}
bool sl_cfg_bool(const sl_config *cfg, sl_opt id) {
  return cfg->v[id].u.b;
}
const char *sl_cfg_str(const sl_config *cfg, sl_opt id) {
  return cfg->v[id].s ? cfg->v[id].s : "";
}
const sl_steps *sl_cfg_steps(const sl_config *cfg, sl_opt id) {
  return &cfg->v[id].u.steps;
}
void sl_cfg_log(const sl_config *cfg, sl_log_fn *fn, void **user) {
  *fn = cfg->log_fn;
  *user = cfg->log_user;
}
sl_err *sl_cfg_err(sl_config *cfg) {
  msgs_clear(cfg); /* the caller writes a new message into err */
  return &cfg->err;
}
