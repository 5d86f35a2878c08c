/* URLs as messages and output show them: without a credential. A dataset's
 * URL may carry one: a user:password@ before the host (HTTP basic auth,
 * which curl takes from the URL) or a presigned URL's query string
 * (?X-Amz-Credential=...&X-Amz-Signature=...). The request needs them
 * (remote/ passes the URL to curl whole); no message, log line or printed
 * output may hold them. sl_url_shown makes one URL's shown form;
 * sl_text_hide_credentials does the same to every URL inside a text, and
 * every message the library makes passes through it (common/error.c), as
 * do its log lines and what the commands print of a dataset's path.
 *
 * A URL here is a run of text from a scheme's "://" to its end: white
 * space, a quote, a bracket, or ':', ';' or ',' followed by a space or the
 * end of the text (how messages follow a URL: "URL: HTTP 404"). Its
 * userinfo (up to the last '@' before the path) is dropped, and so
 * is everything from its '?' or '#' to its end. A host that runs to the
 * end of the text holding a ':' (a message cut short inside a user:password)
 * is dropped whole. Local paths and text without "://" are left as they
 * are.
 *
 * Header-only (the commands in tools/ use it too). Thread-safe: pure. */
#ifndef SLUICE_COMMON_URL_SHOWN_H
#define SLUICE_COMMON_URL_SHOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Whether s[i] ends a URL inside a text. */
static inline bool sl_url_text_end(const char *s, size_t i) {
  char c = s[i];
  if (c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
      c == '"' || c == '\'' || c == '`' || c == '<' || c == '>' || c == ')')
    return true;
  if (c == ':' || c == ';' || c == ',')
    return s[i + 1] == '\0' || s[i + 1] == ' ' || s[i + 1] == '\n';
  return false;
}

/* The authority's end after "://" at s + at: the first '/' or the URL's
 * end (not '?' or '#': a password holding one unencoded is still dropped
 * up to its '@'). */
static inline size_t sl_url_host_end(const char *s, size_t at) {
  size_t e = at;
  while (!sl_url_text_end(s, e) && s[e] != '/')
    e++;
  return e;
}

/* in with its URLs' credentials dropped, into out (cap bytes, at least 1;
 * cut short to fit, NUL-terminated). out may be in itself: the text only
 * shrinks. Returns out. */
static inline char *sl_hide_credentials_copy(const char *in, char *out,
                                             size_t cap) {
  size_t r = 0, w = 0;
  bool in_url = false;
  while (in[r] && w + 1 < cap) {
    if (in_url && sl_url_text_end(in, r)) {
      in_url = false;
    } else if (in_url && (in[r] == '?' || in[r] == '#')) {
      while (!sl_url_text_end(in, r))
        r++; /* the query or fragment: a signature lives there */
      in_url = false;
      continue;
    } else if (!in_url && in[r] == ':' && in[r + 1] == '/' &&
               in[r + 2] == '/') {
      size_t host = r + 3, end = sl_url_host_end(in, host), keep = host;
      for (size_t k = host; k < end; k++)
        if (in[k] == '@')
          keep = k + 1; /* the userinfo dropped */
      bool cut = in[end] == '\0' && memchr(in + keep, ':', end - keep);
      for (size_t k = r; k < host && w + 1 < cap; k++)
        out[w++] = in[k];
      r = cut ? end : keep;
      in_url = true;
      continue;
    }
    out[w++] = in[r++];
  }
  out[w] = '\0';
  return out;
}

/* Every URL in the NUL-terminated text s shown without credentials, in
 * place. */
static inline void sl_text_hide_credentials(char *s) {
  sl_hide_credentials_copy(s, s, strlen(s) + 1);
}

/* One URL (or local path) as shown: no credentials, control characters as
 * '?', into buf (cap bytes, at least 1). Returns buf. */
static inline const char *sl_url_shown(const char *url, char *buf, size_t cap) {
  sl_hide_credentials_copy(url, buf, cap);
  for (char *p = buf; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = '?';
  return buf;
}

#endif
