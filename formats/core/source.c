/* sl_source: format detection, the shared index, and reading payloads. */
#include "formats/core/source_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/mem.h"
#include "common/pread_full.h"
#include "formats/core/format.h"
#include "formats/core/image_sniff.h"

_Static_assert(sizeof(sl_sample_info) == SL_SAMPLE_INFO_BYTES,
               "index entries are 24 bytes");

static sl_status open_common(sl_source **out, const char *path,
                             const sl_source_opts *opts, sl_source_mode mode,
                             sl_source_bad_fn on_bad, void *user, sl_err *err);
static sl_status detect(sl_source *src, const char *path, const sl_format **row,
                        sl_err *err);
static sl_status open_many(sl_source **out, sl_source *src, const char *path,
                           const sl_format *row, sl_err *err);

sl_status sl_source_open(sl_source **out, const char *path, sl_format_kind fmt,
                         sl_source_mode mode, sl_err *err) {
  sl_source_opts o = {.fmt = fmt};
  return open_common(out, path, &o, mode, NULL, NULL, err);
}

sl_status sl_source_open_opts(sl_source **out, const char *path,
                              const sl_source_opts *opts, sl_source_mode mode,
                              sl_err *err) {
  sl_source_opts o = {0};
  return open_common(out, path, opts ? opts : &o, mode, NULL, NULL, err);
}

sl_status sl_source_open_verify_opts(sl_source **out, const char *path,
                                     const sl_source_opts *opts,
                                     sl_source_mode mode,
                                     sl_source_bad_fn on_bad, void *user,
                                     sl_err *err) {
  sl_source_opts o = {0};
  return open_common(out, path, opts ? opts : &o, mode, on_bad, user, err);
}

void sl_source_close(sl_source *src) {
  if (!src)
    return;
  if (src->map)
    munmap(src->map, (size_t)src->file_size);
  if (src->fd >= 0)
    close(src->fd);
  for (size_t k = 0; k < src->nfiles; k++)
    if (src->spans[k].fd >= 0)
      close(src->spans[k].fd);
  if (src->dirfd >= 0)
    close(src->dirfd);
  sl_remote_close(src->remote);
  free(src->file_crc);
  free(src->spans);
  free(src->file_first);
  free(src->file_name);
  free(src->names);
  free(src->targets_ext);
  free(src->index);
  free(src->targets);
  free(src->boxes);
  free(src->box_off);
  free(src->class_blob);
  free(src->class_off);
  free(src->writer);
  free(src->label_file);
  free(src->lmdb_db);
  free(src->images);
  free(src->labels);
  free(src->targets_name);
  free(src->lengths_name);
  free(src->labels_path);
  free(src->desc);
  if (src->h5f) {
    free(src->h5f->mask);
    free(src->h5f->tile);
  }
  free(src->h5f);
  free(src->name_off);
  free(src->image_key);
  free(src->label_key);
  free(src->joins);
  free(src->path);
  free(src);
}

uint64_t sl_source_count(const sl_source *src) {
  return src->count;
}

const sl_sample_info *sl_source_info(const sl_source *src, uint64_t i) {
  return &src->index[i];
}

uint32_t sl_source_max_length(const sl_source *src) {
  return src->max_length;
}

uint32_t sl_source_class_count(const sl_source *src) {
  return src->nclasses;
}

const char *sl_source_class_name(const sl_source *src, uint32_t c) {
  if (c >= src->nclasses)
    return NULL;
  return src->class_blob + src->class_off[c];
}

uint32_t sl_source_target_width(const sl_source *src) {
  return src->target_width;
}

const float *sl_source_targets(const sl_source *src, uint64_t i) {
  return src->targets ? src->targets + i * src->target_width : NULL;
}

const sl_box *sl_source_boxes(const sl_source *src, uint64_t i, uint32_t *n) {
  *n = 0;
  if (!src->box_off || i >= src->count || src->index[i].codec == 0)
    return NULL;
  uint64_t a = src->box_off[i], b = src->box_off[i + 1];
  *n = (uint32_t)(b - a);
  return b > a ? src->boxes + a : NULL;
}

uint32_t sl_source_max_boxes(const sl_source *src) {
  return src->max_boxes;
}

uint64_t sl_source_box_total(const sl_source *src) {
  return src->box_total;
}

static sl_status out_of_range(const sl_source *src, uint64_t i, sl_err *err) {
  return sl_err_set(err, SL_EINVAL,
                    "%s: sample %" PRIu64 " out of range (%" PRIu64 " samples)",
                    src->path, i, src->count);
}

