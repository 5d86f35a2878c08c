/* The local cache of remote objects (remote/cache.h).
 *
 * Layout of the folder: objects as H-SIZE-CRC.obj (H: 32 hex digits of a
 * 128-bit hash of the URL), or H-SIZE-tT.obj for one known by its ETag (T:
 * a hash of it; sl_cache_get_tagged); downloads in progress as
 * .tmp.H-SIZE-CRC.PID, made at their full size (posix_fallocate) so that they
 * count against the bound from the start; cache.lock, held while the folder is
 * summed and room made (and a download's space reserved), so that the bound
 * holds across every process sharing the folder; lock.NN, 64 lock files an
 * object's URL picks one of, held while it is fetched, so that processes
 * and threads wanting one object fetch it once. Files are 0600, opened
 * relative to the folder's descriptor without following links. */
#include "remote/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/rng.h"
#include "common/url_shown.h"
#include "remote/url.h"

#define LOCK_SLOTS 64

#define NAME_CAP 96

/* An object of the reader's plan, by name (sorted, for a binary search). */
typedef struct plan_entry {
  char name[NAME_CAP];
  size_t k;
} plan_entry;

typedef struct plan_use {
  _Atomic uint64_t next;
} plan_use;

struct sl_cache {
  sl_cache_crc_fn crc;
  int dirfd;
  char *dir;
  uint64_t bound;
  sl_fetch_conf conf;
  pthread_mutex_t mu; /* the stats */
  sl_cache_stats stats;
  /* The plan (sl_cache_plan_open): n entries sorted by name, each object's
   * next use by k, and the reader's latest position. */
  size_t plan_n;
  plan_entry *plan;
  plan_use *plan_next;
  _Atomic uint64_t plan_now;
  atomic_bool cancel; /* sl_cache_cancel */
};

static void hash_text(const char *text, uint64_t h[2]) {
  h[0] = 0xcbf29ce484222325ull;
  h[1] = 0x84222325cbf29ce4ull;
  for (const char *p = text; *p; p++) {
    h[0] = (h[0] ^ (unsigned char)*p) * 0x100000001b3ull;
    h[1] = sl_mix64(h[1] ^ (unsigned char)*p);
  }
}

/* An object's URL as shown (common/url_shown.h): without user:password@
 * and query, so that a presigned URL signed again, or other credentials,
 * name the same cached object (its size and checksum or ETag, also in the
 * name, tell objects apart). */
static void hash_url(const char *url, uint64_t h[2]) {
  char shown[SL_URL_MAX + 1]; /* URLs are shorter (sl_url_http) */
  hash_text(sl_url_shown(url, shown, sizeof shown), h);
}

static void object_name(const char *url, uint64_t size, uint32_t crc, char *buf,
                        size_t cap) {
  uint64_t h[2];
  hash_url(url, h);
  snprintf(buf, cap,
           "%016" PRIx64 "%016" PRIx64 "-%" PRIu64 "-%08" PRIx32 ".obj", h[0],
           h[1], size, crc);
}

/* An object known by its ETag rather than a checksum (sl_cache_get_tagged):
 * H-SIZE-tT.obj, T a hash of the ETag. */
static void tagged_name(const char *url, uint64_t size, const char *etag,
                        char *buf, size_t cap) {
  uint64_t h[2], t[2];
  hash_url(url, h);
  hash_text(etag, t);
  snprintf(buf, cap,
           "%016" PRIx64 "%016" PRIx64 "-%" PRIu64 "-t%016" PRIx64 ".obj", h[0],
           h[1], size, t[0] ^ t[1]);
}

/* dir and the folders above it that are missing, 0700 (as `mkdir -p`:
 * io.cache_dir = /scratch/me/sluice on a node where /scratch/me is not
 * made yet). 0, or -1 with errno. */
static int make_dirs(const char *dir) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p != '\0')
      continue;
    char was = *p;
    *p = '\0';
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
      return -1;
    *p = was;
    if (!was)
      return 0;
  }
}

