/* Range reads of samples, many in flight (remote/ranges.h). */
#include "remote/ranges.h"

#include <curl/curl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/circ_pool.h"
#include "common/clock.h"
#include "common/mem.h"
#include "common/rng.h"
#include "common/sync.h"
#include "common/url_shown.h"
#include "remote/request.h"
#include "remote/url.h"

enum {
  SLOT_FREE,
  SLOT_WAITING, /* to be sent again once not_before has passed */
  SLOT_FLIGHT,  /* a request for it is in flight */
  SLOT_READY,
  SLOT_FAILED,
  SLOT_TAKEN, /* handed to a worker by get */
  SLOT_DONE   /* put: freed once every older seq is done too */
};

/* Why a slot failed, said in full by get. */
enum {
  WHY_NONE,
  WHY_HTTP,     /* an answer's status (code: S3's) */
  WHY_CURL,     /* a transport error */
  WHY_SHORT,    /* the body ended before the range did */
  WHY_CHANGED,  /* Content-Range gives another object size */
  WHY_WHOLE,    /* 200: the server ignores Range */
  WHY_TOOBIG,   /* more bytes than asked for */
  WHY_RANGE,    /* a 206 for other bytes than those asked for */
  WHY_DEADLINE, /* the sample's deadline passed */
  WHY_SAMPLE,   /* the sample lies in no single object */
  WHY_SETUP     /* a request could not be set up (memory, curl) */
};

typedef struct slot {
  uint64_t seq; /* UINT64_MAX when free */
  uint64_t sample;
  uint64_t off;   /* in its object */
  uint64_t total; /* the object's size by Content-Range; UINT64_MAX: none */
  uint64_t first_ns, not_before_ns;
  size_t obj, arena;
  uint32_t len, got;
  unsigned attempts;
  long status;
  int curl_rc;
  int state;
  int why;
  char code[24]; /* S3's error code */
} slot;

/* A request in flight: its easy handle and what it is filling. */
typedef struct req {
  sl_ranges *r;
  CURL *h;
  struct curl_slist *hdrs;
  slot *s;        /* NULL: free */
  uint8_t *dst;   /* the slot's buffer */
  uint64_t size;  /* the object's size by the index */
  long status;    /* once the first body byte arrives */
  bool too_big;   /* aborted: more than asked for */
  bool whole;     /* aborted: a 200 for a part */
  bool bad_range; /* Content-Range not the one asked for */
  uint64_t total; /* Content-Range's object size; UINT64_MAX: none */
  uint64_t received;
  char range[48];
  char body[512]; /* an error answer's start */
  size_t body_len;
} req;

struct sl_ranges {
  sl_ranges_opts o;
  char name[256];
  uint8_t *pool;
  slot *slots;
  size_t nslots;
  req *reqs;
  CURLM *multi;
  pthread_t thread;
  bool thread_ok, sync_ok;
  pthread_mutex_t mu;
  pthread_cond_t ready; /* a slot arrived or failed, or the epoch stopped */
  pthread_cond_t idle;  /* stop: nothing in flight */
  sl_rng rng;           /* backoff jitter (the thread's) */
  /* Everything below is under mu. */
  sl_ranges_order_fn order;
  const void *order_ctx;
  uint64_t first, end;
  uint64_t gen;
  bool active, quit;
  bool drop;      /* stop asked: the thread drops what is in flight */
  bool pool_full; /* the next position did not fit: wait for a put */
  uint64_t next_seq, live_lo;
  sl_circ_pool pool_at;
  unsigned flying, waiting; /* requests in flight; slots backing off */
  sl_ranges_stats st;
};

static void *thread_main(void *arg);

static uint64_t deadline_ns(const sl_ranges *r) {
  return (uint64_t)(r->o.conf->deadline_s * 1e9);
}

