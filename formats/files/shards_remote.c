/* Foreign shards at URLs (formats/files/shards_remote.h): the shard URLs
 * from a pattern or a remote list, their sizes and ETags by HEAD, then the
 * set from its sidecar in the cache folder, or the sidecar built by
 * walking each shard once through the cache. */
#include "formats/files/shards_remote.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/rng.h"
#include "common/url_shown.h"
#include "formats/core/crc32c.h"
#include "formats/core/format.h"
#include "formats/files/shard_paths.h"
#include "formats/files/shard_sidecar.h"

#define LIST_MAX (64u << 20)
#define REINDEX "run `sluice index %s` to index the set again"

typedef struct url_list {
  char **v;
  size_t n, cap;
  uint64_t bytes;
} url_list;

static void urls_free(url_list *u) {
  for (size_t k = 0; k < u->n; k++)
    free(u->v[k]);
  free(u->v);
}

static sl_status add_url(void *ctx, const char *url, sl_err *err) {
  url_list *u = ctx;
  size_t len = strlen(url);
  if (u->n >= SL_SHARDS_MAX || len >= SL_SIDECAR_NAME_MAX ||
      u->bytes + len + 1 > SL_SHARD_BYTES_MAX)
    return sl_err_set(err, SL_ECONFIG,
                      "%.200s: more than %u shards, or a URL over %u bytes, "
                      "or %u MiB of URLs",
                      url, SL_SHARDS_MAX, SL_SIDECAR_NAME_MAX - 1,
                      SL_SHARD_BYTES_MAX >> 20);
  if (u->n == u->cap) {
    size_t cap = u->cap ? u->cap * 2 : 64;
    char **v = realloc(u->v, cap * sizeof *v);
    if (!v)
      return sl_err_set(err, SL_ENOMEM, "%.200s: no memory", url);
    u->v = v;
    u->cap = cap;
  }
  if (!(u->v[u->n] = strdup(url)))
    return sl_err_set(err, SL_ENOMEM, "%.200s: no memory", url);
  u->n++;
  u->bytes += len + 1;
  return SL_OK;
}

/* A list file at a URL: one URL, or path relative to the list's URL, a
 * line (each may be a brace pattern); blank lines and # comments
 * skipped. */
static sl_status read_list(sl_source *src, const char *path, url_list *u,
                           sl_err *err) {
  uint8_t *buf = NULL;
  size_t len = 0;
  sl_status st =
      sl_remote_read_all(src->remote, path, LIST_MAX, &buf, &len, err);
  char *line = st == SL_OK ? malloc(SL_SIDECAR_NAME_MAX) : NULL;
  char *url = line ? malloc(SL_URL_MAX) : NULL;
  if (st == SL_OK && !url)
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  uint64_t no = 0;
  for (size_t at = 0; st == SL_OK && at < len;) {
    const uint8_t *nl = memchr(buf + at, '\n', len - at);
    size_t end = nl ? (size_t)(nl - buf) : len, b = at;
    at = end + 1;
    no++;
    while (b < end && (buf[b] == ' ' || buf[b] == '\t'))
      b++;
    size_t e = end;
    while (e > b &&
           (buf[e - 1] == ' ' || buf[e - 1] == '\t' || buf[e - 1] == '\r'))
      e--;
    if (e == b || buf[b] == '#')
      continue;
    if (e - b >= SL_SIDECAR_NAME_MAX || memchr(buf + b, 0, e - b)) {
      st =
          sl_err_set(err, SL_ECONFIG,
                     "%s: line %" PRIu64 ": too long, or a NUL byte", path, no);
      break;
    }
    memcpy(line, buf + b, e - b);
    line[e - b] = '\0';
    if (sl_url_kind_of(line) != SL_URL_NONE)
      snprintf(url, SL_URL_MAX, "%s", line);
    else if (line[0] == '/')
      st = sl_err_set(err, SL_ECONFIG,
                      "%s: line %" PRIu64 ": %s: a list at a URL names its "
                      "shards by URL or by a path relative to its own",
                      path, no, line);
    else
      st = sl_url_sibling(path, line, url, SL_URL_MAX, err);
    if (st == SL_OK)
      st = sl_shard_expand(url, false, add_url, u, err);
  }
  if (st == SL_OK && u->n == 0)
    st = sl_err_set(err, SL_ECONFIG, "%s: a shard list without shards", path);
  free(url);
  free(line);
  free(buf);
  return st;
}