sl_status sl_cache_open(sl_cache **out, const char *dir, uint64_t bound,
                        const sl_fetch_conf *conf, sl_cache_crc_fn crc,
                        sl_err *err) {
  *out = NULL;
  if (make_dirs(dir) != 0)
    return sl_err_errno(err, SL_EIO, errno, "io.cache_dir %s", dir);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return sl_err_errno(err, SL_EIO, errno,
                        "io.cache_dir %s (must be a folder, not a link)", dir);
  struct stat sb;
  if (fstat(fd, &sb) != 0 || sb.st_uid != geteuid()) {
    close(fd);
    return sl_err_set(err, SL_EIO,
                      "io.cache_dir %s: not owned by this user (another "
                      "user's files would be trusted as datasets)",
                      dir);
  }
  sl_cache *c = calloc(1, sizeof *c);
  if (!c || !(c->dir = strdup(dir)) || pthread_mutex_init(&c->mu, NULL) != 0) {
    if (c)
      free(c->dir);
    free(c);
    close(fd);
    return sl_err_set(err, SL_ENOMEM, "io.cache_dir %s: no memory", dir);
  }
  c->dirfd = fd;
  atomic_init(&c->cancel, false);
  c->crc = crc;
  c->bound = bound;
  c->conf = *conf;
  *out = c;
  return SL_OK;
}

void sl_cache_close(sl_cache *c) {
  if (!c)
    return;
  free(c->plan);
  free(c->plan_next);
  close(c->dirfd);
  pthread_mutex_destroy(&c->mu);
  free(c->dir);
  free(c);
}

uint64_t sl_cache_bound(const sl_cache *c) {
  return c->bound;
}

void sl_cache_cancel(sl_cache *c, bool on) {
  atomic_store(&c->cancel, on);
}

const char *sl_cache_dir(const sl_cache *c) {
  return c->dir;
}

sl_status sl_cache_plan_open(sl_cache *c, size_t n, sl_err *err) {
  free(c->plan);
  free(c->plan_next);
  c->plan_n = 0;
  c->plan = calloc(n ? n : 1, sizeof *c->plan);
  c->plan_next = calloc(n ? n : 1, sizeof *c->plan_next);
  if (!c->plan || !c->plan_next) {
    free(c->plan);
    free(c->plan_next);
    c->plan = NULL;
    c->plan_next = NULL;
    return sl_err_set(err, SL_ENOMEM,
                      "io.cache_dir %s: no memory for a "
                      "plan of %zu objects",
                      c->dir, n);
  }
  for (size_t k = 0; k < n; k++)
    atomic_init(&c->plan_next[k].next, SL_CACHE_DONE);
  atomic_init(&c->plan_now, 0);
  c->plan_n = n;
  return SL_OK;
}

void sl_cache_plan_object(sl_cache *c, size_t k, const char *url, uint64_t size,
                          uint32_t crc) {
  if (k >= c->plan_n)
    return;
  object_name(url, size, crc, c->plan[k].name, sizeof c->plan[k].name);
  c->plan[k].k = k;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const plan_entry *)a)->name, ((const plan_entry *)b)->name);
}

void sl_cache_plan_sort(sl_cache *c) {
  if (c->plan_n)
    qsort(c->plan, c->plan_n, sizeof *c->plan, by_name);
}

void sl_cache_plan_next(sl_cache *c, size_t k, uint64_t when) {
  if (k < c->plan_n)
    atomic_store(&c->plan_next[k].next, when);
}

void sl_cache_plan_now(sl_cache *c, uint64_t now) {
  atomic_store(&c->plan_now, now);
}

/* The next use of the object named name: SL_CACHE_DONE outside the plan. */
static uint64_t next_use(const sl_cache *c, const char *name) {
  if (!c->plan_n)
    return SL_CACHE_DONE;
  plan_entry key;
  snprintf(key.name, sizeof key.name, "%s", name);
  const plan_entry *e =
      bsearch(&key, c->plan, c->plan_n, sizeof *c->plan, by_name);
  return e ? atomic_load(&c->plan_next[e->k].next) : SL_CACHE_DONE;
}

void sl_cache_stats_get(sl_cache *c, sl_cache_stats *out) {
  pthread_mutex_lock(&c->mu);
  *out = c->stats;
  pthread_mutex_unlock(&c->mu);
}

/* flock on the folder's file name, made if missing (wait: blocking, else
 * -1 with EWOULDBLOCK when another holds it). Returns the fd, or -1 with
 * errno. */
