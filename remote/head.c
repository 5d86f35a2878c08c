/* Objects' sizes and ETags by HEAD requests (remote/head.h): one easy
 * handle for all of them, so that a set of a thousand shards costs one
 * connection and a round trip a shard. */
#include "remote/head.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/clock.h"
#include "common/url_shown.h"
#include "remote/request.h"
#include "remote/url.h"

/* The ETag header of the answer being read, into the sl_head. */
static size_t on_header(char *p, size_t size, size_t n, void *user) {
  sl_head *h = user;
  size_t len = size * n;
  if (len > 5 && strncasecmp(p, "etag:", 5) == 0) {
    const char *v = p + 5;
    size_t l = len - 5;
    while (l && (*v == ' ' || *v == '\t'))
      v++, l--;
    while (l && (v[l - 1] == '\r' || v[l - 1] == '\n' || v[l - 1] == ' '))
      l--;
    bool printable = l < sizeof h->etag;
    for (size_t i = 0; printable && i < l; i++)
      printable = v[i] >= 0x20 && v[i] < 0x7f;
    if (printable) {
      memcpy(h->etag, v, l);
      h->etag[l] = '\0';
    }
  }
  return len;
}

static size_t no_body(char *p, size_t size, size_t n, void *user) {
  (void)p, (void)user;
  return size * n; /* a HEAD has none; an error page's is dropped */
}

static CURLcode prepare(CURL *h, const sl_fetch_conf *c, const char *http,
                        bool s3, sl_head *out, double left,
                        struct curl_slist **hdrs) {
  CURLcode rc = sl_request_setup(h, c, http, s3, left, hdrs);
#define SET(opt, val)                                                          \
  do {                                                                         \
    if (rc == CURLE_OK)                                                        \
      rc = curl_easy_setopt(h, opt, val);                                      \
  } while (0)
  SET(CURLOPT_NOBODY, 1L);
  SET(CURLOPT_HEADERFUNCTION, on_header);
  SET(CURLOPT_HEADERDATA, out);
  SET(CURLOPT_WRITEFUNCTION, no_body);
#undef SET
  return rc;
}

static void sleep_s(double s) {
  struct timespec t = {.tv_sec = (time_t)s,
                       .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&t, &t) != 0 && errno == EINTR)
    ;
}

/* One object's HEAD on h, retried. */
static sl_status head_one(CURL *h, const sl_fetch_conf *c, const char *url,
                          sl_head *out, sl_err *err) {
  char name[512], http[SL_URL_MAX];
  sl_url_shown(url, name, sizeof name);
  sl_status st =
      sl_url_http(url, c->endpoint, c->region, http, sizeof http, err);
  if (st != SL_OK)
    return st;
  bool s3 = sl_url_kind_of(url) == SL_URL_S3;
  double deadline = (double)sl_now_ns() / 1e9 + c->deadline_s;
  for (unsigned attempt = 0;; attempt++) {
    double left = deadline - (double)sl_now_ns() / 1e9;
    if (left <= 0)
      return sl_err_set(err, SL_EIO, "%s: no answer to HEAD within %.0f s",
                        name, c->deadline_s);
    struct curl_slist *hdrs = NULL;
    *out = (sl_head){0};
    curl_easy_reset(h); /* the connection stays open */
    CURLcode rc = prepare(h, c, http, s3, out, left, &hdrs);
    if (rc == CURLE_OK)
      rc = curl_easy_perform(h);
    long status = 0;
    curl_off_t cl = -1;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
    curl_slist_free_all(hdrs);
    if (rc == CURLE_OK && status == 200) {
      if (cl < 0)
        return sl_err_set(err, SL_EIO,
                          "%s: the server's answer to HEAD gives no size "
                          "(Content-Length)",
                          name);
      out->size = (uint64_t)cl;
      return SL_OK;
    }
    char why[160];
    if (rc == CURLE_OK)
      snprintf(why, sizeof why, "HTTP %ld", status);
    else
      snprintf(why, sizeof why, "%s", curl_easy_strerror(rc));
    if (rc == CURLE_OK ? !sl_request_retryable_status(status)
                       : !sl_request_retryable_curl(rc))
      return sl_err_set(err, SL_EIO, "%s: %s%s", name, why,
                        sl_request_status_hint(status));
    if (attempt >= c->retries)
      return sl_err_set(err, SL_EIO, "%s: %s, still after %u retries", name,
                        why, c->retries);
    double backoff = sl_request_backoff(attempt, 1.0);
    sleep_s(backoff < left ? backoff : left);
  }
}

sl_status sl_fetch_heads(const sl_fetch_conf *c, const char *const *urls,
                         size_t n, sl_head *out, sl_err *err) {
  CURL *h = curl_easy_init();
  if (!h)
    return sl_err_set(err, SL_ENOMEM, "HEAD: curl_easy_init failed");
  sl_status st = SL_OK;
  for (size_t k = 0; st == SL_OK && k < n; k++)
    st = head_one(h, c, urls[k], &out[k], err);
  curl_easy_cleanup(h);
  return st;
}
