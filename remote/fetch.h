/* One object fetched whole over HTTP(S) with libcurl: S3 requests signed
 * with SigV4 (curl's CURLOPT_AWS_SIGV4), TLS verified, retried with
 * exponential backoff and jitter on 429, 5xx, resets and timeouts (a body
 * cut short is resumed with a range request), bounded by a retry count and
 * a deadline, and bounded in size by what the caller expects. Messages name
 * the URL and the status, never a credential or a signature. */
#ifndef SLUICE_REMOTE_FETCH_H
#define SLUICE_REMOTE_FETCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* Where and how requests go (remote/remote.c fills it from the options and
 * the AWS environment). Strings are owned by the caller. */
typedef struct sl_fetch_conf {
  const char *endpoint;   /* S3: scheme://host[:port]; NULL: AWS's */
  const char *region;     /* S3: "us-east-1" when NULL */
  const char *access_key; /* S3: NULL or "" for unsigned requests */
  const char *secret_key;
  const char *session_token; /* NULL: none */
  const char *ca_bundle;     /* NULL: the system's */
  unsigned retries;          /* attempts after the first */
  double deadline_s;         /* all attempts of one object */
  double spent_s; /* of deadline_s, already spent before the call (waiting
                     for another's fetch of the object) */
  double stall_s; /* below 1 byte/s this long: a timeout */
} sl_fetch_conf;

/* What a fetch writes into: write(user, bytes, n) returns 0, or -1 to stop
 * (full disk: errno kept); rewind(user, at) truncates to `at` bytes before
 * a retry that cannot resume. cancel (NULL: none), once true, ends the
 * fetch within about 100 ms, mid-transfer or mid-backoff: SL_ESTATE. */
typedef struct sl_fetch_sink {
  int (*write)(void *user, const void *bytes, size_t n);
  int (*rewind)(void *user, uint64_t at);
  void *user;
  const atomic_bool *cancel;
} sl_fetch_sink;

typedef struct sl_fetch_stats {
  uint64_t bytes;   /* body bytes received, retries included */
  uint32_t retries; /* attempts after the first */
  long status;      /* the last attempt's HTTP status (0: none came) */
} sl_fetch_stats;

/* GETs url (s3:// or http(s)://) into sink: at most max bytes (more is
 * SL_ETOOBIG naming the URL), exactly expect bytes when expect is not
 * UINT64_MAX. *got gets the body's size. Errors: SL_EIO (404, 403,
 * connection refused..., naming the URL and the status; retries
 * exhausted), SL_ETOOBIG, SL_ENOMEM, SL_ESTATE (sink->cancel). */
sl_status sl_fetch(const sl_fetch_conf *c, const char *url, uint64_t max,
                   uint64_t expect, sl_fetch_sink *sink, uint64_t *got,
                   sl_fetch_stats *stats, sl_err *err);

/* GETs bytes [from, from + len) of url's object into sink, as sl_fetch
 * (retried; a cut body resumed from where it stopped): exactly len bytes.
 * A server that answers with the whole object (it ignores Range) is
 * SL_EIO saying so. */
sl_status sl_fetch_range(const sl_fetch_conf *c, const char *url, uint64_t from,
                         uint64_t len, sl_fetch_sink *sink,
                         sl_fetch_stats *stats, sl_err *err);

#endif
