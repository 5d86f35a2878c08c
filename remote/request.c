/* The options every request shares; see request.h. */
#include "remote/request.h"

#include <stdio.h>
#include <string.h>

CURLcode sl_request_setup(CURL *h, const sl_fetch_conf *c, const char *http,
                          bool s3, double left, struct curl_slist **hdrs) {
  CURLcode rc = CURLE_OK;
#define SET(opt, val)                                                          \
  do {                                                                         \
    if (rc == CURLE_OK)                                                        \
      rc = curl_easy_setopt(h, opt, val);                                      \
  } while (0)
  SET(CURLOPT_URL, http);
  SET(CURLOPT_NOSIGNAL, 1L);
  SET(CURLOPT_PROTOCOLS_STR, "http,https");
  SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  /* S3 answers where to go with an error, not a redirect; and a
   * redirect would carry its headers (a session token) to another host. */
  SET(CURLOPT_FOLLOWLOCATION, s3 ? 0L : 1L);
  SET(CURLOPT_MAXREDIRS, 5L);
  /* Credentials go to the first host only (curl's default, said here). */
  SET(CURLOPT_UNRESTRICTED_AUTH, 0L);
  SET(CURLOPT_CONNECTTIMEOUT_MS, (long)(left < 10 ? left * 1000 : 10000));
  SET(CURLOPT_TIMEOUT_MS, (long)(left * 1000) + 1);
  SET(CURLOPT_SSL_VERIFYPEER, 1L);
  SET(CURLOPT_SSL_VERIFYHOST, 2L);
  if (c->ca_bundle && *c->ca_bundle)
    SET(CURLOPT_CAINFO, c->ca_bundle);
  if (rc == CURLE_OK && s3 && c->access_key && *c->access_key) {
    char sig[96];
    snprintf(sig, sizeof sig, "aws:amz:%s:s3",
             c->region && *c->region ? c->region : "us-east-1");
    SET(CURLOPT_AWS_SIGV4, sig);
    SET(CURLOPT_USERNAME, c->access_key);
    SET(CURLOPT_PASSWORD, c->secret_key ? c->secret_key : "");
    if (c->session_token && *c->session_token) {
      char tok[4096];
      if (snprintf(tok, sizeof tok, "x-amz-security-token: %s",
                   c->session_token) >= (int)sizeof tok)
        return CURLE_BAD_FUNCTION_ARGUMENT;
      struct curl_slist *l = curl_slist_append(*hdrs, tok);
      if (!l)
        return CURLE_OUT_OF_MEMORY;
      *hdrs = l;
    }
  }
  if (rc == CURLE_OK && s3) {
    /* S3 wants the payload's hash; a GET's or a HEAD's is that of
     * nothing. */
    struct curl_slist *l = curl_slist_append(
        *hdrs,
        "x-amz-content-sha256: "
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    if (!l)
      return CURLE_OUT_OF_MEMORY;
    *hdrs = l;
  }
  if (*hdrs)
    SET(CURLOPT_HTTPHEADER, *hdrs);
#undef SET
  return rc;
}

bool sl_request_retryable_status(long s) {
  return s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504;
}

bool sl_request_retryable_curl(CURLcode rc) {
  switch (rc) {
  case CURLE_COULDNT_CONNECT:
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_RECV_ERROR:
  case CURLE_SEND_ERROR:
  case CURLE_PARTIAL_FILE:
  case CURLE_GOT_NOTHING:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_COULDNT_RESOLVE_HOST:
    return true;
  default:
    return false;
  }
}

void sl_request_s3_code(const char *body, char *code, size_t cap) {
  code[0] = '\0';
  const char *b = strstr(body, "<Code>");
  const char *e = b ? strstr(b, "</Code>") : NULL;
  if (!b || !e)
    return;
  b += 6;
  size_t n = 0;
  for (; b < e && n + 1 < cap; b++)
    code[n++] = (*b >= 'A' && *b <= 'Z') || (*b >= 'a' && *b <= 'z') ||
                        (*b >= '0' && *b <= '9')
                    ? *b
                    : '?';
  code[n] = '\0';
}

double sl_request_backoff(unsigned n, double u) {
  return 0.05 * (double)(1u << (n < 7 ? n : 7)) * (0.5 + 0.5 * u);
}

void sl_request_keep_body(char *body, size_t cap, size_t *len, const char *p,
                          size_t n) {
  size_t room = cap - 1 - *len;
  size_t k = n < room ? n : room;
  memcpy(body + *len, p, k);
  *len += k;
  body[*len] = '\0';
}

const char *sl_request_status_hint(long status) {
  return status == 403   ? " (credentials or region refused)"
         : status == 404 ? " (no such object)"
                         : "";
}
