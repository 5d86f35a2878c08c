/* Parsing an image list's lines (image_list.h). */
#include "formats/files/image_list.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static bool blank(char c) {
  return c == ' ' || c == '\t';
}

/* An integer -1 .. INT32_MAX in s[0, n) (optional '-' for -1 only). */
static bool parse_label(const char *s, size_t n, int32_t *out) {
  bool neg = n > 0 && s[0] == '-';
  size_t i = neg, d = 0;
  int64_t v = 0;
  for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, d++) {
    v = v * 10 + (s[i] - '0');
    if (v > INT32_MAX)
      return false;
  }
  if (d == 0 || i != n || (neg && v != 1))
    return false;
  *out = neg ? -1 : (int32_t)v;
  return true;
}

/* A float in s[0, n): [-]digits[.digits][e[-]digits], as %f and %g write
 * them (no locale, no strtod: the field is not NUL-terminated). */
static bool parse_float(const char *s, size_t n, float *out) {
  size_t i = 0;
  bool neg = false;
  if (i < n && (s[i] == '-' || s[i] == '+'))
    neg = s[i++] == '-';
  double v = 0, scale = 1;
  size_t digits = 0;
  for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
    v = v * 10 + (s[i] - '0');
  if (i < n && s[i] == '.')
    for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
      v += (s[i] - '0') * (scale /= 10);
  if (digits == 0 || digits > 40)
    return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    bool eneg = i < n && s[i] == '-';
    if (i < n && (s[i] == '-' || s[i] == '+'))
      i++;
    int e = 0;
    size_t ed = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9' && ed < 4; i++, ed++)
      e = e * 10 + (s[i] - '0');
    if (ed == 0)
      return false;
    v *= pow(10.0, eneg ? -e : e);
  }
  if (i != n || !isfinite(v) || v > 3.4e38)
    return false;
  *out = (float)(neg ? -v : v);
  return true;
}

bool sl_list_image_name(const char *name, size_t len) {
  static const char *const ext[] = {".jpg", ".jpeg", ".png", ".webp"};
  for (size_t k = 0; k < sizeof ext / sizeof ext[0]; k++) {
    size_t l = strlen(ext[k]);
    if (len >= l && strncasecmp(name + len - l, ext[k], l) == 0)
      return true;
  }
  return false;
}

/* INDEX\tLABEL...\tPATH */
static const char *im2rec(const char *s, size_t n, sl_list_line *out,
                          float *targets, uint32_t cap, char *why,
                          size_t cap_why) {
  const char *tab = memchr(s, '\t', n);
  const char *last = NULL;
  for (size_t i = n; i > 0; i--)
    if (s[i - 1] == '\t') {
      last = s + i - 1;
      break;
    }
  if (!tab || last == tab) {
    snprintf(why, cap_why,
             "not im2rec's INDEX<TAB>LABEL<TAB>PATH (fewer than 3 "
             "tab-separated fields)");
    return why;
  }
  bool digits = tab > s;
  for (const char *p = s; p < tab; p++)
    digits &= *p >= '0' && *p <= '9';
  if (!digits) {
    snprintf(why, cap_why, "the index field is not an unsigned integer");
    return why;
  }
  uint32_t k = 0;
  const char *f = tab + 1;
  while (f <= last) {
    const char *e = memchr(f, '\t', (size_t)(last - f) + 1);
    float v;
    if (k == cap) {
      snprintf(why, cap_why, "more than %u labels", cap);
      return why;
    }
    if (!parse_float(f, (size_t)(e - f), &v)) {
      snprintf(why, cap_why, "label %u ('%.*s') is not a number", k + 1,
               (int)((e - f) > 40 ? 40 : (e - f)), f);
      return why;
    }
    targets[k++] = v;
    f = e + 1;
  }
  out->path = last + 1;
  out->path_len = n - (size_t)(last + 1 - s);
  if (out->path_len == 0) {
    snprintf(why, cap_why, "the path field is empty");
    return why;
  }
  float l0 = targets[0];
  bool integer = floorf(l0) == l0 && l0 >= -1.0f && l0 < 2147483648.0f;
  if (k == 1 && !integer) {
    snprintf(why, cap_why, "label %g is not a class index (an integer)",
             (double)l0);
    return why;
  }
  out->label = integer ? (int32_t)l0 : -1;
  out->ntargets = k > 1 ? k : 0;
  return NULL;
}

/* PATH LABEL */
static const char *path_label(const char *s, size_t n, sl_list_line *out,
                              char *why, size_t cap_why) {
  size_t e = n;
  while (e > 0 && !blank(s[e - 1]))
    e--;
  if (e == 0) {
    snprintf(why, cap_why, "not PATH LABEL (one field)");
    return why;
  }
  if (!parse_label(s + e, n - e, &out->label)) {
    snprintf(why, cap_why, "label '%.*s' is not an integer in -1 .. 2^31-1",
             (int)(n - e > 40 ? 40 : n - e), s + e);
    return why;
  }
  size_t pe = e;
  while (pe > 0 && blank(s[pe - 1]))
    pe--;
  out->path = s;
  out->path_len = pe;
  out->ntargets = 0;
  return NULL;
}

const char *sl_list_parse_line(const char *line, size_t len, sl_list_form *form,
                               sl_list_line *out, float *targets, uint32_t cap,
                               char *why, size_t cap_why) {
  *out = (sl_list_line){.label = -1};
  while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
    len--;
  size_t b = 0;
  while (b < len && blank(line[b]))
    b++;
  if (b == len || line[b] == '#')
    return NULL; /* blank or a comment */
  if (*form == SL_LIST_ANY) {
    /* im2rec: a digit-only first field ended by a tab, and another tab */
    size_t i = 0;
    while (i < len && line[i] >= '0' && line[i] <= '9')
      i++;
    bool tabs = i > 0 && i < len && line[i] == '\t' &&
                memchr(line + i + 1, '\t', len - i - 1) != NULL;
    *form = tabs ? SL_LIST_IM2REC : SL_LIST_PATH_LABEL;
  }
  if (*form == SL_LIST_IM2REC)
    return im2rec(line, len, out, targets, cap, why, cap_why);
  /* trailing blanks are not a field */
  while (len > b && blank(line[len - 1]))
    len--;
  return path_label(line + b, len - b, out, why, cap_why);
}
