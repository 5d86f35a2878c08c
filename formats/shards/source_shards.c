/* A sharded dataset (formats/shards/shard_index.h): a folder of sluice LMDB and
 * HDF5 shards read as one through its index file. Opening reads the index
 * and opens every shard, checking each against it (there, the size its
 * index lists, the same first bytes), so that a deleted, truncated or
 * replaced shard is named at open and not mid-epoch; no shard's contents
 * are read. The samples are the shards' in index order, each entry's offset
 * moved to its shard's base in the source's offset space (source_files.c).
 * Verify mode also checks every shard's whole-file checksum.
 *
 * Memory: the index file while open (freed after), the source's index (24
 * bytes a sample, 4 × targets, 24 a box) and one descriptor a shard. */
#include "formats/core/source_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/endian.h"
#include "formats/core/boxes.h"
#include "formats/core/crc32c.h"
#include "formats/core/format.h"
#include "formats/files/shard_paths.h"
#include "formats/shards/shard_index.h"

#define REINDEX "re-run `sluice index %s`"

/* path is the index file, or a folder holding one: the index's path and
 * its folder into idx and dir. */
static bool index_paths(const char *path, char *idx, char *dir, size_t cap) {
  struct stat sb;
  if (stat(path, &sb) != 0)
    return false;
  if (S_ISDIR(sb.st_mode)) {
    if (snprintf(idx, cap, "%s/" SL_SHARD_INDEX_NAME, path) >= (int)cap ||
        snprintf(dir, cap, "%s", path) >= (int)cap)
      return false;
    return stat(idx, &sb) == 0;
  }
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  if (strcmp(base, SL_SHARD_INDEX_NAME) != 0 ||
      snprintf(idx, cap, "%s", path) >= (int)cap)
    return false;
  if (!slash)
    snprintf(dir, cap, ".");
  else if (snprintf(dir, cap, "%.*s", (int)(slash - path),
                    slash == path ? "/" : path) >= (int)cap)
    return false;
  return true;
}

static sl_status shards_claim(const char *path, sl_format_kind *kind,
                              bool *mine, sl_err *err) {
  char idx[PATH_MAX], dir[PATH_MAX];
  if (sl_url_kind_of(path) != SL_URL_NONE) {
    /* Of the formats, sharded sets, WebDataset shards (their row claims
     * .tar names and lists), TFRecord and RecordIO shards (.tfrecord in
     * the name, .rec at its end) are read from URLs. */
    size_t n = strlen(path);
    bool tar = n > 4 && !strcmp(path + n - 4, ".tar");
    bool list = sl_shard_is_list_name(path);
    bool tfrecord =
        strstr(path, ".tfrecord") != NULL || sl_shard_name_ends(path, ".rec");
    if (*kind == SL_FORMAT_WEBDATASET || *kind == SL_FORMAT_TFRECORD ||
        *kind == SL_FORMAT_RECORDIO ||
        (*kind == SL_FORMAT_AUTO && (tar || list || tfrecord))) {
      *mine = false;
      return SL_OK;
    }
    if (*kind != SL_FORMAT_AUTO && *kind != SL_FORMAT_SHARDS)
      return sl_err_set(err, SL_ECONFIG,
                        "%s: datasets at a URL are sluice's sharded sets, "
                        "WebDataset, TFRecord and RecordIO shards "
                        "(dataset.format = shards, webdataset, tfrecord, "
                        "recordio or auto) for now; other formats are read "
                        "from local files",
                        path);
    *mine = true;
    return SL_OK;
  }
  *mine = index_paths(path, idx, dir, sizeof idx);
  if (!*mine && *kind == SL_FORMAT_SHARDS)
    return sl_err_set(err, SL_EIO,
                      "%s: no " SL_SHARD_INDEX_NAME
                      " (a sharded dataset is a folder of shards and the "
                      "index `sluice index FOLDER` writes)",
                      path);
  return SL_OK;
}