sl_status sl_source_name(const sl_source *src, uint64_t i, char *buf,
                         size_t cap, sl_err *err) {
  if (i >= src->count)
    return out_of_range(src, i, err);
  const sl_sample_info *e = &src->index[i];
  if (cap < (size_t)e->name_len + 1)
    return sl_err_set(err, SL_EINVAL,
                      "%s: sample %" PRIu64 ": name buffer of %zu bytes < %u",
                      src->path, i, cap, e->name_len + 1u);
  if (src->names_are_files) { /* a folder: the file's path */
    const char *p = sl_source_file_path(src, (size_t)i);
    size_t l = strlen(p);
    if (cap < l + 1)
      return sl_err_set(err, SL_EINVAL,
                        "%s: sample %" PRIu64 ": name buffer of %zu bytes < "
                        "%zu",
                        src->path, i, cap, l + 1);
    memcpy(buf, p, l + 1);
    return SL_OK;
  }
  size_t done = 0;
  uint64_t at = src->name_off ? src->name_off[i] : e->offset - e->name_len;
  int rc = e->name_len == 0 ? 0
           : src->nfiles ? sl_file_set_pread(&src->files, buf, e->name_len, at,
                                             &done, NULL)
                         : sl_pread_full(src->fd, buf, e->name_len, at, &done);
  if (rc < 0)
    return sl_err_errno(err, SL_EIO, errno,
                        "%s: sample %" PRIu64 ": name read at offset %" PRIu64,
                        src->path, i, at + done);
  if (rc > 0)
    return sl_err_set(err, SL_EIO,
                      "%s: sample %" PRIu64 ": file ends at %" PRIu64
                      " (truncated after open?)",
                      src->path, i, at + done);
  buf[e->name_len] = '\0';
  return SL_OK;
}

const char *sl_source_format_name(const sl_source *src) {
  return src->format->name;
}

uint64_t sl_source_input_bytes(const sl_source *src, uint64_t i) {
  const sl_sample_info *e = &src->index[i];
  if (src->h5f)
    return (uint64_t)e->width * e->height * e->channels;
  const sl_recio_join *j = src->njoins ? sl_recio_find_join(src, i) : NULL;
  return j ? j->bytes : e->length;
}

static const char *entries_name(sl_entry_kind e) {
  switch (e) {
  case SL_ENTRIES_CAFFE:
    return "caffe";
  case SL_ENTRIES_IMAGES:
    return "images";
  case SL_ENTRIES_ARRAY:
    return "array";
  case SL_ENTRIES_PICKLE:
    return "pickle";
  case SL_ENTRIES_MSGPACK:
    return "msgpack";
  default:
    return "sluice";
  }
}

const char *sl_source_entries_name(const sl_source *src) {
  if (src->format && src->format->entries_name)
    return src->format->entries_name;
  return entries_name(src->entries);
}

uint64_t sl_source_skipped(const sl_source *src) {
  return src->skipped;
}

uint64_t sl_source_left_out(const sl_source *src, const char **names) {
  if (names)
    *names = src->left_out_names;
  return src->left_out;
}

const char *sl_source_key_order(const sl_source *src) {
  return src->key_order;
}

uint64_t sl_source_annotated(const sl_source *src) {
  return src->annotated;
}

uint32_t sl_source_layout_version(const sl_source *src) {
  return src->version;
}

const char *sl_source_description(const sl_source *src) {
  return src->desc ? src->desc : "";
}

const char *sl_source_writer_settings(const sl_source *src) {
  return src->writer ? src->writer : "";
}

int sl_source_fd(const sl_source *src) {
  return src->nfiles ? -1 : src->fd;
}

uint64_t sl_source_file_size(const sl_source *src) {
  return src->file_size;
}

