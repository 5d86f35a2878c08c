/* Remote datasets: what formats/ calls to read objects named by s3:// and
 * http(s):// URLs (remote/remote.c): small objects (a shard index) into
 * memory, shards whole into the local cache (remote/cache.h) and opened
 * from there. Credentials, region and endpoint come from the options, else
 * as every AWS tool reads them: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN, AWS_PROFILE with ~/.aws/credentials and ~/.aws/config
 * (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE), AWS_REGION /
 * AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL. They are kept
 * in this object only and never appear in a message. */
#ifndef SLUICE_REMOTE_REMOTE_H
#define SLUICE_REMOTE_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "remote/cache.h"
#include "remote/head.h"
#include "remote/url.h"

typedef struct sl_remote sl_remote;

typedef struct sl_remote_opts {
  const char *cache_dir;  /* NULL or "": $XDG_CACHE_HOME/sluice, else
                             ~/.cache/sluice */
  uint64_t cache_bytes;   /* the cache's bound; 0: SL_REMOTE_CACHE_DEFAULT */
  const char *endpoint;   /* S3's; NULL or "": from the environment */
  const char *region;     /* NULL or "": from the environment, us-east-1 */
  const char *ca_bundle;  /* NULL or "": the system's */
  bool unsigned_requests; /* a public bucket: no credentials sent */
  unsigned attempts;      /* per object, the first and the retries; 0: 7 */
  double deadline_s;      /* per object, all attempts; 0: 300 */
  double stall_s;         /* no byte for this long: retried; 0: 30 */
} sl_remote_opts;

#define SL_REMOTE_CACHE_DEFAULT (16ull << 30)

/* Errors: SL_EIO (the cache folder), SL_ECONFIG (a profile named but not
 * found, half a key pair), SL_ENOMEM. */
sl_status sl_remote_open(sl_remote **out, const sl_remote_opts *o,
                         sl_cache_crc_fn crc, sl_err *err);
void sl_remote_close(sl_remote *r);

/* Fetches url whole into a malloc'd buffer (*buf, *len; freed by the
 * caller): at most max bytes. Not cached. Errors as sl_fetch. */
sl_status sl_remote_read_all(sl_remote *r, const char *url, uint64_t max,
                             uint8_t **buf, size_t *len, sl_err *err);

/* As sl_remote_read_all, but an object the server says is not there
 * (HTTP 404; S3 answers 403 instead to a client that may not list the
 * bucket, which stays an error) is not an error: *buf NULL, *len 0. */
sl_status sl_remote_read_if_there(sl_remote *r, const char *url, uint64_t max,
                                  uint8_t **buf, size_t *len, sl_err *err);

/* A read-only descriptor of url's object (size bytes, crc32c crc) from the
 * cache, fetched first if missing (sl_cache_get). */
sl_status sl_remote_object(sl_remote *r, const char *url, uint64_t size,
                           uint32_t crc, int *fd, sl_err *err);

/* A single file at url (no index gives its checksum): its size and ETag
 * by HEAD, then a read-only descriptor of it from the cache, fetched
 * whole first if missing (sl_cache_get_tagged). *size: its bytes. Errors:
 * as sl_fetch_heads and sl_cache_get. */
sl_status sl_remote_file(sl_remote *r, const char *url, int *fd, uint64_t *size,
                         sl_err *err);

sl_cache *sl_remote_cache(sl_remote *r);
/* Where requests go and with which credentials, valid until close. */
const sl_fetch_conf *sl_remote_conf(const sl_remote *r);
/* The cache's folder (io.cache_dir, or its default), valid until close. */
const char *sl_remote_cache_dir(const sl_remote *r);

/* The sizes and ETags of urls[0, n) (sl_fetch_heads, remote/head.h). */
sl_status sl_remote_heads(sl_remote *r, const char *const *urls, size_t n,
                          sl_head *out, sl_err *err);

/* The checksum of url's object (size bytes), streamed once and not kept
 * (crc as sl_cache_crc_fn): what a foreign shard's cache entry is named
 * by before it is fetched into the cache. Errors as sl_fetch. */
sl_status sl_remote_checksum(sl_remote *r, const char *url, uint64_t size,
                             sl_cache_crc_fn crc, uint32_t *out, sl_err *err);

/* Why the latest failed sl_remote_object of url failed (its message without
 * the URL), into buf; false when url's latest try did not fail. What a
 * reader that only saw errno adds to its message. Any thread. */
bool sl_remote_failure(sl_remote *r, const char *url, char *buf, size_t cap);

#endif
