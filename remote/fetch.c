/* One object over HTTP(S) (remote/fetch.h). */
#include "remote/fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/rng.h"
#include "common/url_shown.h"
#include "remote/request.h"
#include "remote/url.h"

typedef struct attempt {
  sl_fetch_sink *sink;
  uint64_t from;      /* the first byte asked for */
  bool part;          /* bytes [from, from + max) only: sl_fetch_range */
  uint64_t max, have; /* bytes in the sink */
  long status;        /* once the first body byte arrives */
  CURL *curl;
  bool too_big, sink_failed;
  bool whole;   /* asked for a part, given the whole object */
  bool started; /* this attempt's first body byte has come */
  int sink_errno;
  char body[512]; /* an error response's start (S3's <Code>) */
  size_t body_len;
  uint64_t received;
} attempt;

static size_t on_body(char *p, size_t size, size_t n, void *user) {
  attempt *a = user;
  size_t len = size * n;
  if (!a->status)
    curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &a->status);
  a->received += len;
  if (a->status != 200 && a->status != 206) {
    sl_request_keep_body(a->body, sizeof a->body, &a->body_len, p, len);
    return len;
  }
  if (a->status == 200 && a->from > 0) {
    a->whole = true; /* the server ignores Range: not what was asked */
    return 0;
  }
  if (!a->started && a->status == 200 && a->have > 0) {
    /* Asked for the rest (a range), given the whole body: start over. */
    if (a->sink->rewind(a->sink->user, 0) != 0) {
      a->sink_failed = true;
      a->sink_errno = errno;
      return 0;
    }
    a->have = 0;
  }
  a->started = true;
  if (len > a->max - a->have) {
    a->too_big = true;
    return 0;
  }
  if (a->sink->write(a->sink->user, p, len) != 0) {
    a->sink_failed = true;
    a->sink_errno = errno;
    return 0;
  }
  a->have += len;
  return len;
}