sl_status sl_source_read(const sl_source *src, uint64_t i, void *buf,
                         size_t cap, const uint8_t **data, size_t *len,
                         sl_err *err) {
  if (i >= src->count)
    return out_of_range(src, i, err);
  const sl_sample_info *e = &src->index[i];
  if (e->codec == 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: sample %" PRIu64 " is damaged (see `sluice verify`)",
                      src->path, i);
  if (src->keep_map) {
    *data = src->map + e->offset;
    *len = e->length;
    return SL_OK;
  }
  if (cap < e->length)
    return sl_err_set(err, SL_EINVAL,
                      "%s: sample %" PRIu64
                      ": buffer of %zu bytes < payload of %" PRIu32,
                      src->path, i, cap, e->length);
  size_t done;
  long k = -1;
  int rc =
      src->nfiles
          ? sl_file_set_pread(&src->files, buf, e->length, e->offset, &done, &k)
          : sl_pread_full(src->fd, buf, e->length, e->offset, &done);
  if (k >= 0) { /* name the file of a many-file source, and the offset */
    char name[600];
    sl_file_set_name(&src->files, (size_t)k, name, sizeof name);
    if (rc < 0)
      return sl_err_errno(err, SL_EIO, errno,
                          "%s: sample %" PRIu64 ": read at offset %" PRIu64,
                          name, i, e->offset - src->spans[k].base + done);
    if (rc > 0)
      return sl_err_set(err, SL_EIO,
                        "%s: sample %" PRIu64 ": file ends at %" PRIu64
                        " (truncated after open?)",
                        name, i, e->offset - src->spans[k].base + done);
  }
  if (rc < 0)
    return sl_err_errno(err, SL_EIO, errno,
                        "%s: sample %" PRIu64 ": read at offset %" PRIu64,
                        src->path, i, e->offset + done);
  if (rc > 0)
    return sl_err_set(err, SL_EIO,
                      "%s: sample %" PRIu64 ": file ends at %" PRIu64
                      " (truncated after open?)",
                      src->path, i, e->offset + done);
  *data = buf;
  *len = e->length;
  return SL_OK;
}

uint32_t sl_source_levels(const sl_source *src, uint64_t images[],
                          uint64_t bytes[]) {
  for (uint32_t k = 0; k < src->nlevels; k++) {
    images[k] = src->level_images[k];
    bytes[k] = src->level_bytes[k];
  }
  return src->nlevels;
}

/* ---- which format -------------------------------------------------------- */

/* The rows a message lists: the one-file formats (by title, or by what
 * sluice reads of each), or those taking option bit `bit` or entry layout
 * bit `bit`. */
typedef enum row_pick { BY_FILE, BY_READS, BY_OPTION, BY_ENTRIES } row_pick;

static bool picked(const sl_format *f, row_pick by, unsigned bit) {
  switch (by) {
  case BY_FILE:
  case BY_READS:
    return f->sniff != NULL;
  case BY_OPTION:
    return (f->options & bit) != 0;
  default:
    return (f->entries & bit) != 0;
  }
}

/* "A, B or C" (BY_FILE), "A, B and C" (the others) into buf. */
static const char *row_list(char *buf, size_t cap, row_pick by, unsigned bit) {
  size_t total = 0, at = 0, len = 0;
  for (size_t k = 0; k < sl_format_table_len; k++)
    total += picked(sl_format_table[k], by, bit);
  buf[0] = '\0';
  for (size_t k = 0; k < sl_format_table_len; k++) {
    const sl_format *f = sl_format_table[k];
    if (!picked(f, by, bit))
      continue;
    const char *sep = at == 0          ? ""
                      : at + 1 < total ? ", "
                      : by == BY_FILE  ? " or "
                                       : " and ";
    int w = snprintf(buf + len, cap - len, "%s%s", sep,
                     by == BY_READS ? f->reads : f->title);
    at++;
    if (w < 0 || (size_t)w >= cap - len)
      break; /* cut: the list is for a message */
    len += (size_t)w;
  }
  return buf;
}

/* The format of many files that claims path: row's (dataset.format; NULL
 * for auto) or, with auto, the first row's in table order to claim it.
 * *many NULL when none does: a one-file source. */
static sl_status claim_many(const char *path, const sl_format *row,
                            const sl_format **many, sl_err *err) {
  *many = NULL;
  if (row && !row->index_file) { /* a format of many files only */
    *many = row;
    return SL_OK;
  }
  for (size_t k = 0; k < sl_format_table_len; k++) {
    const sl_format *f = sl_format_table[k];
    if (!f->claim || (row && f != row))
      continue;
    bool asked = false; /* a reader of several kinds: asked once */
    for (size_t j = 0; j < k && !row; j++)
      asked |= sl_format_table[j]->claim == f->claim;
    if (asked)
      continue;
    sl_format_kind kind = row ? row->kind : SL_FORMAT_AUTO;
    bool mine = false;
    sl_status st = f->claim(path, &kind, &mine, err);
    if (st != SL_OK)
      return st;
    if (!mine)
      continue;
    *many = f;
    for (size_t j = 0; j < sl_format_table_len; j++)
      if (sl_format_table[j]->kind == kind)
        *many = sl_format_table[j];
    return SL_OK;
  }
  return SL_OK;
}