/* The sidecar's file name in the cache folder: a hash of the format, the
 * options and the shards' URLs as shown (no credentials: a presigned URL
 * signed again names the same set; sizes and ETags are checked against
 * it). */
static void sidecar_name(const sl_source *src, const url_list *u,
                         const char *opts, char *buf, size_t cap) {
  uint64_t h[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  const char *parts[2] = {src->format->name, opts};
  char shown[SL_SIDECAR_NAME_MAX];
  for (size_t k = 0; k < 2 + u->n; k++) {
    const char *s =
        k < 2 ? parts[k] : sl_url_shown(u->v[k - 2], shown, sizeof shown);
    for (const char *p = s;; p++) { /* the NUL too: parts stay apart */
      h[0] = (h[0] ^ (unsigned char)*p) * 0x100000001b3ull;
      h[1] = sl_mix64(h[1] ^ (unsigned char)*p);
      if (!*p)
        break;
    }
  }
  snprintf(buf, cap, "sidecar-%016" PRIx64 "%016" PRIx64 ".idx", h[0], h[1]);
}

/* The cache folder, opened without following a link. */
static int open_dir(const sl_source *src, sl_err *err) {
  const char *dir = sl_remote_cache_dir(src->remote);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    sl_err_errno(err, SL_EIO, errno, "io.cache_dir %s", dir);
  return fd;
}

/* The sidecar's bytes, or *buf NULL when there is none. */
static sl_status load(int dfd, const char *dir, const char *name, uint8_t **buf,
                      size_t *len, sl_err *err) {
  *buf = NULL;
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT
               ? SL_OK
               : sl_err_errno(err, SL_EIO, errno, "%s/%s", dir, name);
  struct stat sb;
  sl_status st = SL_OK;
  if (fstat(fd, &sb) != 0)
    st = sl_err_errno(err, SL_EIO, errno, "%s/%s: stat", dir, name);
  else if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > SL_SIDECAR_MAX)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s/%s: not a sidecar index (not a file, or over %llu "
                    "bytes)",
                    dir, name, SL_SIDECAR_MAX);
  uint8_t *p = st == SL_OK ? malloc(sb.st_size ? (size_t)sb.st_size : 1) : NULL;
  if (st == SL_OK && !p)
    st = sl_err_set(err, SL_ENOMEM, "%s/%s: no memory", dir, name);
  size_t have = 0;
  while (st == SL_OK && have < (size_t)sb.st_size) {
    ssize_t r = pread(fd, p + have, (size_t)sb.st_size - have, (off_t)have);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      st = sl_err_errno(err, SL_EIO, r < 0 ? errno : EIO, "%s/%s: read", dir,
                        name);
    else
      have += (size_t)r;
  }
  close(fd);
  if (st != SL_OK) {
    free(p);
    return st;
  }
  *buf = p;
  *len = have;
  return SL_OK;
}

