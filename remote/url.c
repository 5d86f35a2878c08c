/* Dataset URLs (remote/url.h). */
#include "remote/url.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

sl_url_kind sl_url_kind_of(const char *path) {
  if (!path)
    return SL_URL_NONE;
  if (strncmp(path, "s3://", 5) == 0)
    return SL_URL_S3;
  if (strncmp(path, "http://", 7) == 0 || strncmp(path, "https://", 8) == 0)
    return SL_URL_HTTP;
  return SL_URL_NONE;
}

static bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
}

/* Appends s percent-encoded (keeping '/') at buf + *n. */
static bool put_encoded(char *buf, size_t cap, size_t *n, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (*n + 4 > cap)
      return false;
    if (unreserved(c) || c == '/')
      buf[(*n)++] = (char)c;
    else {
      buf[(*n)++] = '%';
      buf[(*n)++] = hex[c >> 4];
      buf[(*n)++] = hex[c & 15];
    }
  }
  buf[*n] = '\0';
  return true;
}

static bool has_control(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      return true;
  return false;
}

sl_status sl_url_http(const char *url, const char *endpoint, const char *region,
                      char *buf, size_t cap, sl_err *err) {
  if (strlen(url) >= SL_URL_MAX || has_control(url))
    return sl_err_set(err, SL_EINVAL,
                      "%.200s: not a URL sluice reads (too long, or a "
                      "control character)",
                      url);
  sl_url_kind k = sl_url_kind_of(url);
  if (k == SL_URL_HTTP) {
    if (snprintf(buf, cap, "%s", url) >= (int)cap)
      return sl_err_set(err, SL_EINVAL, "%.200s: too long", url);
    return SL_OK;
  }
  if (k != SL_URL_S3)
    return sl_err_set(err, SL_EINVAL, "%.200s: not an s3:// or http(s):// URL",
                      url);
  const char *bucket = url + 5, *slash = strchr(bucket, '/');
  if (!slash || slash == bucket || !slash[1])
    return sl_err_set(err, SL_EINVAL,
                      "%s: an S3 URL is s3://BUCKET/KEY (no %s)", url,
                      !slash || slash == bucket ? "bucket" : "key");
  int w;
  if (endpoint && *endpoint) {
    size_t e = strlen(endpoint);
    while (e > 0 && endpoint[e - 1] == '/')
      e--;
    w = snprintf(buf, cap, "%.*s/%.*s/", (int)e, endpoint,
                 (int)(slash - bucket), bucket);
  } else
    w = snprintf(buf, cap, "https://s3.%s.amazonaws.com/%.*s/",
                 region && *region ? region : "us-east-1",
                 (int)(slash - bucket), bucket);
  size_t n = (size_t)w;
  if (w < 0 || n >= cap || !put_encoded(buf, cap, &n, slash + 1))
    return sl_err_set(err, SL_EINVAL, "%.200s: too long", url);
  return SL_OK;
}

sl_status sl_url_sibling(const char *base, const char *name, char *buf,
                         size_t cap, sl_err *err) {
  const char *slash = strrchr(base, '/');
  size_t keep = slash ? (size_t)(slash - base) + 1 : strlen(base);
  if (snprintf(buf, cap, "%.*s%s", (int)keep, base, name) >= (int)cap)
    return sl_err_set(err, SL_EINVAL, "%.200s%.100s: too long", base, name);
  return SL_OK;
}

/* A decimal number at line[*at], below 2^63. */
static bool number(const char *line, size_t len, size_t *at, uint64_t *out) {
  uint64_t v = 0;
  size_t start = *at;
  for (; *at < len && line[*at] >= '0' && line[*at] <= '9'; (*at)++) {
    if (v > (UINT64_MAX >> 1) / 10)
      return false;
    v = v * 10 + (uint64_t)(line[*at] - '0');
  }
  *out = v;
  return *at > start && v <= (UINT64_MAX >> 1);
}

bool sl_http_content_range(const char *line, size_t len, uint64_t *first,
                           uint64_t *last, uint64_t *total) {
  static const char name[] = "content-range:";
  size_t n = sizeof name - 1, at = n;
  if (len < n || strncasecmp(line, name, n) != 0)
    return false;
  while (at < len && (line[at] == ' ' || line[at] == '\t'))
    at++;
  if (len - at < 6 || strncasecmp(line + at, "bytes ", 6) != 0)
    return false;
  at += 6;
  if (!number(line, len, &at, first) || at >= len || line[at++] != '-' ||
      !number(line, len, &at, last) || at >= len || line[at++] != '/')
    return false;
  if (at < len && line[at] == '*') {
    at++;
    *total = UINT64_MAX;
  } else if (!number(line, len, &at, total) || *last >= *total) {
    return false;
  }
  while (at < len && (line[at] == ' ' || line[at] == '\t' || line[at] == '\r' ||
                      line[at] == '\n'))
    at++;
  return at == len && *first <= *last;
}