/* Refuses the dataset.* options row's format does not take, naming the
 * key and the formats that take it. */
static sl_status check_options(const sl_source *src, const char *path,
                               const sl_format *row, sl_err *err) {
  char list[160];
  if (!(row->entries & SL_ENTRIES_BIT(src->entries))) {
    unsigned bit = SL_ENTRIES_BIT(src->entries);
    return sl_err_set(err, SL_ECONFIG,
                      "%s: dataset.entries = %s is for %s; "
                      "this is %s",
                      path, entries_name(src->entries),
                      row_list(list, sizeof list, BY_ENTRIES, bit), row->what);
  }
  const struct {
    const char *key;
    unsigned bit;
    bool set;
  } keys[] = {
      {"label_file", SL_FOPT_LABEL_FILE, src->label_file != NULL},
      {"lmdb_db", SL_FOPT_LMDB_DB, src->lmdb_db != NULL},
      {"images", SL_FOPT_ARRAYS, src->images != NULL},
      {"labels", SL_FOPT_ARRAYS, src->labels != NULL},
      {"targets", SL_FOPT_ARRAYS, src->targets_name != NULL},
      {"labels_path", SL_FOPT_ARRAYS, src->labels_path != NULL},
      {"lengths", SL_FOPT_ARRAYS, src->lengths_name != NULL},
      {"label_from", SL_FOPT_ARRAYS, src->label_argmax},
      {"label_key", SL_FOPT_LABEL_KEY, src->label_key != NULL},
      {"targets_ext", SL_FOPT_TARGETS_EXT, src->targets_ext != NULL},
  };
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
    if (keys[k].set && !(row->options & keys[k].bit))
      return sl_err_set(err, SL_ECONFIG, "%s: dataset.%s is for %s; this is %s",
                        path, keys[k].key,
                        row_list(list, sizeof list, BY_OPTION, keys[k].bit),
                        row->what);
  return SL_OK;
}

/* ---- open ---------------------------------------------------------------- */

static sl_status open_path(sl_source **out, const char *path,
                           const sl_source_opts *opts, sl_source_mode mode,
                           sl_source_bad_fn on_bad, void *user, sl_err *err);

/* A path, or a single file at a URL: fetched into the cache and opened
 * from there (formats/core/source_url_file.c), its messages naming the
 * URL. */
static sl_status open_common(sl_source **out, const char *path,
                             const sl_source_opts *opts, sl_source_mode mode,
                             sl_source_bad_fn on_bad, void *user, sl_err *err) {
  if (!sl_source_is_url_file(path, opts->fmt))
    return open_path(out, path, opts, mode, on_bad, user, err);
  *out = NULL;
  sl_remote *r;
  int fd;
  char local[64];
  sl_status st = sl_source_fetch_url_file(path, &opts->remote, &r, &fd, local,
                                          sizeof local, err);
  if (st != SL_OK)
    return st;
  st = open_path(out, local, opts, mode, on_bad, user, err);
  close(fd); /* the source holds its own descriptors of the file */
  char *name = st == SL_OK ? strdup(path) : NULL;
  if (st == SL_OK && !name) {
    sl_source_close(*out);
    *out = NULL;
    st = sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  }
  if (st != SL_OK) {
    sl_remote_close(r);
    sl_source_say_url(err, local, path);
    return st;
  }
  free((*out)->path);
  (*out)->path = name; /* messages name the URL */
  (*out)->remote = r;  /* its cache's stats; closed with the source */
  return SL_OK;
}

