/* What every request to a dataset's server carries, a GET (fetch.c) or a
 * HEAD (head.c): the URL, the protocols and redirects allowed, the
 * connect and total timeouts, TLS verification, and for S3 the SigV4
 * signature, the session token and the payload hash. One place, so the
 * two kinds of request cannot drift apart on what keeps a credential safe.
 *
 * Thread safety: pure (sets options on the caller's handle). Memory: the
 * headers appended to *hdrs, which the caller frees (curl_slist_free_all)
 * whatever this returns. */
#ifndef SLUICE_REMOTE_REQUEST_H
#define SLUICE_REMOTE_REQUEST_H

#include <curl/curl.h>
#include <stdbool.h>

#include "remote/fetch.h"

/* Sets h up for http (an http(s) URL; s3: an S3 object's, to be signed)
 * with `left` seconds until the deadline. Returns the first failing
 * option's code: CURLE_BAD_FUNCTION_ARGUMENT for a session token too long,
 * CURLE_OUT_OF_MEMORY for a header that could not be added. */
CURLcode sl_request_setup(CURL *h, const sl_fetch_conf *c, const char *http,
                          bool s3, double left, struct curl_slist **hdrs);

/* Whether a failed attempt is worth another. An answer's status: 408, 429,
 * 500, 502, 503, 504. A transport error that another connection may not
 * meet: connect, timeout, reset, a cut body, an HTTP/2 stream, the TLS
 * handshake, name resolution. */
bool sl_request_retryable_status(long status);
bool sl_request_retryable_curl(CURLcode rc);

/* What an answer's status says beyond its number, for messages: " (no
 * such object)" for 404, " (credentials or region refused)" for 403, else
 * "". */
const char *sl_request_status_hint(long status);

/* Keeps the start of an error answer's body (for sl_request_s3_code):
 * n bytes at p appended to body (cap bytes, *len used, NUL-terminated),
 * as many as fit. */
void sl_request_keep_body(char *body, size_t cap, size_t *len, const char *p,
                          size_t n);

/* S3's error code from the start of an XML error body ("SlowDown",
 * "NoSuchKey"), or "": letters and digits only, others shown as '?'. */
void sl_request_s3_code(const char *body, char *code, size_t cap);

/* Seconds to wait before the attempt after attempt n (0-based): 50 ms
 * doubled each time up to 6.4 s, times a jitter of 0.5 + 0.5 u (u uniform
 * in [0, 1)) so that many clients' retries spread. */
double sl_request_backoff(unsigned n, double u);

#endif