sl_status sl_ranges_open(sl_ranges **out, const sl_ranges_opts *o,
                         sl_err *err) {
  *out = NULL;
  if (o->requests < 1 || o->requests > 1024)
    return sl_err_set(err, SL_ECONFIG,
                      "io.range_requests %u: must be between 1 and 1024",
                      o->requests);
  size_t cap = o->pool_bytes / 64 * 64;
  size_t need = ((size_t)o->max_length + 63) / 64 * 64;
  if (cap < need || need == 0)
    return sl_err_set(err, SL_ECONFIG,
                      "io.pool_size %zu bytes cannot hold the largest sample "
                      "of %s (%u bytes): raise it",
                      o->pool_bytes, o->name, o->max_length);
  sl_ranges *r = calloc(1, sizeof *r);
  if (!r)
    return sl_err_set(err, SL_ENOMEM, "%s: range reads: engine state", o->name);
  r->o = *o;
  snprintf(r->name, sizeof r->name, "%s", o->name);
  r->o.name = r->name;
  r->pool_at.cap = cap;
  size_t ns = cap / 4096;
  if (ns < 2 * (size_t)o->requests)
    ns = 2 * (size_t)o->requests;
  if (ns > 65536)
    ns = 65536;
  r->nslots = ns;
  r->rng = sl_rng_for(sl_now_ns(), 0, 0);
  sl_status st = SL_OK;
  r->slots = calloc(ns, sizeof *r->slots);
  r->reqs = calloc(o->requests, sizeof *r->reqs);
  r->pool = sl_alloc_touched(cap, 64);
  if (!r->slots || !r->reqs || !r->pool) {
    st = sl_err_set(err, SL_ENOMEM, "%s: range reads: a pool of %zu bytes",
                    r->name, cap);
    goto fail;
  }
  for (size_t i = 0; i < ns; i++)
    r->slots[i].seq = UINT64_MAX;
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
      !(r->multi = curl_multi_init())) {
    st = sl_err_set(err, SL_EIO, "%s: range reads: curl_multi_init failed",
                    r->name);
    goto fail;
  }
  /* One connection per request in flight, kept from request to request. */
  if (curl_multi_setopt(r->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
                        (long)o->requests) != CURLM_OK ||
      curl_multi_setopt(r->multi, CURLMOPT_MAXCONNECTS,
                        (long)o->requests + 4) != CURLM_OK) {
    st = sl_err_set(err, SL_EIO, "%s: range reads: curl_multi_setopt failed",
                    r->name);
    goto fail;
  }
  for (unsigned k = 0; k < o->requests; k++) {
    r->reqs[k].r = r;
    if (!(r->reqs[k].h = curl_easy_init())) {
      st = sl_err_set(err, SL_ENOMEM, "%s: range reads: curl_easy_init",
                      r->name);
      goto fail;
    }
  }
  int rc = sl_sync_init(&r->mu, (pthread_cond_t *[]){&r->ready, &r->idle}, 2);
  if (rc != 0) {
    st = sl_err_errno(err, SL_ETHREAD, rc, "%s: range reads: mutex", r->name);
    goto fail;
  }
  r->sync_ok = true;
  if ((rc = pthread_create(&r->thread, NULL, thread_main, r)) != 0) {
    st = sl_err_errno(err, SL_ETHREAD, rc, "%s: range reads: thread", r->name);
    goto fail;
  }
  r->thread_ok = true;
  *out = r;
  return SL_OK;
fail:
  sl_ranges_close(r);
  return st;
}

void sl_ranges_close(sl_ranges *r) {
  if (!r)
    return;
  if (r->thread_ok) {
    sl_ranges_stop(r);
    pthread_mutex_lock(&r->mu);
    r->quit = true;
    pthread_mutex_unlock(&r->mu);
    curl_multi_wakeup(r->multi);
    pthread_join(r->thread, NULL);
  }
  for (unsigned k = 0; r->reqs && k < r->o.requests; k++) {
    curl_easy_cleanup(r->reqs[k].h); /* NULL: nothing */
    curl_slist_free_all(r->reqs[k].hdrs);
  }
  if (r->multi)
    curl_multi_cleanup(r->multi);
  if (r->sync_ok) {
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->ready);
    pthread_cond_destroy(&r->idle);
  }
  sl_free_aligned(r->pool);
  free(r->reqs);
  free(r->slots);
  free(r);
}