static int lock_file(const sl_cache *c, const char *name, bool wait) {
  int fd =
      openat(c->dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return -1;
  while (flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) != 0) {
    if (errno != EINTR) {
      int e = errno;
      close(fd);
      errno = e;
      return -1;
    }
  }
  return fd;
}

static void unlock_file(int fd) {
  if (fd >= 0) {
    flock(fd, LOCK_UN);
    close(fd);
  }
}

typedef struct entry {
  char name[NAME_CAP];
  uint64_t bytes;
  int64_t mtime_ns;
  uint64_t next; /* its next use by the plan (SL_CACHE_DONE: none) */
} entry;

/* Whether a download's process is gone (its .tmp file left over). */
static bool orphan_tmp(const char *name) {
  const char *dot = strrchr(name, '.');
  long pid = dot ? strtol(dot + 1, NULL, 10) : 0;
  return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* The object to evict next among v[0..n) (bytes 0: gone already), or n:
 * outside the plan or done, the least recently used; then the one used
 * furthest after `protect`; with last_resort, then the least recently used
 * of the rest. */
static size_t victim(const entry *v, size_t n, uint64_t protect,
                     bool last_resort) {
  size_t best = n;
  for (size_t k = 0; k < n; k++)
    if (v[k].bytes && v[k].next == SL_CACHE_DONE &&
        (best == n || v[k].mtime_ns < v[best].mtime_ns))
      best = k;
  if (best < n)
    return best;
  for (size_t k = 0; k < n; k++)
    if (v[k].bytes && v[k].next > protect &&
        (best == n || v[k].next > v[best].next))
      best = k;
  if (best < n || !last_resort)
    return best;
  for (size_t k = 0; k < n; k++)
    if (v[k].bytes && (best == n || v[k].mtime_ns < v[best].mtime_ns))
      best = k;
  return best;
}

/* The folder's listing from its start, on a descriptor of its own (the
 * folder's stays open for openat); NULL with errno set. */
static DIR *open_listing(sl_cache *c) {
  int dfd = dup(c->dirfd);
  DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
  if (!d) {
    int e = errno;
    if (dfd >= 0)
      close(dfd);
    errno = e;
    return NULL;
  }
  rewinddir(d);
  return d;
}

/* Under cache.lock: makes room for need more bytes, evicting objects
 * (never `keep`) in the order victim() gives. *busy: there is no room only
 * because of other downloads in progress (they end, then there may be),
 * or, without last_resort, because every object is wanted at or before
 * `protect`: SL_OK then, nothing reserved. */
static sl_status make_room(sl_cache *c, uint64_t need, const char *keep,
                           const char *shown, uint64_t protect,
                           bool last_resort, bool *busy, sl_err *err) {
  *busy = false;
  DIR *d = open_listing(c);
  if (!d)
    return sl_err_errno(err, SL_EIO, errno, "io.cache_dir %s", c->dir);
  entry *v = NULL;
  size_t n = 0, cap = 0;
  uint64_t total = 0, downloading = 0;
  sl_status st = SL_OK;
  struct dirent *e;
  while (st == SL_OK && (errno = 0, e = readdir(d)) != NULL) {
    /* A download's name holds its object's (".tmp.NAME.obj.PID"): never
     * an eviction candidate. */
    size_t len = strlen(e->d_name);
    bool tmp = strncmp(e->d_name, ".tmp.", 5) == 0;
    bool obj = !tmp && len > 4 && strcmp(e->d_name + len - 4, ".obj") == 0;
    if (!obj && !tmp)
      continue;
    struct stat sb;
    if (fstatat(c->dirfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(sb.st_mode))
      continue;
    if (tmp && orphan_tmp(e->d_name)) {
      unlinkat(c->dirfd, e->d_name, 0);
      continue;
    }
    total += (uint64_t)sb.st_size; /* downloads: their full size, reserved */
    if (tmp)
      downloading += (uint64_t)sb.st_size;
    if (!obj || !strcmp(e->d_name, keep) || len >= sizeof v->name)
      continue;
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 64;
      entry *w = realloc(v, nc * sizeof *v);
      if (!w) {
        st = sl_err_set(err, SL_ENOMEM, "io.cache_dir %s: no memory", c->dir);
        break;
      }
      v = w;
      cap = nc;
    }
    memcpy(v[n].name, e->d_name, len + 1); /* len < 96: checked above */
    v[n].next = next_use(c, e->d_name);
    v[n].bytes = (uint64_t)sb.st_size;
    v[n].mtime_ns =
        (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    n++;
  }
  closedir(d);
  while (st == SL_OK && total + need > c->bound) {
    size_t old = victim(v, n, protect, last_resort);
    if (old == n && (downloading > 0 || !last_resort)) {
      *busy = true;
      break;
    }
    if (old == n) {
      st = sl_err_set(err, SL_ETOOBIG,
                      "%s: %" PRIu64
                      " bytes do not fit io.cache_bytes = %" PRIu64
                      " beside the %" PRIu64
                      " bytes of downloads in progress (raise io.cache_bytes)",
                      shown, need, c->bound, total);
      break;
    }
    if (unlinkat(c->dirfd, v[old].name, 0) == 0 || errno == ENOENT) {
      total -= v[old].bytes < total ? v[old].bytes : total;
      pthread_mutex_lock(&c->mu);
      c->stats.evictions++;
      pthread_mutex_unlock(&c->mu);
    }
    v[old].bytes = 0;
  }
  free(v);
  return st;
}

typedef struct tmp_sink {
  int fd;
  uint64_t at;
  uint32_t crc;
  sl_cache_crc_fn update;
} tmp_sink;

static int tmp_write(void *user, const void *bytes, size_t n) {
  tmp_sink *s = user;
  const uint8_t *p = bytes;
  size_t done = 0;
  while (done < n) {
    ssize_t w = pwrite(s->fd, p + done, n - done, (off_t)(s->at + done));
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      if (w == 0)
        errno = ENOSPC;
      return -1;
    }
    done += (size_t)w;
  }
  s->crc = s->update(s->crc, p, n);
  s->at += n;
  return 0;
}

static int tmp_rewind(void *user, uint64_t at) {
  tmp_sink *s = user;
  if (at != 0) { /* only restarts from nothing are asked for */
    errno = EINVAL;
    return -1;
  }
  s->at = 0;
  s->crc = 0;
  return 0;
}

static uint64_t now_ns(void) {
  return sl_now_ns();
}

/* The cached object, opened; -1 (errno ENOENT) when not there. */
static int open_cached(sl_cache *c, const char *name, uint64_t size) {
  int fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
      (uint64_t)sb.st_size != size) {
    close(fd);
    errno = ENOENT;
    return -1;
  }
  /* Recently used: evicted last. */
  (void)futimens(fd, (struct timespec[2]){{.tv_nsec = UTIME_OMIT},
                                          {.tv_nsec = UTIME_NOW}});
  return fd;
}