/* Opens shard k, checking it against the index. */
static sl_status open_shard(sl_source *src, const sl_shard_index *ix,
                            uint64_t k, const char *dir, sl_err *err) {
  const sl_shard_rec *s = &ix->shards[k];
  char p[PATH_MAX];
  if (snprintf(p, sizeof p, "%s/%s", dir, s->name) >= (int)sizeof p)
    return sl_err_set(err, SL_EINVAL, "%s/%s: path too long", dir, s->name);
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    return sl_err_set(err, SL_EIO,
                      "%s: missing (shard %" PRIu64 " of %" PRIu64
                      " in its index: deleted or renamed since it was "
                      "indexed; " REINDEX ")",
                      p, k + 1, ix->nshards, dir);
  if (fd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s", p);
  struct stat sb;
  sl_status st = SL_OK;
  uint32_t head = 0;
  if (fstat(fd, &sb) != 0)
    st = sl_err_errno(err, SL_EIO, errno, "%s: stat", p);
  else if (!S_ISREG(sb.st_mode))
    st = sl_err_set(err, SL_EIO, "%s: not a regular file", p);
  else if ((uint64_t)sb.st_size != s->size)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: %" PRIu64 " bytes, its index says %" PRIu64
                    " (%s since it was indexed; " REINDEX " if it was "
                    "rewritten on purpose)",
                    p, (uint64_t)sb.st_size, s->size,
                    (uint64_t)sb.st_size < s->size ? "truncated" : "changed",
                    dir);
  else if ((st = sl_shard_crc(fd, s->size, src->on_bad != NULL, p, &head,
                              err)) == SL_OK &&
           head != (src->on_bad ? s->file_crc : s->head_crc))
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: its %s checksum differs from its index's (replaced "
                    "or damaged since it was indexed; " REINDEX
                    " if it was rewritten on purpose)",
                    p, src->on_bad ? "whole-file" : "first bytes'", dir);
  if (st == SL_OK)
    st = sl_source_add_file(src, p, fd, s->size, err);
  if (st != SL_OK)
    close(fd);
  return st;
}

/* The index's samples, targets and boxes into the source, each entry moved
 * to its shard's base and checked. */
static sl_status fill(sl_source *src, const sl_shard_index *ix, sl_err *err) {
  sl_status st = sl_source_alloc_index(src, ix->count, err);
  if (st == SL_OK && ix->box_total)
    st = sl_source_alloc_boxes(src, ix->box_total, err);
  uint64_t i = 0, box = 0;
  for (uint64_t k = 0; st == SL_OK && k < ix->nshards; k++) {
    const sl_file_span *span = &src->spans[k];
    src->file_first[k] = i;
    for (uint64_t j = 0; st == SL_OK && j < ix->shards[k].samples; j++, i++) {
      sl_sample_info *e = &src->index[i];
      uint64_t off;
      sl_shard_index_sample(ix, i, &off, &e->length, &e->label, &e->height,
                            &e->width, &e->codec, &e->channels, &e->name_len);
      /* An offset past its shard is left past the whole space, for the
       * entry check to refuse. */
      e->offset = off <= span->size ? span->base + off : UINT64_MAX;
      for (uint32_t q = 0; q < src->target_width; q++) {
        uint32_t u = sl_get_le32(ix->targets + (i * src->target_width + q) * 4);
        memcpy(&src->targets[i * src->target_width + q], &u, 4);
      }
      if (ix->box_total) {
        uint32_t nb = sl_get_le16(ix->box_counts + i * 2);
        if (nb > ix->box_total - box) {
          st = sl_err_set(err, SL_EFORMAT,
                          "%s: sample %" PRIu64 "'s boxes run past the "
                          "index's %" PRIu64,
                          src->path, i, ix->box_total);
          break;
        }
        src->box_off[i] = box;
        for (uint32_t b = 0; b < nb; b++, box++)
          sl_box_decode(ix->boxes + box * SL_BOX_BYTES, &src->boxes[box]);
        if (nb > src->max_boxes)
          src->max_boxes = nb;
      }
      /* The shard names the sample in messages (no formatting per sample:
       * a million of them at open). */
      st = sl_source_check_entry(src, i, sl_source_file_path(src, k), err);
    }
  }
  if (st == SL_OK && ix->box_total) {
    if (box != ix->box_total)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: its samples hold %" PRIu64
                        " boxes, it says %" PRIu64,
                        src->path, box, ix->box_total);
    src->box_off[ix->count] = box;
  }
  return st;
}

/* What the index says of the whole set, into the source. */
static sl_status set_from_index(sl_source *src, const sl_shard_index *ix,
                                sl_err *err) {
  src->entries = SL_ENTRIES_SLUICE;
  src->version = SL_SHARD_INDEX_LAYOUT;
  src->target_width = ix->target_width;
  src->levels_layout = (ix->flags & SL_SHARD_FLAG_LEVELS) != 0;
  src->nlevels = ix->nlevels;
  memcpy(src->level_images, ix->level_images, sizeof ix->level_images);
  memcpy(src->level_bytes, ix->level_bytes, sizeof ix->level_bytes);
  sl_status st = sl_source_set_classes(src, ix->class_blob, ix->class_bytes,
                                       ix->classes, err);
  if (st == SL_OK)
    st = sl_source_set_writer(src, ix->writer, strlen(ix->writer), err);
  return st;
}