sl_status sl_ranges_start(sl_ranges *r, sl_ranges_order_fn order,
                          const void *ctx, uint64_t first, uint64_t end,
                          sl_err *err) {
  sl_ranges_stop(r);
  if (first > end)
    return sl_err_set(err, SL_EINVAL,
                      "%s: epoch positions %" PRIu64 "..%" PRIu64, r->name,
                      first, end);
  pthread_mutex_lock(&r->mu);
  r->order = order;
  r->order_ctx = ctx;
  r->first = first;
  r->end = end;
  r->next_seq = r->live_lo = first;
  r->gen++;
  r->active = true;
  pthread_mutex_unlock(&r->mu);
  curl_multi_wakeup(r->multi);
  return SL_OK;
}

void sl_ranges_stop(sl_ranges *r) {
  pthread_mutex_lock(&r->mu);
  r->active = false;
  r->gen++;
  r->drop = true;
  pthread_cond_broadcast(&r->ready);
  curl_multi_wakeup(r->multi);
  while (r->drop && r->thread_ok && !r->quit)
    pthread_cond_wait(&r->idle, &r->mu);
  r->drop = false;
  for (size_t i = 0; i < r->nslots; i++) {
    r->slots[i].seq = UINT64_MAX;
    r->slots[i].state = SLOT_FREE;
  }
  r->order = NULL;
  r->first = r->end = r->next_seq = r->live_lo = 0;
  r->pool_at.head = r->pool_at.tail = 0;
  r->waiting = 0;
  pthread_mutex_unlock(&r->mu);
}

/* Slot s's failure in full, into err. */
static sl_status say_failure(sl_ranges *r, const slot *s, sl_err *err) {
  if (s->why == WHY_SAMPLE)
    return sl_err_set(err, SL_EINVAL,
                      "%s: sample %" PRIu64 " lies in no single object",
                      r->name, s->sample);
  const char *url;
  uint64_t size;
  r->o.object(r->o.ctx, s->obj, &url, &size);
  char shown[512], why[256];
  sl_url_shown(url, shown, sizeof shown);
  uint64_t last = s->off + (s->len ? s->len - 1 : 0);
  switch (s->why) {
  case WHY_HTTP:
    snprintf(why, sizeof why, "HTTP %ld%s%s%s%s", s->status,
             s->code[0] ? " (" : "", s->code, s->code[0] ? ")" : "",
             s->status == 416 ? " (past the object's end: changed since it "
                                "was indexed?)"
                              : sl_request_status_hint(s->status));
    break;
  case WHY_CURL:
    snprintf(why, sizeof why, "%s", curl_easy_strerror(s->curl_rc));
    break;
  case WHY_SHORT:
    snprintf(why, sizeof why, "the body ended after %u of %u bytes", s->got,
             s->len);
    break;
  case WHY_CHANGED:
    snprintf(why, sizeof why,
             "the object is %" PRIu64 " bytes, its index says %" PRIu64
             ": it changed since it was indexed",
             s->total, size);
    break;
  case WHY_WHOLE:
    snprintf(why, sizeof why,
             "the server sent the whole object (HTTP 200), not the range: it "
             "does not serve ranges; read it with io.remote_read = shards");
    break;
  case WHY_TOOBIG:
    snprintf(why, sizeof why, "the server sent more than the %u bytes asked",
             s->len);
    break;
  case WHY_RANGE:
    snprintf(why, sizeof why,
             "the server answered with other bytes than "
             "those asked for (its Content-Range)");
    break;
  case WHY_DEADLINE:
    snprintf(why, sizeof why, "no answer within io.fetch_deadline (%.0f s)",
             r->o.conf->deadline_s);
    break;
  default:
    snprintf(why, sizeof why, "the request could not be set up (no memory)");
    break;
  }
  bool retried =
      s->attempts > r->o.conf->retries &&
      (s->why == WHY_HTTP || s->why == WHY_CURL || s->why == WHY_SHORT);
  return sl_err_set(err, SL_EIO,
                    "%s: sample %" PRIu64 ": bytes %" PRIu64 "-%" PRIu64
                    " of %s: %s%s",
                    r->name, s->sample, s->off, last, shown, why,
                    retried ? ", still after every retry" : "");
}