/* How an object is wanted: by a reader now (sl_cache_get: a descriptor,
 * waiting for whatever it takes), or ahead of its use (sl_cache_ahead). */
typedef struct want {
  bool ahead;
  uint64_t when;     /* ahead: the position it is wanted for */
  uint64_t since_ns; /* a reader: when it began to wait (its deadline
                        counts from then, waits for another's fetch of
                        the object included) */
  bool *no_room;     /* ahead: set when no room could be made */
  bool unchecked;    /* no checksum to check (sl_cache_get_tagged) */
} want;

static void count(sl_cache *c, uint64_t *field, uint64_t add) {
  pthread_mutex_lock(&c->mu);
  *field += add;
  pthread_mutex_unlock(&c->mu);
}

/* Under the object's lock slot, with no cached copy: room reserved, the
 * download to tmp, checked, synced and renamed to name; *fd_out (reader
 * only) opened on it first. */
static sl_status download(sl_cache *c, const char *url, uint64_t size,
                          uint32_t crc, const char *name, const want *w,
                          int *fd_out, sl_err *err) {
  char tmp[128];
  snprintf(tmp, sizeof tmp, ".tmp.%.80s.%ld", name, (long)getpid());
  sl_status st = SL_OK;
  int big = -1;
  uint64_t protect = w->ahead ? w->when : atomic_load(&c->plan_now);
  /* Room for it: evicting objects, or waiting while other downloads (of
   * this process's workers or another's) hold the rest, within the fetch
   * deadline. Ahead of its use, no waiting: the caller tries later. */
  for (uint64_t waited_ms = 0;; waited_ms += 20) {
    bool busy = false;
    big = lock_file(c, "cache.lock", true);
    if (big < 0)
      st = sl_err_errno(err, SL_EIO, errno, "io.cache_dir %s/cache.lock",
                        c->dir);
    if (st == SL_OK && size > c->bound)
      st = sl_err_set(err, SL_ETOOBIG,
                      "%s: %" PRIu64
                      " bytes, more than io.cache_bytes = %" PRIu64
                      " (raise it above the largest shard)",
                      url, size, c->bound);
    if (st == SL_OK)
      st = make_room(c, size, name, url, protect, !w->ahead, &busy, err);
    if (st != SL_OK || !busy)
      break;
    unlock_file(big);
    big = -1;
    if (w->ahead) {
      *w->no_room = true;
      return SL_OK;
    }
    if ((double)waited_ms / 1000 > c->conf.deadline_s) {
      st = sl_err_set(err, SL_ETOOBIG,
                      "%s: %" PRIu64 " bytes found no room in io.cache_bytes ="
                      " %" PRIu64 " beside other downloads for %.0f s (raise "
                      "io.cache_bytes to the shards read at once)",
                      url, size, c->bound, c->conf.deadline_s);
      break;
    }
    struct timespec ms20 = {.tv_nsec = 20000000};
    nanosleep(&ms20, NULL);
  }
  int t = -1, fd = -1;
  if (st == SL_OK) {
    t = openat(c->dirfd, tmp,
               O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (t < 0)
      st = sl_err_errno(err, SL_EIO, errno, "io.cache_dir %s/%s", c->dir, tmp);
    else if (size && (errno = posix_fallocate(t, 0, (off_t)size)) != 0)
      st = sl_err_errno(err, SL_EIO, errno,
                        "io.cache_dir %s: room for %" PRIu64 " bytes of %s",
                        c->dir, size, url);
  }
  unlock_file(big);
  tmp_sink s = {.fd = t, .update = c->crc};
  sl_fetch_sink sink = {.write = tmp_write,
                        .rewind = tmp_rewind,
                        .user = &s,
                        .cancel = &c->cancel};
  sl_fetch_stats fs = {0};
  uint64_t got = 0;
  sl_fetch_conf conf = c->conf;
  if (!w->ahead) { /* at least one attempt, of half a second */
    double waited = (double)(now_ns() - w->since_ns) / 1e9;
    conf.spent_s =
        waited < conf.deadline_s - 0.5 ? waited : conf.deadline_s - 0.5;
  }
  if (st == SL_OK)
    st = sl_fetch(&conf, url, size, size, &sink, &got, &fs, err);
  if (st == SL_OK && !w->unchecked && s.crc != crc)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: its checksum differs from its index's (the object "
                    "changed on the server since it was indexed: re-run "
                    "`sluice index`)",
                    url);
  if (st == SL_OK && fdatasync(t) != 0)
    st = sl_err_errno(err, SL_EIO, errno, "io.cache_dir %s/%s: fsync", c->dir,
                      tmp);
  /* The caller's descriptor is opened before the object gets its name:
   * another thread or process making room may evict it the moment it has
   * one, and an open descriptor still reads it. */
  if (st == SL_OK && fd_out &&
      (fd = openat(c->dirfd, tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    st = sl_err_errno(err, SL_EIO, errno, "io.cache_dir %s/%s", c->dir, tmp);
  if (st == SL_OK && renameat(c->dirfd, tmp, c->dirfd, name) != 0)
    st = sl_err_errno(err, SL_EIO, errno, "io.cache_dir %s/%s: rename", c->dir,
                      tmp);
  if (t >= 0)
    close(t);
  if (st != SL_OK) {
    if (fd >= 0)
      close(fd);
    fd = -1;
    if (t >= 0)
      unlinkat(c->dirfd, tmp, 0);
  }
  pthread_mutex_lock(&c->mu);
  c->stats.fetches += st == SL_OK;
  c->stats.ahead += st == SL_OK && w->ahead;
  c->stats.bytes_fetched += fs.bytes;
  c->stats.retries += fs.retries;
  pthread_mutex_unlock(&c->mu);
  if (fd_out)
    *fd_out = fd;
  return st;
}

/* sl_cache_get and sl_cache_get_tagged: the object called name. */
static sl_status get_named(sl_cache *c, const char *url, uint64_t size,
                           uint32_t crc, const char *name, bool unchecked,
                           int *fd_out, sl_err *err) {
  *fd_out = -1;
  int fd = open_cached(c, name, size);
  if (fd >= 0) {
    count(c, &c->stats.hits, 1);
    *fd_out = fd;
    return SL_OK;
  }
  uint64_t t0 = now_ns();
  uint64_t h[2];
  hash_url(url, h);
  char slot[16];
  snprintf(slot, sizeof slot, "lock.%02u", (unsigned)(h[0] % LOCK_SLOTS));
  int lk = lock_file(c, slot, true);
  if (lk < 0)
    return sl_err_errno(err, SL_EIO, errno, "io.cache_dir %s/%s", c->dir, slot);
  sl_status st = SL_OK;
  /* Another process or thread may have fetched it meanwhile. */
  if ((fd = open_cached(c, name, size)) < 0)
    st = download(
        c, url, size, crc, name,
        &(want){.ahead = false, .since_ns = t0, .unchecked = unchecked}, &fd,
        err);
  unlock_file(lk);
  pthread_mutex_lock(&c->mu);
  c->stats.misses++;
  c->stats.wait_ns += now_ns() - t0;
  pthread_mutex_unlock(&c->mu);
  *fd_out = st == SL_OK ? fd : -1;
  return st;
}

sl_status sl_cache_get(sl_cache *c, const char *url, uint64_t size,
                       uint32_t crc, int *fd_out, sl_err *err) {
  char name[NAME_CAP];
  object_name(url, size, crc, name, sizeof name);
  return get_named(c, url, size, crc, name, false, fd_out, err);
}

sl_status sl_cache_get_tagged(sl_cache *c, const char *url, uint64_t size,
                              const char *etag, int *fd_out, sl_err *err) {
  char name[NAME_CAP];
  tagged_name(url, size, etag, name, sizeof name);
  return get_named(c, url, size, 0, name, true, fd_out, err);
}

sl_status sl_cache_ahead(sl_cache *c, const char *url, uint64_t size,
                         uint32_t crc, uint64_t when, bool *no_room,
                         sl_err *err) {
  char name[NAME_CAP];
  object_name(url, size, crc, name, sizeof name);
  *no_room = false;
  int fd = open_cached(c, name, size);
  if (fd >= 0) {
    close(fd);
    return SL_OK;
  }
  uint64_t h[2];
  hash_url(url, h);
  char slot[16];
  snprintf(slot, sizeof slot, "lock.%02u", (unsigned)(h[0] % LOCK_SLOTS));
  /* Held: a reader or another process is fetching this object (or one
   * sharing its slot): leave it to them. */
  int lk = lock_file(c, slot, false);
  if (lk < 0)
    return errno == EWOULDBLOCK
               ? SL_OK
               : sl_err_errno(err, SL_EIO, errno, "io.cache_dir %s/%s", c->dir,
                              slot);
  sl_status st = SL_OK;
  if ((fd = open_cached(c, name, size)) >= 0)
    close(fd);
  else
    st = download(c, url, size, crc, name,
                  &(want){.ahead = true, .when = when, .no_room = no_room},
                  NULL, err);
  unlock_file(lk);
  return st;
}

bool sl_cache_has(sl_cache *c, const char *url, uint64_t size, uint32_t crc) {
  char name[NAME_CAP];
  object_name(url, size, crc, name, sizeof name);
  struct stat sb;
  return fstatat(c->dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISREG(sb.st_mode) && (uint64_t)sb.st_size == size;
}

sl_status sl_cache_usage(sl_cache *c, uint64_t *bytes, uint64_t *objects,
                         sl_err *err) {
  *bytes = *objects = 0;
  DIR *d = open_listing(c);
  if (!d)
    return sl_err_errno(err, SL_EIO, errno, "io.cache_dir %s", c->dir);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    bool tmp = strncmp(e->d_name, ".tmp.", 5) == 0;
    bool obj = !tmp && len > 4 && strcmp(e->d_name + len - 4, ".obj") == 0;
    struct stat sb;
    if ((!obj && !tmp) ||
        fstatat(c->dirfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(sb.st_mode))
      continue;
    *bytes += (uint64_t)sb.st_size;
    *objects += obj;
  }
  closedir(d);
  return SL_OK;
}