/* A set at a URL: the index fetched (not cached: it says which shards are
 * current), each shard a lazy file fetched into the cache when first read
 * and checked against the index's size and crc32c then. */
static sl_status index_remote(sl_source *src, const char *path, sl_err *err) {
  char idx[SL_URL_MAX], url[SL_URL_MAX];
  size_t n = strlen(path);
  const char *tail = "/" SL_SHARD_INDEX_NAME;
  bool named = n >= strlen(tail) && !strcmp(path + n - strlen(tail), tail);
  if (snprintf(idx, sizeof idx, "%s%s%s", path,
               named || (n && path[n - 1] == '/') ? "" : "/",
               named ? "" : SL_SHARD_INDEX_NAME) >= (int)sizeof idx)
    return sl_err_set(err, SL_EINVAL, "%.200s: URL too long", path);
  sl_status st =
      sl_remote_open(&src->remote, &src->remote_opts, sl_crc32c_update, err);
  uint8_t *buf = NULL;
  size_t len = 0;
  if (st == SL_OK) /* 24 bytes a sample: 4 GiB is 170M samples */
    st = sl_remote_read_all(src->remote, idx, 4ull << 30, &buf, &len, err);
  sl_shard_index ix;
  if (st == SL_OK)
    st = sl_shard_index_parse(&ix, buf, len, idx, err);
  if (st != SL_OK)
    return st;
  st = set_from_index(src, &ix, err);
  if (st == SL_OK &&
      !(src->file_crc = malloc((ix.nshards ? ix.nshards : 1) * 4)))
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  uint64_t largest = 0;
  const char *big = "";
  for (uint64_t k = 0; st == SL_OK && k < ix.nshards; k++) {
    st = sl_url_sibling(idx, ix.shards[k].name, url, sizeof url, err);
    if (st == SL_OK)
      st = sl_source_add_file(src, url, -1, ix.shards[k].size, err);
    src->file_crc[k] = ix.shards[k].file_crc;
    if (ix.shards[k].size >= largest) {
      largest = ix.shards[k].size;
      big = ix.shards[k].name;
    }
  }
  uint64_t bound = sl_cache_bound(sl_remote_cache(src->remote));
  if (st == SL_OK && largest > bound)
    st =
        sl_err_set(err, SL_ECONFIG,
                   "%s: shard %s is %" PRIu64 " bytes, more than io.cache_bytes"
                   " = %" PRIu64 ": raise io.cache_bytes above the largest "
                   "shard",
                   path, big, largest, bound);
  if (st == SL_OK) {
    sl_source_files_done(src);
    st = fill(src, &ix, err);
  }
  sl_shard_index_free(&ix);
  return st;
}

static sl_status shards_index(sl_source *src, const char *path, sl_err *err) {
  if (sl_url_kind_of(path) != SL_URL_NONE)
    return index_remote(src, path, err);
  char idx[PATH_MAX], dir[PATH_MAX];
  if (!index_paths(path, idx, dir, sizeof idx))
    return shards_claim(path, &(sl_format_kind){SL_FORMAT_SHARDS},
                        &(bool){false}, err);
  sl_shard_index ix;
  sl_status st = sl_shard_index_load(&ix, idx, err);
  if (st != SL_OK)
    return st;
  st = set_from_index(src, &ix, err);
  if (st == SL_OK)
    st = sl_file_set_reserve_fds(ix.nshards, path, err);
  for (uint64_t k = 0; st == SL_OK && k < ix.nshards; k++)
    st = open_shard(src, &ix, k, dir, err);
  if (st == SL_OK) {
    sl_source_files_done(src);
    st = fill(src, &ix, err);
  }
  sl_shard_index_free(&ix);
  return st;
}

const sl_format sl_format_shards = {
    .kind = SL_FORMAT_SHARDS,
    .name = "shards",
    .title = "sharded",
    .what = "a sharded dataset",
    .options = 0,
    .entries =
        SL_ENTRIES_BIT(SL_ENTRIES_AUTO) | SL_ENTRIES_BIT(SL_ENTRIES_SLUICE),
    .entries_name = "sluice",
    .claim = shards_claim,
    .index_many = shards_index,
};
