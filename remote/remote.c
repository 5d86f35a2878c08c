/* Remote datasets (remote/remote.h): where requests go, with which
 * credentials, and the cache. */
#include "remote/remote.h"

#include <curl/curl.h>
#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/fetch.h"
#include "remote/head.h"

#define FIELD 1024

struct sl_remote {
  char endpoint[FIELD], region[128], ca_bundle[PATH_MAX];
  char access_key[256], secret_key[256], session_token[4096];
  sl_fetch_conf conf;
  sl_cache *cache;
  char cache_dir[PATH_MAX];
  bool curl_ready;
  /* The latest failed object's URL and why (sl_remote_failure). */
  pthread_mutex_t fail_mu;
  bool fail_mu_ready;
  char fail_url[SL_URL_MAX], fail_why[SL_ERRMSG_MAX];
};

static const char *env(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

static void copy(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

/* What ~/.aws/credentials and ~/.aws/config say for one profile. */
typedef struct profile_read {
  const char *section; /* "default" or the profile's name */
  bool config;         /* ~/.aws/config: sections are "profile NAME" */
  bool seen;
  sl_remote *r;
} profile_read;

static int on_ini(void *user, const char *section, const char *key,
                  const char *value) {
  profile_read *p = user;
  char want[300];
  if (p->config && strcmp(p->section, "default") != 0)
    snprintf(want, sizeof want, "profile %s", p->section);
  else
    snprintf(want, sizeof want, "%s", p->section);
  if (strcmp(section, want) != 0)
    return 1;
  p->seen = true;
  sl_remote *r = p->r;
  if (!strcmp(key, "aws_access_key_id") && !r->access_key[0])
    copy(r->access_key, sizeof r->access_key, value);
  else if (!strcmp(key, "aws_secret_access_key") && !r->secret_key[0])
    copy(r->secret_key, sizeof r->secret_key, value);
  else if (!strcmp(key, "aws_session_token") && !r->session_token[0])
    copy(r->session_token, sizeof r->session_token, value);
  else if (!strcmp(key, "region") && !r->region[0])
    copy(r->region, sizeof r->region, value);
  else if (!strcmp(key, "endpoint_url") && !r->endpoint[0])
    copy(r->endpoint, sizeof r->endpoint, value);
  return 1;
}

/* Reads the profile from the two files (either may be missing). */
static sl_status read_profile(sl_remote *r, const char *profile, bool named,
                              sl_err *err) {
  const char *home = env("HOME");
  char cred[PATH_MAX], conf[PATH_MAX];
  const char *cf = env("AWS_SHARED_CREDENTIALS_FILE");
  const char *gf = env("AWS_CONFIG_FILE");
  snprintf(cred, sizeof cred, "%s", cf ? cf : "");
  snprintf(conf, sizeof conf, "%s", gf ? gf : "");
  if (!cf && home)
    snprintf(cred, sizeof cred, "%s/.aws/credentials", home);
  if (!gf && home)
    snprintf(conf, sizeof conf, "%s/.aws/config", home);
  profile_read p = {.section = profile, .r = r};
  if (cred[0])
    (void)ini_parse(cred, on_ini, &p); /* missing or unreadable: none */
  p.config = true;
  if (conf[0])
    (void)ini_parse(conf, on_ini, &p);
  if (named && !p.seen)
    return sl_err_set(err, SL_ECONFIG,
                      "AWS_PROFILE=%s: no such profile in %s or %s", profile,
                      cred[0] ? cred : "~/.aws/credentials",
                      conf[0] ? conf : "~/.aws/config");
  return SL_OK;
}

static sl_status credentials(sl_remote *r, const sl_remote_opts *o,
                             sl_err *err) {
  copy(r->endpoint, sizeof r->endpoint,
       o->endpoint && *o->endpoint  ? o->endpoint
       : env("AWS_ENDPOINT_URL_S3") ? env("AWS_ENDPOINT_URL_S3")
                                    : env("AWS_ENDPOINT_URL"));
  copy(r->region, sizeof r->region,
       o->region && *o->region ? o->region
       : env("AWS_REGION")     ? env("AWS_REGION")
                               : env("AWS_DEFAULT_REGION"));
  if (!o->unsigned_requests) {
    const char *id = env("AWS_ACCESS_KEY_ID"),
               *secret = env("AWS_SECRET_ACCESS_KEY");
    if ((id != NULL) != (secret != NULL))
      return sl_err_set(err, SL_ECONFIG, "%s is set but %s is not",
                        id ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                        id ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
    copy(r->access_key, sizeof r->access_key, id);
    copy(r->secret_key, sizeof r->secret_key, secret);
    copy(r->session_token, sizeof r->session_token, env("AWS_SESSION_TOKEN"));
  }
  /* The profile fills what the environment left unset (keys only when no
   * key came from it, and never for unsigned requests). */
  const char *profile = env("AWS_PROFILE");
  sl_status st =
      read_profile(r, profile ? profile : "default", profile != NULL, err);
  if (o->unsigned_requests) {
    r->access_key[0] = r->secret_key[0] = r->session_token[0] = '\0';
  }
  return st;
}

sl_status sl_remote_open(sl_remote **out, const sl_remote_opts *o,
                         sl_cache_crc_fn crc, sl_err *err) {
  *out = NULL;
  sl_remote *r = calloc(1, sizeof *r);
  if (!r)
    return sl_err_set(err, SL_ENOMEM, "remote: no memory");
  sl_status st = SL_OK;
  if (pthread_mutex_init(&r->fail_mu, NULL) != 0)
    st = sl_err_set(err, SL_ETHREAD, "remote: pthread_mutex_init failed");
  else
    r->fail_mu_ready = true;
  if (st == SL_OK)
    st = credentials(r, o, err);
  if (st == SL_OK) {
    /* Reference counted by libcurl and thread-safe since 7.84. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      st = sl_err_set(err, SL_EIO, "remote: curl_global_init failed");
    else
      r->curl_ready = true;
  }
  copy(r->ca_bundle, sizeof r->ca_bundle, o->ca_bundle);
  r->conf = (sl_fetch_conf){
      .endpoint = r->endpoint,
      .region = r->region,
      .access_key = r->access_key,
      .secret_key = r->secret_key,
      .session_token = r->session_token,
      .ca_bundle = r->ca_bundle,
      .retries = o->attempts ? o->attempts - 1 : 6,
      .deadline_s = o->deadline_s > 0 ? o->deadline_s : 300,
      .stall_s = o->stall_s > 0 ? o->stall_s : 30,
  };
  char dir[PATH_MAX];
  if (st == SL_OK) {
    const char *xdg = env("XDG_CACHE_HOME"), *home = env("HOME");
    if (o->cache_dir && *o->cache_dir)
      snprintf(dir, sizeof dir, "%s", o->cache_dir);
    else if (xdg)
      snprintf(dir, sizeof dir, "%s/sluice", xdg);
    else if (home)
      snprintf(dir, sizeof dir, "%s/.cache/sluice", home);
    else
      st = sl_err_set(err, SL_ECONFIG,
                      "io.cache_dir: not set, and neither XDG_CACHE_HOME nor "
                      "HOME says where");
  }
  if (st == SL_OK)
    copy(r->cache_dir, sizeof r->cache_dir, dir);
  if (st == SL_OK)
    st =
        sl_cache_open(&r->cache, dir,
                      o->cache_bytes ? o->cache_bytes : SL_REMOTE_CACHE_DEFAULT,
                      &r->conf, crc, err);
  if (st != SL_OK) {
    sl_remote_close(r);
    return st;
  }
  *out = r;
  return SL_OK;
}

void sl_remote_close(sl_remote *r) {
  if (!r)
    return;
  sl_cache_close(r->cache);
  if (r->curl_ready)
    curl_global_cleanup();
  if (r->fail_mu_ready)
    pthread_mutex_destroy(&r->fail_mu);
  /* The keys leave no copy behind in freed memory. */
  memset(r, 0, sizeof *r);
  free(r);
}

sl_cache *sl_remote_cache(sl_remote *r) {
  return r->cache;
}

typedef struct mem_sink {
  uint8_t *p;
  size_t len, cap, max;
} mem_sink;

static int mem_write(void *user, const void *bytes, size_t n) {
  mem_sink *m = user;
  if (m->cap - m->len < n) {
    size_t cap = m->cap ? m->cap : 65536;
    while (cap - m->len < n)
      cap *= 2;
    uint8_t *p = realloc(m->p, cap);
    if (!p) {
      errno = ENOMEM;
      return -1;
    }
    m->p = p;
    m->cap = cap;
  }
  memcpy(m->p + m->len, bytes, n);
  m->len += n;
  return 0;
}

static int mem_rewind(void *user, uint64_t at) {
  mem_sink *m = user;
  m->len = (size_t)at;
  return 0;
}

/* The body of url into *buf (*len), at most max bytes; with missing
 * (NULL: a 404 is an error) a 404 is *missing = true and SL_OK. */
static sl_status read_whole(sl_remote *r, const char *url, uint64_t max,
                            uint8_t **buf, size_t *len, bool *missing,
                            sl_err *err) {
  mem_sink m = {0};
  sl_fetch_sink sink = {.write = mem_write, .rewind = mem_rewind, .user = &m};
  sl_fetch_stats fs = {0};
  uint64_t got;
  *buf = NULL;
  *len = 0;
  sl_status st =
      sl_fetch(&r->conf, url, max, UINT64_MAX, &sink, &got, &fs, err);
  if (st != SL_OK) {
    free(m.p);
    if (missing && st == SL_EIO && fs.status == 404) {
      *missing = true;
      sl_err_clear(err);
      return SL_OK;
    }
    return st;
  }
  *buf = m.p ? m.p : malloc(1);
  *len = m.len;
  return *buf ? SL_OK : sl_err_set(err, SL_ENOMEM, "%s: no memory", url);
}

sl_status sl_remote_read_all(sl_remote *r, const char *url, uint64_t max,
                             uint8_t **buf, size_t *len, sl_err *err) {
  return read_whole(r, url, max, buf, len, NULL, err);
}

sl_status sl_remote_read_if_there(sl_remote *r, const char *url, uint64_t max,
                                  uint8_t **buf, size_t *len, sl_err *err) {
  bool missing = false;
  return read_whole(r, url, max, buf, len, &missing, err);
}

sl_status sl_remote_object(sl_remote *r, const char *url, uint64_t size,
                           uint32_t crc, int *fd, sl_err *err) {
  sl_status st = sl_cache_get(r->cache, url, size, crc, fd, err);
  pthread_mutex_lock(&r->fail_mu);
  if (st != SL_OK) {
    /* The message starts with the URL (or its shown form): keep why. */
    const char *why = err->msg, *colon = strstr(err->msg, ": ");
    if (colon && strncmp(err->msg, "io.cache_dir", 12) != 0)
      why = colon + 2;
    snprintf(r->fail_url, sizeof r->fail_url, "%s", url);
    snprintf(r->fail_why, sizeof r->fail_why, "%s", why);
  } else if (!strcmp(r->fail_url, url)) {
    r->fail_url[0] = '\0';
  }
  pthread_mutex_unlock(&r->fail_mu);
  return st;
}

sl_status sl_remote_file(sl_remote *r, const char *url, int *fd, uint64_t *size,
                         sl_err *err) {
  sl_head h;
  *fd = -1;
  sl_status st = sl_fetch_heads(&r->conf, &url, 1, &h, err);
  if (st != SL_OK)
    return st;
  *size = h.size;
  return sl_cache_get_tagged(r->cache, url, h.size, h.etag, fd, err);
}

bool sl_remote_failure(sl_remote *r, const char *url, char *buf, size_t cap) {
  pthread_mutex_lock(&r->fail_mu);
  bool failed = r->fail_url[0] && !strcmp(r->fail_url, url);
  if (failed)
    snprintf(buf, cap, "%s", r->fail_why);
  pthread_mutex_unlock(&r->fail_mu);
  return failed;
}

const sl_fetch_conf *sl_remote_conf(const sl_remote *r) {
  return &r->conf;
}

const char *sl_remote_cache_dir(const sl_remote *r) {
  return r->cache_dir;
}

sl_status sl_remote_heads(sl_remote *r, const char *const *urls, size_t n,
                          sl_head *out, sl_err *err) {
  return sl_fetch_heads(&r->conf, urls, n, out, err);
}

typedef struct crc_sink {
  sl_cache_crc_fn update;
  uint32_t crc;
} crc_sink;

static int crc_write(void *user, const void *bytes, size_t n) {
  crc_sink *s = user;
  s->crc = s->update(s->crc, bytes, n);
  return 0;
}

static int crc_rewind(void *user, uint64_t at) {
  crc_sink *s = user;
  if (at != 0) {
    errno = EINVAL;
    return -1;
  }
  s->crc = 0;
  return 0;
}

sl_status sl_remote_checksum(sl_remote *r, const char *url, uint64_t size,
                             sl_cache_crc_fn crc, uint32_t *out, sl_err *err) {
  crc_sink s = {.update = crc};
  sl_fetch_sink sink = {.write = crc_write, .rewind = crc_rewind, .user = &s};
  uint64_t got;
  sl_status st = sl_fetch(&r->conf, url, size, size, &sink, &got, NULL, err);
  *out = s.crc;
  return st;
}
