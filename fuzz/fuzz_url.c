/* libFuzzer target: the dataset URL helpers (remote/url.c), which take
 * dataset.path, io.s3_endpoint, io.s3_region and the names in a shard
 * index (a remote file) and build the URL each request goes to, show a
 * URL in messages, parse a range answer's Content-Range header (the
 * whole input, as the server sent it), and expand a URL into the shard
 * names it stands for (formats/files/shard_paths.c: a brace pattern, or
 * TFDS's -IIIII-of-NNNNN from the name alone). The input
 * is cut at its first three NULs into a URL, an endpoint, a region and a
 * name; the result must fit its buffer and end in a NUL. The URL is
 * also shown as messages show it (common/url_shown.h: credentials
 * dropped, alone and inside a text): never longer than it, NUL-ended, and
 * showing it again changes nothing but what a cut made. Build and run:
 * fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/url_shown.h"
#include "formats/files/shard_paths.h"
#include "remote/url.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next NUL-terminated part of [*p, end) (the rest when no NUL). */
static const char *part(const char **p, const char *end) {
  const char *s = *p;
  const char *nul = memchr(s, '\0', (size_t)(end - s));
  *p = nul ? nul + 1 : end;
  return s;
}

/* Counts the names a pattern or TFDS name expands to; stops at 4096 (a
 * pattern of a million names is allowed, and slow to fuzz). */
static sl_status count_name(void *ctx, const char *path, sl_err *err) {
  size_t *n = ctx;
  if (strnlen(path, 1 << 16) == 1 << 16)
    abort();
  if (++*n > 4096)
    return sl_err_set(err, SL_ECONFIG, "enough");
  return SL_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = malloc(size + 4); /* NULs after the input end every part */
  if (!buf)
    return 0;
  memcpy(buf, data, size);
  memset(buf + size, 0, 4);
  const char *p = buf, *end = buf + size + 1;
  const char *url = part(&p, end);
  const char *endpoint = p < end ? part(&p, end) : "";
  const char *region = p < end ? part(&p, end) : "";
  const char *name = p < end ? part(&p, end) : "";
  (void)sl_url_kind_of(url);
  char out[SL_URL_MAX], small[64];
  sl_err err = {0};
  if (sl_url_http(url, endpoint, region, out, sizeof out, &err) == SL_OK &&
      strnlen(out, sizeof out) == sizeof out)
    abort();
  if (sl_url_http(url, endpoint, region, small, sizeof small, &err) == SL_OK &&
      strnlen(small, sizeof small) == sizeof small)
    abort();
  if (sl_url_sibling(url, name, out, sizeof out, &err) == SL_OK &&
      strnlen(out, sizeof out) == sizeof out)
    abort();
  size_t n = strlen(url);
  char *text = malloc(n + 1), *again = malloc(n + 1);
  if (text && again) {
    memcpy(text, url, n + 1);
    sl_text_hide_credentials(text); /* in place: the text only shrinks */
    if (strlen(text) > n)
      abort();
    memcpy(again, text, strlen(text) + 1);
    sl_text_hide_credentials(again);
    if (strlen(again) > strlen(text))
      abort();
    (void)sl_url_shown(url, small, sizeof small);
    if (strnlen(small, sizeof small) == sizeof small)
      abort();
  }
  free(again);
  free(text);
  /* The whole input, not NUL-terminated, as a response header line. */
  uint64_t first, last, total;
  if (sl_http_content_range((const char *)data, size, &first, &last, &total) &&
      (first > last || (total != UINT64_MAX && last >= total)))
    abort();
  /* The shard names a URL stands for: TFDS's -IIIII-of-NNNNN (from the
   * name alone) or a brace pattern. */
  size_t names = 0;
  bool tfds = false;
  if (sl_shard_tfds_named(url, count_name, &names, &tfds, &err) == SL_OK &&
      tfds != (names > 1))
    abort();
  names = 0;
  (void)sl_shard_expand(url, false, count_name, &names, &err);
  free(buf);
  return 0;
}