/* curl's progress callback: a non-zero return aborts the transfer. */
static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow) {
  (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
  const attempt *a = user;
  return atomic_load(a->sink->cancel) ? 1 : 0;
}

/* Sets up one attempt's request. */
static CURLcode prepare(CURL *h, const sl_fetch_conf *c, const char *http,
                        bool s3, attempt *a, double left,
                        struct curl_slist **hdrs, char *range) {
  CURLcode rc = sl_request_setup(h, c, http, s3, left, hdrs);
#define SET(opt, val)                                                          \
  do {                                                                         \
    if (rc == CURLE_OK)                                                        \
      rc = curl_easy_setopt(h, opt, val);                                      \
  } while (0)
  SET(CURLOPT_WRITEFUNCTION, on_body);
  SET(CURLOPT_WRITEDATA, a);
  SET(CURLOPT_LOW_SPEED_LIMIT, 1L);
  SET(CURLOPT_LOW_SPEED_TIME, (long)(c->stall_s > 1 ? c->stall_s : 1));
  if (a->sink->cancel) {
    SET(CURLOPT_XFERINFOFUNCTION, on_progress);
    SET(CURLOPT_XFERINFODATA, a);
    SET(CURLOPT_NOPROGRESS, 0L);
  }
  if (a->part) {
    snprintf(range, 48, "%" PRIu64 "-%" PRIu64, a->from + a->have,
             a->from + a->max - 1);
    SET(CURLOPT_RANGE, range);
  } else if (a->have > 0) {
    snprintf(range, 48, "%" PRIu64 "-", a->have);
    SET(CURLOPT_RANGE, range);
  }
#undef SET
  return rc;
}

static double now_s(void) {
  return (double)sl_now_ns() / 1e9;
}

/* Sleeps s seconds, in steps of at most 50 ms while cancel (if any) stays
 * false. */
static void sleep_s(double s, const atomic_bool *cancel) {
  while (s > 0 && !(cancel && atomic_load(cancel))) {
    double step = s < 0.05 ? s : 0.05;
    struct timespec t = {.tv_sec = 0, .tv_nsec = (long)(step * 1e9)};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
      ;
    s -= step;
  }
}

static bool cancelled(const sl_fetch_sink *sink) {
  return sink->cancel && atomic_load(sink->cancel);
}

static sl_status fetch_from(const sl_fetch_conf *c, const char *url, bool part,
                            uint64_t from, uint64_t max, uint64_t expect,
                            sl_fetch_sink *sink, uint64_t *got,
                            sl_fetch_stats *stats, sl_err *err) {
  char name[512], http[SL_URL_MAX];
  sl_url_shown(url, name, sizeof name);
  *got = 0;
  bool s3 = sl_url_kind_of(url) == SL_URL_S3;
  sl_status st =
      sl_url_http(url, c->endpoint, c->region, http, sizeof http, err);
  if (st != SL_OK)
    return st;
  if (expect != UINT64_MAX && expect < max)
    max = expect;
  attempt a = {.sink = sink, .from = from, .part = part, .max = max};
  double start = now_s(), deadline = start + c->deadline_s - c->spent_s;
  /* Jitter from the URL and the clock: retries of many ranks spread. */
  uint64_t seed = (uint64_t)(start * 1e6);
  for (const char *p = url; *p; p++)
    seed = seed * 1099511628211ull ^ (unsigned char)*p;
  sl_rng rng = sl_rng_for(seed, 0, 0);
  char why[256] = "";
  for (unsigned attempt_no = 0;; attempt_no++) {
    if (cancelled(sink))
      return sl_err_set(err, SL_ESTATE, "%s: fetch stopped", name);
    double left = deadline - now_s();
    if (left <= 0)
      return sl_err_set(err, SL_EIO,
                        "%s: no answer within the %.0f s deadline after %u "
                        "attempts (%s)",
                        name, c->deadline_s, attempt_no, why);
    CURL *h = curl_easy_init();
    if (!h)
      return sl_err_set(err, SL_ENOMEM, "%s: curl_easy_init failed", name);
    struct curl_slist *hdrs = NULL;
    char range[48];
    a.curl = h;
    a.status = 0;
    a.body_len = 0;
    a.body[0] = '\0';
    a.started = false;
    CURLcode rc = prepare(h, c, http, s3, &a, left, &hdrs, range);
    if (rc == CURLE_OK)
      rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    if (stats) {
      stats->bytes = a.received;
      stats->status = status;
    }
    if (a.too_big)
      return sl_err_set(err, SL_ETOOBIG,
                        "%s: the server sends more than the %" PRIu64
                        " bytes expected",
                        name, max);
    if (cancelled(sink))
      return sl_err_set(err, SL_ESTATE, "%s: fetch stopped", name);
    if (a.whole)
      return sl_err_set(err, SL_EIO,
                        "%s: asked for bytes %" PRIu64 "-%" PRIu64
                        ", the server sent the whole object (HTTP 200): it "
                        "does not serve ranges",
                        name, from, from + max - 1);
    if (a.sink_failed)
      return sl_err_errno(err, SL_EIO, a.sink_errno, "%s: writing what it sent",
                          name);
    bool ok_status = status == 200 || status == 206;
    if (rc == CURLE_OK && ok_status &&
        (expect == UINT64_MAX || a.have == expect)) {
      *got = a.have;
      return SL_OK;
    }
    bool retry;
    if (rc == CURLE_OK && ok_status) { /* the body ended short */
      snprintf(why, sizeof why,
               "body ended at %" PRIu64 " of %" PRIu64 " bytes", a.have,
               expect);
      retry = true;
    } else if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && status)) {
      char code[64];
      sl_request_s3_code(a.body, code, sizeof code);
      snprintf(why, sizeof why, "HTTP %ld%s%s%s", status, code[0] ? " (" : "",
               code, code[0] ? ")" : "");
      retry = sl_request_retryable_status(status);
    } else {
      snprintf(why, sizeof why, "%s", curl_easy_strerror(rc));
      retry = sl_request_retryable_curl(rc);
    }
    if (!retry)
      return sl_err_set(err, SL_EIO, "%s: %s%s", name, why,
                        sl_request_status_hint(status));
    if (attempt_no >= c->retries)
      return sl_err_set(err, SL_EIO, "%s: %s, still after %u retries", name,
                        why, c->retries);
    if (stats)
      stats->retries++;
    double backoff = sl_request_backoff(attempt_no, sl_rng_uniform(&rng));
    left = deadline - now_s();
    sleep_s(backoff < left ? backoff : left, sink->cancel);
  }
}

sl_status sl_fetch(const sl_fetch_conf *c, const char *url, uint64_t max,
                   uint64_t expect, sl_fetch_sink *sink, uint64_t *got,
                   sl_fetch_stats *stats, sl_err *err) {
  return fetch_from(c, url, false, 0, max, expect, sink, got, stats, err);
}

sl_status sl_fetch_range(const sl_fetch_conf *c, const char *url, uint64_t from,
                         uint64_t len, sl_fetch_sink *sink,
                         sl_fetch_stats *stats, sl_err *err) {
  uint64_t got;
  if (len == 0)
    return SL_OK;
  return fetch_from(c, url, true, from, len, len, sink, &got, stats, err);
}