/* Writes the sidecar under a temporary name, synced, then renamed. */
static sl_status store(int dfd, const char *dir, const char *name,
                       const uint8_t *p, size_t len, sl_err *err) {
  char tmp[128];
  snprintf(tmp, sizeof tmp, ".%.90s.%ld", name, (long)getpid());
  int fd = openat(dfd, tmp,
                  O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s/%s", dir, tmp);
  sl_status st = SL_OK;
  for (size_t at = 0; st == SL_OK && at < len;) {
    ssize_t w = write(fd, p + at, len - at);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      st = sl_err_errno(err, SL_EIO, w < 0 ? errno : ENOSPC, "%s/%s: write",
                        dir, tmp);
    else
      at += (size_t)w;
  }
  if (st == SL_OK && fdatasync(fd) != 0)
    st = sl_err_errno(err, SL_EIO, errno, "%s/%s: fsync", dir, tmp);
  if (close(fd) != 0 && st == SL_OK)
    st = sl_err_errno(err, SL_EIO, errno, "%s/%s: close", dir, tmp);
  if (st == SL_OK && renameat(dfd, tmp, dfd, name) != 0)
    st = sl_err_errno(err, SL_EIO, errno, "%s/%s: rename", dir, name);
  if (st != SL_OK)
    unlinkat(dfd, tmp, 0);
  return st;
}

/* The shards as lazy files of the sizes the HEADs gave; refused when one
 * is larger than the cache. */
static sl_status add_files(sl_source *src, const char *path, const url_list *u,
                           const sl_head *heads, sl_err *err) {
  if (!(src->file_crc = calloc(u->n, sizeof *src->file_crc)))
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  uint64_t bound = sl_cache_bound(sl_remote_cache(src->remote));
  for (size_t k = 0; k < u->n; k++) {
    if (heads[k].size > bound)
      return sl_err_set(err, SL_ECONFIG,
                        "%s: shard %s is %" PRIu64
                        " bytes, more than io.cache_bytes = %" PRIu64
                        ": raise io.cache_bytes above the largest shard",
                        path, u->v[k], heads[k].size, bound);
    sl_status st = sl_source_add_file(src, u->v[k], -1, heads[k].size, err);
    if (st != SL_OK)
      return st;
  }
  sl_source_files_done(src);
  return SL_OK;
}

/* RecordIO's multi-part records from a parsed sidecar (rising, below the
 * count: the parser checked): each must join within its entry's span,
 * which bounds the workers' join scratch. Memory: 16 bytes a join. */
static sl_status take_joins(sl_source *src, const sl_sidecar *s,
                            const char *file, const char *path, sl_err *err) {
  if (src->fmt != SL_FORMAT_RECORDIO)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: multi-part records in a %s set's sidecar "
                      "index: " REINDEX,
                      file, src->format->name, path);
  if (!(src->joins = malloc((size_t)s->njoins * sizeof *src->joins)))
    return sl_err_set(err, SL_ENOMEM,
                      "%s: no memory for %" PRIu64 " multi-part records", file,
                      s->njoins);
  for (uint64_t j = 0; j < s->njoins; j++) {
    sl_sidecar_join a = sl_sidecar_join_at(s, j);
    uint64_t joined = (uint64_t)a.skip + a.bytes;
    if (joined > src->index[a.sample].length)
      return sl_err_set(
          err, SL_EFORMAT,
          "%s: sample %" PRIu64 "'s multi-part record joins to "
          "%" PRIu64 " bytes, more than its %" PRIu32 " bytes: " REINDEX,
          file, a.sample, joined, src->index[a.sample].length, path);
    src->joins[j] = (sl_recio_join){a.sample, a.skip, a.bytes};
    src->njoins = j + 1;
    if (joined > src->join_scratch)
      src->join_scratch = joined;
  }
  return SL_OK;
}