sl_status sl_ranges_get(sl_ranges *r, uint64_t seq, const uint8_t **data,
                        size_t *len, sl_err *err) {
  *data = NULL;
  *len = 0;
  pthread_mutex_lock(&r->mu);
  sl_status st = SL_OK;
  uint64_t gen = r->gen;
  if (!r->active) {
    st = sl_err_set(err, SL_ESTATE, "%s: range reads: no epoch started",
                    r->name);
    goto out;
  }
  if (seq < r->first || seq >= r->end) {
    st = sl_err_set(err, SL_EINVAL,
                    "%s: range reads: position %" PRIu64
                    " outside the epoch's %" PRIu64 "..%" PRIu64,
                    r->name, seq, r->first, r->end - 1);
    goto out;
  }
  slot *s = &r->slots[seq % r->nslots];
  uint64_t t0 = 0;
  for (;;) {
    if (r->gen != gen || !r->active) {
      st =
          sl_err_set(err, SL_ESTATE, "%s: range reads: epoch stopped", r->name);
      goto out;
    }
    if (seq < r->live_lo ||
        (s->seq == seq && (s->state == SLOT_TAKEN || s->state == SLOT_DONE))) {
      st = sl_err_set(err, SL_ESTATE,
                      "%s: range reads: position %" PRIu64 " taken twice",
                      r->name, seq);
      goto out;
    }
    if (s->seq == seq && (s->state == SLOT_READY || s->state == SLOT_FAILED))
      break;
    if (!t0)
      t0 = sl_now_ns();
    pthread_cond_wait(&r->ready, &r->mu);
  }
  if (t0) {
    r->st.waits++;
    r->st.wait_ns += sl_now_ns() - t0;
  }
  if (s->state == SLOT_FAILED) {
    st = say_failure(r, s, err);
  } else {
    *data = r->pool + s->arena;
    *len = s->len;
  }
  s->state = SLOT_TAKEN;
out:
  pthread_mutex_unlock(&r->mu);
  return st;
}

void sl_ranges_put(sl_ranges *r, uint64_t seq) {
  pthread_mutex_lock(&r->mu);
  slot *s = &r->slots[seq % r->nslots];
  if (!r->active || s->seq != seq || s->state != SLOT_TAKEN) {
    pthread_mutex_unlock(&r->mu); /* stale or double put: nothing held */
    return;
  }
  s->state = SLOT_DONE;
  bool freed = false;
  while (r->live_lo < r->next_seq) {
    slot *o = &r->slots[r->live_lo % r->nslots];
    if (o->state != SLOT_DONE)
      break;
    o->state = SLOT_FREE;
    o->seq = UINT64_MAX;
    r->live_lo++;
    freed = true;
  }
  if (r->live_lo < r->next_seq)
    r->pool_at.tail = r->slots[r->live_lo % r->nslots].arena;
  else
    r->pool_at.head = r->pool_at.tail = 0;
  pthread_mutex_unlock(&r->mu);
  if (freed)
    curl_multi_wakeup(r->multi); /* room: the thread sends more */
}

void sl_ranges_stats_get(sl_ranges *r, sl_ranges_stats *out) {
  pthread_mutex_lock(&r->mu);
  *out = r->st;
  pthread_mutex_unlock(&r->mu);
}

/* ---- the synchronous read (a sample outside the order) ---- */

typedef struct buf_sink {
  uint8_t *p;
  size_t cap, len;
} buf_sink;

static int buf_write(void *user, const void *bytes, size_t n) {
  buf_sink *b = user;
  if (n > b->cap - b->len)
    return -1;
  memcpy(b->p + b->len, bytes, n);
  b->len += n;
  return 0;
}

static int buf_rewind(void *user, uint64_t at) {
  buf_sink *b = user;
  b->len = (size_t)at;
  return 0;
}

