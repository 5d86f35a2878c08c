/* `sluice pack`'s worker threads: see tools/pack/pack_pool.h. */
#include "tools/pack/pack_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_INPUT (1ull << 30) /* larger input files are skipped */

typedef struct slot {
  int ready;
  size_t in_bytes;
  sl_pack_result r;
} slot;

struct sl_pack_pool {
  const sl_pack_inputs *in;
  sl_pack_opts opts;
  pthread_mutex_t mu;
  pthread_cond_t ready, space;
  size_t next;  /* next item a worker claims */
  size_t taken; /* items the caller has taken */
  int stop;
  size_t nslots;
  slot *slots;
  int nthreads;
  pthread_t *threads;
};

/* Reads a whole file; NULL with reason on failure. */
static uint8_t *read_file(const char *path, size_t *len, char *reason,
                          size_t cap, bool *no_memory) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(reason, cap, "cannot open: %s", strerror(errno));
    return NULL;
  }
  struct stat sb;
  uint8_t *buf = NULL;
  if (fstat(fd, &sb) != 0) {
    snprintf(reason, cap, "cannot stat: %s", strerror(errno));
  } else if ((unsigned long long)sb.st_size > MAX_INPUT) {
    snprintf(reason, cap, "file larger than 1 GiB");
  } else if (sb.st_size == 0) {
    snprintf(reason, cap, "empty file");
  } else if (!(buf = malloc((size_t)sb.st_size))) {
    snprintf(reason, cap, "out of memory");
    *no_memory = true;
  } else {
    size_t done = 0, want = (size_t)sb.st_size;
    while (done < want) {
      ssize_t n = read(fd, buf + done, want - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        snprintf(reason, cap, "read error: %s",
                 n < 0 ? strerror(errno) : "file shrank");
        free(buf);
        buf = NULL;
        break;
      }
      done += (size_t)n;
    }
    *len = done;
  }
  close(fd);
  return buf;
}

/* The caller's wait polls every timeout_ms to watch for signals, so the
 * default (realtime) clock does: a clock step only lengthens one poll. */
static int sync_init(sl_pack_pool *p) {
  int e = pthread_mutex_init(&p->mu, NULL);
  if (e != 0)
    return e;
  if ((e = pthread_cond_init(&p->ready, NULL)) != 0) {
    pthread_mutex_destroy(&p->mu);
    return e;
  }
  if ((e = pthread_cond_init(&p->space, NULL)) != 0) {
    pthread_cond_destroy(&p->ready);
    pthread_mutex_destroy(&p->mu);
  }
  return e;
}

static void *worker(void *arg) {
  sl_pack_pool *p = arg;
  sl_pack_codec *codec = sl_pack_codec_create();
  for (;;) {
    pthread_mutex_lock(&p->mu);
    while (!p->stop && p->next < p->in->n && p->next >= p->taken + p->nslots)
      pthread_cond_wait(&p->space, &p->mu);
    if (p->stop || p->next >= p->in->n) {
      pthread_mutex_unlock(&p->mu);
      break;
    }
    size_t i = p->next++;
    pthread_mutex_unlock(&p->mu);

    sl_pack_result r;
    memset(&r, 0, sizeof r);
    size_t len = 0;
    uint8_t *data = read_file(p->in->items[i].path, &len, r.reason,
                              sizeof r.reason, &r.no_memory);
    if (data && !codec) {
      free(data);
      snprintf(r.reason, sizeof r.reason, "out of memory (codec)");
      r.no_memory = true;
    } else if (data) {
      sl_pack_transcode(codec, data, len, &p->opts, &r);
    }
    pthread_mutex_lock(&p->mu);
    slot *s = &p->slots[i % p->nslots];
    s->r = r;
    s->in_bytes = len;
    s->ready = 1;
    pthread_cond_broadcast(&p->ready);
    pthread_mutex_unlock(&p->mu);
  }
  sl_pack_codec_destroy(codec);
  return NULL;
}

int sl_pack_pool_start(sl_pack_pool **out, const sl_pack_inputs *in,
                       const sl_pack_opts *o, int threads, char *msg,
                       size_t msg_len) {
  *out = NULL;
  sl_pack_pool *p = calloc(1, sizeof *p);
  if (!p) {
    snprintf(msg, msg_len, "out of memory");
    return -1;
  }
  p->in = in;
  p->opts = *o;
  p->nslots = 4 * (size_t)threads;
  p->slots = calloc(p->nslots, sizeof *p->slots);
  p->threads = calloc((size_t)threads, sizeof *p->threads);
  int e = !p->slots || !p->threads ? ENOMEM : sync_init(p);
  if (e != 0) {
    free(p->slots);
    free(p->threads);
    free(p);
    snprintf(msg, msg_len, "cannot set up the pack pool: %s", strerror(e));
    return -1;
  }
  for (int t = 0; t < threads; t++) {
    int rc = pthread_create(&p->threads[t], NULL, worker, p);
    if (rc) {
      snprintf(msg, msg_len, "cannot start thread %d: %s", t, strerror(rc));
      sl_pack_pool_stop(p);
      return -1;
    }
    p->nthreads++;
  }
  *out = p;
  return 0;
}

int sl_pack_pool_next(sl_pack_pool *p, sl_pack_result *r, size_t *in_bytes,
                      int timeout_ms) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += timeout_ms / 1000;
  until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&p->mu);
  slot *s = &p->slots[p->taken % p->nslots];
  while (!s->ready)
    if (pthread_cond_timedwait(&p->ready, &p->mu, &until) == ETIMEDOUT)
      break;
  int got = s->ready;
  if (got) {
    *r = s->r;
    *in_bytes = s->in_bytes;
    memset(s, 0, sizeof *s);
    p->taken++;
    pthread_cond_broadcast(&p->space);
  }
  pthread_mutex_unlock(&p->mu);
  return got;
}

void sl_pack_pool_stop(sl_pack_pool *p) {
  if (!p)
    return;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  pthread_cond_broadcast(&p->space);
  pthread_mutex_unlock(&p->mu);
  for (int t = 0; t < p->nthreads; t++)
    pthread_join(p->threads[t], NULL);
  for (size_t i = 0; i < p->nslots; i++)
    if (p->slots[i].ready)
      sl_pack_result_free(&p->slots[i].r);
  pthread_cond_destroy(&p->ready);
  pthread_cond_destroy(&p->space);
  pthread_mutex_destroy(&p->mu);
  free(p->slots);
  free(p->threads);
  free(p);
}