/* The set from a parsed sidecar, each shard checked against its HEAD. */
static sl_status from_sidecar(sl_source *src, const char *path,
                              const url_list *u, const sl_head *heads,
                              const sl_sidecar *s, const char *opts,
                              const char *file, sl_err *err) {
  if (s->format != (uint32_t)src->fmt || strcmp(s->opts, opts) != 0 ||
      s->nshards != u->n)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: the sidecar index %s is another set's: " REINDEX,
                      path, file, path);
  char shown[SL_SIDECAR_NAME_MAX];
  for (size_t k = 0; k < u->n; k++) {
    const sl_sidecar_shard *h = &s->shards[k];
    if (strcmp(h->name, sl_url_shown(u->v[k], shown, sizeof shown)) != 0)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: the sidecar index %s names shard %zu %s: " REINDEX,
                        u->v[k], file, k + 1, h->name, path);
    if (h->size != heads[k].size)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: %" PRIu64 " bytes, its sidecar index says %" PRIu64
                        " (shard %zu of %zu changed since the set was "
                        "indexed): " REINDEX,
                        u->v[k], heads[k].size, h->size, k + 1, u->n, path);
    if (h->etag[0] && heads[k].etag[0] && strcmp(h->etag, heads[k].etag) != 0)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: ETag %s, its sidecar index says %s (shard %zu of "
                        "%zu changed since the set was indexed): " REINDEX,
                        u->v[k], heads[k].etag, h->etag, k + 1, u->n, path);
  }
  sl_status st = add_files(src, path, u, heads, err);
  if (st != SL_OK)
    return st;
  src->target_width = s->target_width;
  src->skipped = s->skipped;
  st = sl_source_alloc_index(src, s->count, err);
  if (st == SL_OK && s->names_raw &&
      !(src->name_off = calloc(s->count ? (size_t)s->count : 1, 8)))
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " names", path,
                    s->count);
  for (size_t k = 0; st == SL_OK && k < u->n; k++) {
    src->file_crc[k] = s->shards[k].crc;
    src->file_first[k] = s->shards[k].first;
    uint64_t end = k + 1 < u->n ? s->shards[k + 1].first : s->count;
    const sl_file_span *span = &src->spans[k];
    for (uint64_t i = s->shards[k].first; st == SL_OK && i < end; i++) {
      sl_sample_info *e = &src->index[i];
      uint64_t name_at;
      sl_sidecar_sample(
          s, i, e, src->targets ? src->targets + i * s->target_width : NULL,
          &name_at);
      if (e->name_len &&
          (name_at > span->size || e->name_len > span->size - name_at)) {
        st = sl_err_set(err, SL_EFORMAT,
                        "%s: sample %" PRIu64 "'s name runs past its shard "
                        "%s: " REINDEX,
                        file, i, u->v[k], path);
        break;
      }
      if (src->name_off)
        src->name_off[i] = span->base + name_at;
      /* An offset past its shard is left past the whole space, for the
       * entry check to refuse. */
      e->offset = e->offset <= span->size ? span->base + e->offset : UINT64_MAX;
      st = sl_source_check_entry(src, i, u->v[k], err);
    }
  }
  if (st == SL_OK && s->njoins)
    st = take_joins(src, s, file, path, err);
  return st;
}

/* Builds the index by walking each shard, fetched into the cache one at
 * a time, and encodes the sidecar into *buf. */
static sl_status build(sl_source *src, const char *path, const url_list *u,
                       const sl_head *heads, const sl_shard_walker *w,
                       const char *opts, uint8_t **buf, size_t *len,
                       sl_err *err) {
  sl_status st = add_files(src, path, u, heads, err);
  void *ctx = NULL;
  if (st == SL_OK)
    st = w->begin(src, &ctx, err);
  if (st != SL_OK)
    return st;
  for (size_t k = 0; st == SL_OK && k < u->n; k++) {
    /* The cache names an object by its checksum: one pass to learn it,
     * then the shard fetched into the cache and walked from there. */
    st = sl_remote_checksum(src->remote, u->v[k], heads[k].size,
                            sl_crc32c_update, &src->file_crc[k], err);
    int fd = -1;
    if (st == SL_OK)
      st = sl_remote_object(src->remote, u->v[k], heads[k].size,
                            src->file_crc[k], &fd, err);
    if (st == SL_OK) {
      src->spans[k].fd = fd;
      st = w->shard(ctx, k, err);
      src->spans[k].fd = -1;
      close(fd);
    }
  }
  st = w->end(ctx, st, path, err);
  if (st != SL_OK)
    return st;
  sl_sidecar_shard *sh = calloc(u->n, sizeof *sh);
  /* 16 bytes a multi-part RecordIO record, and the shards' URLs as shown
   * (never longer than given: u->bytes in all), while encoding */
  sl_sidecar_join *joins =
      sh ? malloc(src->njoins ? (size_t)src->njoins * sizeof *joins : 1) : NULL;
  char *shown = joins ? malloc((size_t)u->bytes + 1) : NULL;
  if (!shown) {
    free(joins);
    free(sh);
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  }
  for (uint64_t j = 0; j < src->njoins; j++)
    joins[j] = (sl_sidecar_join){src->joins[j].sample, src->joins[j].skip,
                                 src->joins[j].bytes};
  /* Offsets in each shard, for the sidecar; back to the set's after. */
  size_t at = 0;
  for (size_t k = 0; k < u->n; k++) {
    uint64_t end = k + 1 < u->n ? src->file_first[k + 1] : src->count;
    for (uint64_t i = src->file_first[k]; i < end; i++) {
      src->index[i].offset -= src->spans[k].base;
      if (src->name_off && src->index[i].name_len)
        src->name_off[i] -= src->spans[k].base;
    }
    const char *name = sl_url_shown(u->v[k], shown + at, strlen(u->v[k]) + 1);
    at += strlen(name) + 1;
    sh[k] = (sl_sidecar_shard){.name = name,
                               .etag = heads[k].etag,
                               .size = heads[k].size,
                               .first = src->file_first[k],
                               .crc = src->file_crc[k]};
  }
  sl_sidecar s = {.format = (uint32_t)src->fmt,
                  .target_width = src->target_width,
                  .opts = opts,
                  .nshards = u->n,
                  .count = src->count,
                  .skipped = src->skipped,
                  .shards = sh,
                  .index = src->index,
                  .targets = src->targets,
                  .flags = src->name_off ? SL_SIDECAR_NAMES : 0,
                  .name_off = src->name_off,
                  .njoins = src->njoins,
                  .joins = joins};
  st = sl_sidecar_encode(&s, buf, len, err);
  for (size_t k = 0; k < u->n; k++) {
    uint64_t end = k + 1 < u->n ? src->file_first[k + 1] : src->count;
    for (uint64_t i = src->file_first[k]; i < end; i++) {
      src->index[i].offset += src->spans[k].base;
      if (src->name_off && src->index[i].name_len)
        src->name_off[i] += src->spans[k].base;
    }
  }
  free(shown);
  free(joins);
  free(sh);
  return st;
}