static sl_status open_path(sl_source **out, const char *path,
                           const sl_source_opts *opts, sl_source_mode mode,
                           sl_source_bad_fn on_bad, void *user, sl_err *err) {
  *out = NULL;
  sl_format_kind fmt = opts->fmt;
  sl_source *src = calloc(1, sizeof *src);
  if (!src || !(src->path = strdup(path))) {
    free(src);
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  }
  src->fd = -1;
  src->dirfd = -1;
  src->keep_map = mode == SL_SOURCE_MMAP;
  src->on_bad = on_bad;
  src->on_bad_user = user;
  src->entries = opts->entries;
  src->order = opts->order;
  src->axis_order = opts->axis_order;
  src->max_fill =
      opts->max_fill_samples ? opts->max_fill_samples : SL_SOURCE_MAX_FILL;
  src->label_argmax = opts->label_argmax;
  src->label_offset = opts->label_offset;
  src->length_crc_only = opts->length_crc_only && !on_bad;
  src->remote_opts = opts->remote;
  src->reindex = opts->reindex;
  src->skip_bad_files = opts->skip_bad_files && !on_bad;
  /* The default keys (set or not) keep TFDS's names as the fallback. */
  bool own_image = opts->image_key && opts->image_key[0] &&
                   strcmp(opts->image_key, "image/encoded") != 0;
  bool own_label = opts->label_key && opts->label_key[0] &&
                   strcmp(opts->label_key, "image/class/label") != 0;
  if ((own_image && !(src->image_key = strdup(opts->image_key))) ||
      (own_label && !(src->label_key = strdup(opts->label_key))) ||
      (opts->label_file && opts->label_file[0] &&
       !(src->label_file = strdup(opts->label_file))) ||
      (opts->lmdb_db && opts->lmdb_db[0] &&
       !(src->lmdb_db = strdup(opts->lmdb_db))) ||
      (opts->images && opts->images[0] &&
       !(src->images = strdup(opts->images))) ||
      (opts->labels && opts->labels[0] &&
       !(src->labels = strdup(opts->labels))) ||
      (opts->targets && opts->targets[0] &&
       !(src->targets_name = strdup(opts->targets))) ||
      (opts->labels_path && opts->labels_path[0] &&
       !(src->labels_path = strdup(opts->labels_path))) ||
      (opts->lengths && opts->lengths[0] &&
       !(src->lengths_name = strdup(opts->lengths))) ||
      (opts->targets_ext && opts->targets_ext[0] &&
       !(src->targets_ext = strdup(opts->targets_ext)))) {
    sl_source_close(src);
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  }
  const sl_format *row = NULL;
  for (size_t k = 0; k < sl_format_table_len; k++)
    if (sl_format_table[k]->kind == fmt)
      row = sl_format_table[k];
  const sl_format *many = NULL;
  sl_status st = claim_many(path, row, &many, err);
  if (st == SL_OK && many)
    return open_many(out, src, path, many, err);
  if (st == SL_OK)
    st = detect(src, path, &row, err);
  if (st == SL_OK)
    st = check_options(src, path, row, err);
  if (st == SL_OK) {
    src->fmt = row->kind;
    src->format = row;
    void *m =
        mmap(NULL, (size_t)src->file_size, PROT_READ, MAP_SHARED, src->fd, 0);
    if (m == MAP_FAILED)
      st = sl_err_errno(err, SL_EIO, errno, "%s: mmap", path);
    else {
      src->map = m;
      /* Indexing and a mapped source read in random order: no read-around.
       * A map of the whole file starts on a page. */
      if (madvise(m, (size_t)src->file_size, MADV_RANDOM) != 0)
        st = sl_err_errno(err, SL_EIO, errno,
                          "%s: madvise(MADV_RANDOM) of %zu bytes", path,
                          (size_t)src->file_size);
    }
  }
  if (st == SL_OK)
    st = row->index_file(src, path, err);
  if (st == SL_OK && !src->keep_map) {
    munmap(src->map, (size_t)src->file_size);
    src->map = NULL;
  }
  if (st != SL_OK) {
    sl_source_close(src);
    return st;
  }
  *out = src;
  return SL_OK;
}

/* A source of many files: the indexer adds the files (src->files) and the
 * entries; a mapped source maps them all into one reservation. */
static sl_status open_many(sl_source **out, sl_source *src, const char *path,
                           const sl_format *row, sl_err *err) {
  src->fmt = row->kind;
  src->format = row;
  sl_status st = check_options(src, path, row, err);
  src->entries = SL_ENTRIES_IMAGES;
  if (st == SL_OK)
    st = row->index_many(src, path, err);
  if (st == SL_OK && src->keep_map && src->files.lazy)
    src->keep_map = false; /* files opened per read: pread, buf needed */
  if (st == SL_OK && src->keep_map && !src->map) { /* not mapped already */
    size_t len;
    st = sl_file_set_map(&src->files, &src->map, &len, err);
    if (st != SL_OK)
      sl_err_prefix(err, "%s: ", path);
  }
  if (st != SL_OK) {
    sl_source_close(src);
    return st;
  }
  *out = src;
  return SL_OK;
}

