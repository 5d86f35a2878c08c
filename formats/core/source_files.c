/* A source's files as one offset space: the table the indexers fill and
 * the readers (sl_source_read here, io/ through the loader) search. */
#include "formats/core/source_impl.h"

#include "formats/files/shard_paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static sl_status grow(sl_source *src, size_t path_len, sl_err *err) {
  if (src->nfiles == src->files_cap) {
    size_t cap = src->files_cap ? src->files_cap * 2 : 16;
    sl_file_span *s = realloc(src->spans, cap * sizeof *s);
    if (s)
      src->spans = s;
    uint64_t *f = realloc(src->file_first, cap * sizeof *f);
    if (f)
      src->file_first = f;
    uint64_t *n = realloc(src->file_name, cap * sizeof *n);
    if (n)
      src->file_name = n;
    if (!s || !f || !n)
      return sl_err_set(err, SL_ENOMEM, "%s: the table of %zu files", src->path,
                        cap);
    src->files_cap = cap;
  }
  if (src->names_cap - src->names_len < path_len + 1) {
    size_t cap = src->names_cap ? src->names_cap : 4096;
    while (cap - src->names_len < path_len + 1)
      cap *= 2;
    char *b = realloc(src->names, cap);
    if (!b)
      return sl_err_set(err, SL_ENOMEM, "%s: %zu bytes of file names",
                        src->path, cap);
    src->names = b;
    src->names_cap = cap;
  }
  return SL_OK;
}

sl_status sl_source_add_file(sl_source *src, const char *path, int fd,
                             uint64_t size, sl_err *err) {
  size_t len = strlen(path);
  sl_status st = grow(src, len, err);
  if (st != SL_OK)
    return st;
  uint64_t base = 0;
  if (src->nfiles) {
    const sl_file_span *l = &src->spans[src->nfiles - 1];
    uint64_t end = l->base + l->size;
    base = (end + SL_FILE_SPAN_ALIGN - 1) / SL_FILE_SPAN_ALIGN *
           SL_FILE_SPAN_ALIGN;
    if (base < end)
      return sl_err_set(err, SL_ETOOBIG, "%s: files larger than 2^64 bytes",
                        src->path);
  }
  size_t k = src->nfiles++;
  src->spans[k] = (sl_file_span){.fd = fd, .base = base, .size = size};
  src->file_first[k] = src->count;
  src->file_name[k] = src->names_len;
  memcpy(src->names + src->names_len, path, len + 1);
  src->names_len += len + 1;
  return SL_OK;
}

sl_status sl_source_drop_left_out(sl_source *src, sl_err *err) {
  uint32_t k = src->target_width;
  size_t w = 0;
  for (size_t i = 0; i < src->nfiles; i++) {
    if (src->index[i].codec == 0) /* left out: its entry was zeroed */
      continue;
    src->spans[w] = src->spans[i];
    src->file_name[w] = src->file_name[i];
    src->file_first[w] = w;
    src->index[w] = src->index[i];
    if (src->targets && k)
      memmove(src->targets + w * k, src->targets + i * k,
              k * sizeof *src->targets);
    w++;
  }
  if (w == 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: none of its %zu image files can be read (%s)",
                      src->path, src->nfiles, src->left_out_names);
  src->nfiles = w;
  src->count = w;
  sl_source_files_done(src);
  return SL_OK;
}

const char *sl_source_file_path(const sl_source *src, size_t k) {
  return src->names + src->file_name[k];
}

/* errno for a remote object that could not be had: what the loader's
 * message says after the URL. */
static int remote_errno(sl_status st) {
  return st == SL_ENOMEM    ? ENOMEM
         : st == SL_ETOOBIG ? EFBIG
         : st == SL_EFORMAT ? EBADMSG
                            : EIO;
}

