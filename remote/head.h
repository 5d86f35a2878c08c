/* The size and ETag of objects, asked with HEAD requests (remote/head.c):
 * what a set of foreign shards at URLs is checked against at open, before
 * any shard is read. S3 requests signed as sl_fetch's are, TLS verified,
 * retried on 429, 5xx, resets and timeouts within the fetch deadline;
 * messages name the URL and the status, never a credential. */
#ifndef SLUICE_REMOTE_HEAD_H
#define SLUICE_REMOTE_HEAD_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "remote/fetch.h"

/* What a HEAD says of one object: its size, and its ETag (quotes kept, ""
 * when the server sends none or a longer one). 88 bytes an object. */
#define SL_ETAG_MAX 80
typedef struct sl_head {
  uint64_t size;
  char etag[SL_ETAG_MAX];
} sl_head;

/* HEADs urls[0, n) in order on one connection (kept alive between them),
 * into out[0, n). Errors: SL_EIO naming the URL and the status (404: "no
 * such object"; an answer without Content-Length), SL_ENOMEM. */
sl_status sl_fetch_heads(const sl_fetch_conf *c, const char *const *urls,
                         size_t n, sl_head *out, sl_err *err);

#endif