/* Opens the data file, checks its size and recognises the format: *row
 * the one dataset.format names (checked against the file), or NULL to
 * detect it. */
static sl_status detect(sl_source *src, const char *path, const sl_format **row,
                        sl_err *err) {
  struct stat sb;
  if (stat(path, &sb) != 0)
    return sl_err_errno(err, SL_EIO, errno, "%s", path);
  const char *file = path;
  char data_path[PATH_MAX];
  const sl_format *dir_row = NULL; /* the format of directories */
  for (size_t k = 0; k < sl_format_table_len && !dir_row; k++)
    if (sl_format_table[k]->dir_file)
      dir_row = sl_format_table[k];
  if (S_ISDIR(sb.st_mode)) {
    if (!dir_row)
      return sl_err_set(err, SL_EFORMAT, "%s: a directory", path);
    if (snprintf(data_path, sizeof data_path, "%s/%s", path,
                 dir_row->dir_file) >= (int)sizeof data_path)
      return sl_err_set(err, SL_EINVAL, "%s: path too long", path);
    file = data_path;
    src->dir_path = true;
  }
  src->fd = open(file, O_RDONLY | O_CLOEXEC);
  if (src->fd < 0 && errno == ENOENT && src->dir_path)
    return sl_err_set(err, SL_EIO,
                      "%s: a folder, not a dataset (no %s: not %s either); "
                      "`sluice pack %s OUT.lmdb` makes a dataset of the "
                      "images in it",
                      path, dir_row->dir_file, dir_row->dir_what, path);
  if (src->fd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s", file);
  if (fstat(src->fd, &sb) != 0)
    return sl_err_errno(err, SL_EIO, errno, "%s: stat", file);
  if (!S_ISREG(sb.st_mode))
    return sl_err_set(err, SL_EFORMAT, "%s: not a regular file", file);
  src->file_size = (uint64_t)sb.st_size;
  if ((uint64_t)(size_t)src->file_size != src->file_size)
    return sl_err_set(err, SL_ETOOBIG, "%s: too large to map", file);
  uint8_t head[24] = {0};
  ssize_t got = pread(src->fd, head, sizeof head, 0);
  if (got < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s: read", file);
  size_t n = (size_t)got;
  for (size_t k = 0; k < sl_format_table_len; k++) {
    const sl_format *f = sl_format_table[k];
    sl_status st = f->refuse && (!*row || *row == f)
                       ? f->refuse(head, n, file, err)
                       : SL_OK;
    if (st != SL_OK)
      return st;
  }
  /* The strongest sniff wins (a magic over a checksum), ties by table
   * order; a second look only where no row took the head. */
  const sl_format *found = NULL;
  int best = 0;
  for (size_t k = 0; k < sl_format_table_len; k++) {
    const sl_format *f = sl_format_table[k];
    int s = f->sniff ? f->sniff(head, n) : 0;
    if (s > best)
      best = s, found = f;
  }
  for (size_t k = 0; k < sl_format_table_len && !found && n >= 20; k++) {
    const sl_format *f = sl_format_table[k];
    if (f->sniff_deep && (!*row || *row == f) &&
        f->sniff_deep(src->fd, src->file_size))
      found = f;
  }
  if (*row && (*row)->sniff(head, n) == 0 && found != *row)
    return sl_err_set(err, SL_EFORMAT, "%s: %s", file, (*row)->not_this(n));
  if (!*row && !found) {
    sl_sniff_kind image = sl_sniff_magic(head, n);
    if (image != SL_SNIFF_NONE)
      return sl_err_set(
          err, SL_EFORMAT,
          "%s: a %s image, not a dataset; `sluice pack FOLDER OUT.lmdb` "
          "makes a dataset of a folder of images",
          file, sl_sniff_name(image));
    char titles[160], reads[480];
    return sl_err_set(err, SL_EFORMAT, "%s: %s%s%s; sluice reads %s", file,
                      n == 0 ? "file is empty" : "not an ",
                      n == 0 ? "" : row_list(titles, sizeof titles, BY_FILE, 0),
                      n == 0 ? "" : " file",
                      row_list(reads, sizeof reads, BY_READS, 0));
  }
  if (!*row)
    *row = found;
  if (src->dir_path && *row != dir_row)
    return sl_err_set(err, SL_EFORMAT, "%s: a directory must be %s", path,
                      dir_row->dir_what);
  return SL_OK;
}