sl_status sl_source_read_beside(sl_source *src, const char *url, uint64_t max,
                                uint8_t **buf, size_t *len, sl_err *err) {
  return sl_remote_read_if_there(src->remote, url, max, buf, len, err);
}

uint64_t sl_source_sidecar_bytes(const sl_source *src) {
  return src->sidecar_bytes;
}

sl_status sl_source_index_remote_shards(sl_source *src, const char *path,
                                        const sl_shard_walker *w,
                                        const char *opts, bool rebuild,
                                        sl_err *err) {
  url_list u = {0};
  sl_head *heads = NULL;
  uint8_t *buf = NULL;
  size_t len = 0;
  int dfd = -1;
  sl_status st =
      sl_remote_open(&src->remote, &src->remote_opts, sl_crc32c_update, err);
  /* One shard of TFDS's naming stands for its set (-00000-of-01024: all
   * 1024), as a local one does; a prefix alone would need a listing. */
  bool tfds = false;
  if (st == SL_OK && !sl_shard_is_list_name(path))
    st = sl_shard_tfds_named(path, add_url, &u, &tfds, err);
  if (st == SL_OK && !tfds)
    st = sl_shard_is_list_name(path)
             ? read_list(src, path, &u, err)
             : sl_shard_expand(path, false, add_url, &u, err);
  if (st == SL_OK && !(heads = calloc(u.n, sizeof *heads)))
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  if (st == SL_OK)
    st = sl_remote_heads(src->remote, (const char *const *)(void *)u.v, u.n,
                         heads, err);
  char name[96], file[4200];
  const char *dir = src->remote ? sl_remote_cache_dir(src->remote) : "";
  if (st == SL_OK) {
    sidecar_name(src, &u, opts, name, sizeof name);
    snprintf(file, sizeof file, "%s/%s", dir, name);
    dfd = open_dir(src, err);
    if (dfd < 0)
      st = SL_EIO;
  }
  /* Verify mode checks the shards themselves: walked, whatever the
   * cache holds. */
  if (st == SL_OK && !rebuild && !src->on_bad)
    st = load(dfd, dir, name, &buf, &len, err);
  if (st == SL_OK && buf) {
    sl_sidecar s;
    st = sl_sidecar_parse(&s, buf, len, file, err);
    if (st == SL_OK)
      st = from_sidecar(src, path, &u, heads, &s, opts, file, err);
    sl_sidecar_free(&s);
  } else if (st == SL_OK) {
    st = build(src, path, &u, heads, w, opts, &buf, &len, err);
    /* Verify mode keeps bad samples in the index, marked unusable: not an
     * index for later opens. */
    if (st == SL_OK && !src->on_bad)
      st = store(dfd, dir, name, buf, len, err);
  }
  if (st == SL_OK)
    src->sidecar_bytes = len;
  if (dfd >= 0)
    close(dfd);
  free(buf);
  free(heads);
  urls_free(&u);
  return st;
}