static int open_file(const void *ctx, size_t k) {
  const sl_source *src = ctx;
  const char *p = sl_source_file_path(src, k);
  if (src->remote) {
    int fd;
    sl_err e = {0};
    sl_status st = sl_remote_object(src->remote, p, src->spans[k].size,
                                    src->file_crc[k], &fd, &e);
    if (st != SL_OK) {
      errno = remote_errno(st);
      return -1;
    }
    return fd;
  }
  return src->dirfd >= 0 ? openat(src->dirfd, p, O_RDONLY | O_CLOEXEC)
                         : open(p, O_RDONLY | O_CLOEXEC);
}

static void name_file(const void *ctx, size_t k, char *buf, size_t cap) {
  const sl_source *src = ctx;
  char why[SL_ERRMSG_MAX];
  if (src->remote && sl_remote_failure(src->remote, sl_source_file_path(src, k),
                                       why, sizeof why))
    snprintf(buf, cap, "%s (%s)", sl_source_file_path(src, k), why);
  else if (src->dirfd >= 0)
    snprintf(buf, cap, "%s/%s", src->path, sl_source_file_path(src, k));
  else
    snprintf(buf, cap, "%s", sl_source_file_path(src, k));
}

void sl_source_files_done(sl_source *src) {
  bool lazy = false;
  for (size_t k = 0; k < src->nfiles; k++)
    lazy |= src->spans[k].fd < 0;
  const sl_file_span *l = src->nfiles ? &src->spans[src->nfiles - 1] : NULL;
  src->files = (sl_file_set){.f = src->spans,
                             .n = src->nfiles,
                             .end = l ? l->base + l->size : 0,
                             .lazy = lazy,
                             .open = open_file,
                             .name = name_file,
                             .ctx = src};
  src->file_size = src->files.end;
}

const sl_file_set *sl_source_files(const sl_source *src) {
  return src->nfiles ? &src->files : NULL;
}

uint64_t sl_source_file_count(const sl_source *src) {
  return src->nfiles ? src->nfiles : 1;
}

uint64_t sl_source_bytes(const sl_source *src) {
  if (!src->nfiles)
    return src->file_size;
  uint64_t sum = 0;
  for (size_t k = 0; k < src->nfiles; k++)
    sum += src->spans[k].size;
  return sum;
}

uint64_t sl_source_file_first(const sl_source *src, uint64_t k) {
  return src->nfiles && k < src->nfiles ? src->file_first[k] : 0;
}

sl_cache *sl_source_cache(const sl_source *src) {
  return src->remote ? sl_remote_cache(src->remote) : NULL;
}

const sl_fetch_conf *sl_source_fetch_conf(const sl_source *src) {
  return src->remote ? sl_remote_conf(src->remote) : NULL;
}

bool sl_source_remote_file(const sl_source *src, uint64_t k, const char **url,
                           uint64_t *size, uint32_t *crc) {
  if (!src->remote || k >= src->nfiles)
    return false;
  *url = sl_source_file_path(src, k);
  *size = src->spans[k].size;
  *crc = src->file_crc[k];
  return true;
}

sl_status sl_source_add_shards(sl_source *src, const sl_shard_list *l,
                               const char *path, sl_err *err) {
  sl_status st = sl_file_set_reserve_fds(l->n, path, err);
  const char *p = l->blob;
  for (size_t k = 0; st == SL_OK && k < l->n; k++, p += strlen(p) + 1) {
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0) {
      st = sl_err_errno(err, SL_EIO, errno, "%s: shard %zu of %zu (%s)", p,
                        k + 1, l->n, path);
      break;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
      st = sl_err_set(err, SL_EIO, "%s: not a regular file (shard of %s)", p,
                      path);
      close(fd);
      break;
    }
    st = sl_source_add_file(src, p, fd, (uint64_t)sb.st_size, err);
    if (st != SL_OK)
      close(fd);
  }
  if (st == SL_OK)
    sl_source_files_done(src);
  return st;
}
