/* dataset.mix and dataset.weights; see dmix_spec.h. */
#include "loader/dmix_spec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
    s[--n] = '\0';
  return s;
}

/* Splits text (written in place) at commas into at most SL_DMIX_MAX trimmed
 * items; -1 when there are more. */
static int split(char *text, char **item) {
  int n = 0;
  for (char *p = text;;) {
    char *comma = strchr(p, ',');
    if (comma)
      *comma = '\0';
    if (n == SL_DMIX_MAX)
      return -1;
    item[n++] = trim(p);
    if (!comma)
      return n;
    p = comma + 1;
  }
}

sl_status sl_dmix_spec_parse(sl_dmix_spec *out, const char *paths,
                             const char *weights, sl_err *err) {
  out->n = 0;
  out->text[0] = '\0';
  paths = paths ? paths : "";
  weights = weights ? weights : "";
  if (!paths[0]) {
    if (weights[0])
      return sl_err_set(err, SL_ECONFIG,
                        "dataset.weights is set but dataset.mix is not: "
                        "weights are for the datasets dataset.mix lists");
    return SL_OK;
  }
  size_t len = strlen(paths);
  if (len >= sizeof out->text)
    return sl_err_set(err, SL_ECONFIG,
                      "dataset.mix: %zu characters of paths (at most %d)", len,
                      SL_DMIX_TEXT_MAX - 1);
  memcpy(out->text, paths, len + 1);
  char *item[SL_DMIX_MAX];
  int n = split(out->text, item);
  if (n < 0)
    return sl_err_set(err, SL_ECONFIG,
                      "dataset.mix: more than %d datasets (a comma separates "
                      "two; a path holding a comma cannot be mixed)",
                      SL_DMIX_MAX);
  for (int k = 0; k < n; k++) {
    if (!item[k][0])
      return sl_err_set(err, SL_ECONFIG,
                        "dataset.mix: item %d of '%s' is empty", k + 1, paths);
    out->path_at[k] = (uint32_t)(item[k] - out->text);
  }
  char wtext[1024];
  if (strlen(weights) >= sizeof wtext)
    return sl_err_set(err, SL_ECONFIG, "dataset.weights: too long");
  memcpy(wtext, weights, strlen(weights) + 1);
  char *w[SL_DMIX_MAX];
  int nw = weights[0] ? split(wtext, w) : 0;
  if (nw != n)
    return sl_err_set(err, SL_ECONFIG,
                      "dataset.weights: %s%d weight%s for the %d datasets of "
                      "dataset.mix (give one > 0 for each, e.g. '%s')",
                      nw < 0 ? "more than " : "", nw < 0 ? SL_DMIX_MAX : nw,
                      nw == 1 ? "" : "s", n, n == 2 ? "3, 1" : "1, 1, ...");
  for (int k = 0; k < n; k++) {
    char *end = NULL;
    double x = strtod(w[k], &end);
    if (!w[k][0] || *end || !isfinite(x) || x <= 0)
      return sl_err_set(
          err, SL_ECONFIG,
          "dataset.weights: weight %d ('%s', for %s) must be a number > 0%s",
          k + 1, w[k], item[k],
          end && !*end && x == 0 ? "; leave a dataset out of dataset.mix "
                                   "instead of weighing it 0"
                                 : "");
    out->weight[k] = x;
  }
  out->n = (uint32_t)n;
  return SL_OK;
}
