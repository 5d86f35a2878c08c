/* Dataset URLs: s3://BUCKET/KEY and http(s)://HOST[:PORT]/PATH, parsed and
 * turned into the HTTP URL a request goes to. Pure functions, no I/O. */
#ifndef SLUICE_REMOTE_URL_H
#define SLUICE_REMOTE_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define SL_URL_MAX 2048

typedef enum sl_url_kind { SL_URL_NONE, SL_URL_S3, SL_URL_HTTP } sl_url_kind;

/* What path names: a URL sluice reads (s3://, http://, https://), or a
 * local path (SL_URL_NONE). */
sl_url_kind sl_url_kind_of(const char *path);

/* The HTTP(S) URL of an object into buf (cap >= SL_URL_MAX): an http(s)
 * URL as it is; s3://BUCKET/KEY at endpoint (NULL or "": AWS's regional
 * endpoint for region) in path style (ENDPOINT/BUCKET/KEY), which every
 * S3-compatible server takes. The key's characters outside RFC 3986's
 * unreserved set and '/' are percent-encoded. Errors: SL_EINVAL naming the
 * URL (no bucket, no key, a control character, too long). */
sl_status sl_url_http(const char *url, const char *endpoint, const char *region,
                      char *buf, size_t cap, sl_err *err);

/* base joined with a file name: "s3://b/train/" + "part-0.lmdb" (base's
 * last '/' kept, whatever follows it replaced: the index's URL works as
 * base too). Errors: SL_EINVAL (too long). */
sl_status sl_url_sibling(const char *base, const char *name, char *buf,
                         size_t cap, sl_err *err);

/* A Content-Range header line ("Content-Range: bytes 0-99/1234\r\n", the
 * name in any case, len bytes, not NUL-terminated): the range's first and
 * last byte and the object's size (UINT64_MAX when the server gives "*").
 * false: not that header, or not well formed (first > last, last >=
 * size, a number over 2^63). */
bool sl_http_content_range(const char *line, size_t len, uint64_t *first,
                           uint64_t *last, uint64_t *total);

#endif