sl_status sl_ranges_read(sl_ranges *r, uint64_t sample, void *buf, size_t cap,
                         const uint8_t **data, size_t *len, sl_err *err) {
  *data = NULL;
  *len = 0;
  size_t obj;
  uint64_t off, size;
  uint32_t n;
  const char *url;
  if (!r->o.locate(r->o.ctx, sample, &obj, &off, &n))
    return sl_err_set(err, SL_EINVAL,
                      "%s: sample %" PRIu64 " lies in no single object",
                      r->name, sample);
  if (n > cap)
    return sl_err_set(err, SL_ETOOBIG,
                      "%s: sample %" PRIu64 ": %u bytes, the buffer %zu",
                      r->name, sample, n, cap);
  r->o.object(r->o.ctx, obj, &url, &size);
  buf_sink b = {.p = buf, .cap = n};
  sl_fetch_sink sink = {.write = buf_write, .rewind = buf_rewind, .user = &b};
  sl_fetch_stats fs = {0};
  sl_status st = sl_fetch_range(r->o.conf, url, off, n, &sink, &fs, err);
  pthread_mutex_lock(&r->mu);
  r->st.bytes += fs.bytes;
  r->st.retries += fs.retries;
  r->st.requests += st == SL_OK;
  pthread_mutex_unlock(&r->mu);
  if (st != SL_OK) {
    sl_err_prefix(err, "%s: sample %" PRIu64 ": ", r->name, sample);
    return st;
  }
  *data = buf;
  *len = n;
  return SL_OK;
}

/* ---- the thread: everything that touches the multi handle ---- */

static size_t on_body(char *p, size_t size, size_t n, void *user) {
  req *q = user;
  size_t len = size * n;
  slot *s = q->s;
  if (!q->status)
    curl_easy_getinfo(q->h, CURLINFO_RESPONSE_CODE, &q->status);
  q->received += len;
  if (q->status != 200 && q->status != 206) {
    sl_request_keep_body(q->body, sizeof q->body, &q->body_len, p, len);
    return len;
  }
  if (q->status == 200 && !(s->off == 0 && s->len == q->size)) {
    q->whole = true;
    return 0;
  }
  if (q->status == 206 && q->bad_range)
    return 0;
  if (len > (size_t)(s->len - s->got)) {
    q->too_big = true;
    return 0;
  }
  memcpy(q->dst + s->got, p, len);
  s->got += (uint32_t)len;
  return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *user) {
  req *q = user;
  size_t len = size * n;
  uint64_t a, b, total;
  if (sl_http_content_range(p, len, &a, &b, &total)) {
    const slot *s = q->s;
    q->total = total;
    /* Not the bytes asked for: refused rather than stored. */
    q->bad_range = a != s->off + s->got || b != s->off + s->len - 1;
  }
  return len;
}

/* Sends slot s's request (the rest of its range) on a free req. With mu
 * held. false: no req free. */
static bool send_slot(sl_ranges *r, slot *s) {
  req *q = NULL;
  for (unsigned k = 0; k < r->o.requests && !q; k++)
    if (!r->reqs[k].s)
      q = &r->reqs[k];
  if (!q)
    return false;
  const char *url;
  uint64_t size;
  r->o.object(r->o.ctx, s->obj, &url, &size);
  uint64_t now = sl_now_ns();
  if (!s->first_ns)
    s->first_ns = now;
  uint64_t spent = now - s->first_ns;
  if (spent >= deadline_ns(r)) {
    s->state = SLOT_FAILED;
    s->why = WHY_DEADLINE;
    pthread_cond_broadcast(&r->ready);
    return true;
  }
  char http[SL_URL_MAX];
  sl_err ignored = {0};
  bool s3 = sl_url_kind_of(url) == SL_URL_S3;
  CURLcode rc = CURLE_OK;
  curl_easy_reset(q->h); /* the connection stays in the multi's cache */
  curl_slist_free_all(q->hdrs);
  q->hdrs = NULL;
  if (sl_url_http(url, r->o.conf->endpoint, r->o.conf->region, http,
                  sizeof http, &ignored) != SL_OK)
    rc = CURLE_URL_MALFORMAT;
  if (rc == CURLE_OK)
    rc = sl_request_setup(q->h, r->o.conf, http, s3,
                          (double)(deadline_ns(r) - spent) / 1e9, &q->hdrs);
  snprintf(q->range, sizeof q->range, "%" PRIu64 "-%" PRIu64, s->off + s->got,
           s->off + s->len - 1);
#define SET(opt, val)                                                          \
  do {                                                                         \
    if (rc == CURLE_OK)                                                        \
      rc = curl_easy_setopt(q->h, opt, val);                                   \
  } while (0)
  SET(CURLOPT_RANGE, q->range);
  SET(CURLOPT_WRITEFUNCTION, on_body);
  SET(CURLOPT_WRITEDATA, q);
  SET(CURLOPT_HEADERFUNCTION, on_header);
  SET(CURLOPT_HEADERDATA, q);
  SET(CURLOPT_PRIVATE, q);
  SET(CURLOPT_LOW_SPEED_LIMIT, 1L);
  SET(CURLOPT_LOW_SPEED_TIME,
      (long)(r->o.conf->stall_s > 1 ? r->o.conf->stall_s : 1));
#undef SET
  q->s = s;
  q->dst = r->pool + s->arena;
  q->size = size;
  q->status = 0;
  q->too_big = q->whole = q->bad_range = false;
  q->total = UINT64_MAX;
  q->received = 0;
  q->body_len = 0;
  q->body[0] = '\0';
  s->attempts++;
  if (rc != CURLE_OK || curl_multi_add_handle(r->multi, q->h) != CURLM_OK) {
    q->s = NULL;
    s->state = SLOT_FAILED;
    s->why = rc == CURLE_URL_MALFORMAT ? WHY_CURL : WHY_SETUP;
    s->curl_rc = rc;
    pthread_cond_broadcast(&r->ready);
    return true;
  }
  s->state = SLOT_FLIGHT;
  r->flying++;
  return true;
}

/* Slot s failed with why: backs off for another attempt when that is worth
 * it and time is left, else fails it. With mu held. */
static void retry_or_fail(sl_ranges *r, slot *s, int why, bool retryable) {
  s->why = why;
  uint64_t now = sl_now_ns();
  double wait = sl_request_backoff(s->attempts - 1, sl_rng_uniform(&r->rng));
  if (retryable && s->attempts <= r->o.conf->retries &&
      now + (uint64_t)(wait * 1e9) < s->first_ns + deadline_ns(r)) {
    s->state = SLOT_WAITING;
    s->not_before_ns = now + (uint64_t)(wait * 1e9);
    r->waiting++;
    r->st.retries++;
    return;
  }
  if (retryable && s->attempts <= r->o.conf->retries)
    s->why = WHY_DEADLINE;
  s->state = SLOT_FAILED;
}

/* A finished transfer of q. With mu held. */
static void finish(sl_ranges *r, req *q, CURLcode rc) {
  slot *s = q->s;
  q->s = NULL;
  r->flying--;
  r->st.bytes += q->received;
  s->status = q->status;
  if (!s->status)
    curl_easy_getinfo(q->h, CURLINFO_RESPONSE_CODE, &s->status);
  s->curl_rc = rc;
  if (q->total != UINT64_MAX)
    s->total = q->total;
  if (q->total != UINT64_MAX && q->total != q->size)
    s->state = SLOT_FAILED, s->why = WHY_CHANGED;
  else if (q->bad_range)
    s->state = SLOT_FAILED, s->why = WHY_RANGE;
  else if (q->too_big)
    s->state = SLOT_FAILED, s->why = WHY_TOOBIG;
  else if (q->whole)
    s->state = SLOT_FAILED, s->why = WHY_WHOLE;
  else if (rc == CURLE_OK && (s->status == 206 || s->status == 200) &&
           s->got == s->len) {
    s->state = SLOT_READY;
    r->st.requests++;
  } else if (rc == CURLE_OK && (s->status == 206 || s->status == 200))
    retry_or_fail(r, s, WHY_SHORT, true); /* resumed where it stopped */
  else if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && s->status)) {
    sl_request_s3_code(q->body, s->code, sizeof s->code);
    retry_or_fail(r, s, WHY_HTTP, sl_request_retryable_status(s->status));
  } else {
    retry_or_fail(r, s, WHY_CURL, sl_request_retryable_curl(rc));
  }
  pthread_cond_broadcast(&r->ready);
}

/* New positions and due retries, onto free requests. With mu held. Returns
 * the milliseconds until the next retry is due (1000: none). */
static long send_more(sl_ranges *r) {
  uint64_t now = sl_now_ns(), next = UINT64_MAX;
  r->pool_full = false;
  for (uint64_t q = r->live_lo; r->waiting > 0 && q < r->next_seq; q++) {
    slot *s = &r->slots[q % r->nslots];
    if (s->state != SLOT_WAITING)
      continue;
    if (s->not_before_ns > now) {
      next = s->not_before_ns < next ? s->not_before_ns : next;
      continue;
    }
    if (r->flying >= r->o.requests)
      break;
    r->waiting--;
    send_slot(r, s);
  }
  while (r->active && r->flying < r->o.requests && r->next_seq < r->end &&
         r->next_seq - r->live_lo < r->nslots) {
    uint64_t seq = r->next_seq;
    uint64_t sample = r->order ? r->order(r->order_ctx, seq) : seq;
    size_t obj = 0;
    uint64_t off = 0;
    uint32_t len = 0;
    bool found = r->o.locate(r->o.ctx, sample, &obj, &off, &len);
    size_t at = 0;
    if (found &&
        !sl_circ_pool_alloc(&r->pool_at, r->live_lo == r->next_seq,
                            ((size_t)(len ? len : 1) + 63) / 64 * 64, &at)) {
      r->pool_full = true; /* a put makes room, and wakes the thread */
      break;
    }
    slot *s = &r->slots[seq % r->nslots];
    *s = (slot){.seq = seq,
                .sample = sample,
                .obj = obj,
                .off = off,
                .len = len,
                .arena = at,
                .total = UINT64_MAX,
                .state = SLOT_READY};
    r->next_seq++;
    if (!found)
      s->state = SLOT_FAILED, s->why = WHY_SAMPLE;
    else if (len > 0)
      send_slot(r, s);
    if (s->state != SLOT_FLIGHT)
      pthread_cond_broadcast(&r->ready);
  }
  if (next == UINT64_MAX)
    return 1000;
  return next <= now ? 0 : (long)((next - now) / 1000000 + 1);
}

/* Drops every request in flight (stop). With mu held. */
static void drop_all(sl_ranges *r) {
  for (unsigned k = 0; k < r->o.requests; k++) {
    req *q = &r->reqs[k];
    if (!q->s)
      continue;
    curl_multi_remove_handle(r->multi, q->h);
    q->s = NULL;
  }
  r->flying = 0;
  r->waiting = 0;
}

static void *thread_main(void *arg) {
  sl_ranges *r = arg;
  pthread_mutex_lock(&r->mu);
  while (!r->quit) {
    if (r->drop) {
      drop_all(r);
      r->drop = false;
      pthread_cond_broadcast(&r->idle);
    }
    long wait_ms = r->active ? send_more(r) : 1000;
    bool busy = r->flying > 0;
    pthread_mutex_unlock(&r->mu);
    int running = 0;
    if (busy)
      curl_multi_perform(r->multi, &running);
    CURLMsg *m;
    int left;
    pthread_mutex_lock(&r->mu);
    while (!r->drop && (m = curl_multi_info_read(r->multi, &left))) {
      if (m->msg != CURLMSG_DONE)
        continue;
      req *q = NULL;
      curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&q);
      CURLcode rc = m->data.result;
      curl_multi_remove_handle(r->multi, m->easy_handle);
      if (q && q->s)
        finish(r, q, rc);
    }
    bool more = r->active && !r->pool_full && r->flying < r->o.requests &&
                r->next_seq < r->end && r->next_seq - r->live_lo < r->nslots;
    pthread_mutex_unlock(&r->mu);
    /* Sleeps until a socket has news, a put or stop wakes it, or a retry
     * is due; at once when finished transfers left room for more. */
    if (!more || !busy)
      curl_multi_poll(r->multi, NULL, 0,
                      (int)(busy && wait_ms > 50 ? 50 : wait_ms), NULL);
    pthread_mutex_lock(&r->mu);
  }
  drop_all(r);
  pthread_mutex_unlock(&r->mu);
  return NULL;
}
