/* sl_fwriter: the temporary file, its clean-up, and the final rename. */
#include "formats/core/writer_impl.h"

#include "formats/core/boxes.h"
#include "formats/core/layout.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_TAG ".sluice-tmp."

struct sl_fwriter {
  sl_format_kind fmt;
  char *path;
  int anon_fd;        /* O_TMPFILE file, or -1 when tmp is a named file */
  char open_path[64]; /* "/proc/self/fd/N" for the O_TMPFILE file */
  char tmp[PATH_MAX]; /* the named temporary file */
  uint64_t count;
  uint32_t target_width;
  bool levels; /* codec 7 samples allowed: the file gets the levels layout */
  uint64_t level_images[SL_LEVELS_MAX], level_bytes[SL_LEVELS_MAX];
  /* Boxes, kept until commit once any sample has one: each sample's count
   * (box_n, from sample 0) and the boxes encoded (formats/core/boxes.h). */
  uint16_t *box_n;
  uint64_t box_n_cap;
  uint8_t *box_bytes;
  uint64_t box_total, box_cap;
  uint32_t box_classes; /* one more than the largest box label */
  sl_err broken; /* an add failed after the checks: nothing more is taken */
  sl_lmdb_writer *lmdb;
  sl_hdf5_writer *hdf5;
};

static void split_path(const char *path, char *dir, size_t cap,
                       const char **base);
static void clean_stale(const char *dir, const char *base);
static sl_status sl_fsync_path(const char *path, sl_err *err);

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* The format a destination path implies: .lmdb/.mdb → LMDB, .h5/.hdf5 →
 * HDF5, otherwise SL_FORMAT_AUTO (unknown). */
static sl_format_kind sl_fwriter_format_for(const char *path) {
  if (ends_with(path, ".lmdb") || ends_with(path, ".mdb"))
    return SL_FORMAT_LMDB;
  if (ends_with(path, ".h5") || ends_with(path, ".hdf5"))
    return SL_FORMAT_HDF5;
  return SL_FORMAT_AUTO;
}

sl_status sl_fwriter_open(sl_fwriter **out, const char *path,
                          sl_format_kind fmt, sl_err *err) {
  *out = NULL;
  if (fmt == SL_FORMAT_AUTO)
    fmt = sl_fwriter_format_for(path);
  if (fmt == SL_FORMAT_AUTO)
    return sl_err_set(err, SL_EINVAL,
                      "%s: cannot tell the format from the "
                      "name (use .lmdb or .h5, or give the format)",
                      path);
  char dir[PATH_MAX];
  const char *base;
  split_path(path, dir, sizeof dir, &base);
  if (!*base)
    return sl_err_set(err, SL_EINVAL, "%s: not a file name", path);
  sl_fwriter *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(path))) {
    free(w);
    return sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  }
  w->fmt = fmt;
  w->anon_fd = -1; /* before any abort: calloc's 0 would close stdin */
  if (snprintf(w->tmp, sizeof w->tmp, "%s/.%s" TMP_TAG "%ld", dir, base,
               (long)getpid()) >= (int)sizeof w->tmp) {
    sl_fwriter_abort(w);
    return sl_err_set(err, SL_EINVAL, "%s: path too long", path);
  }
  clean_stale(dir, base);
  if (unlink(w->tmp) != 0 && errno != ENOENT) {
    sl_status st = sl_err_errno(err, SL_EIO, errno, "%s", w->tmp);
    sl_fwriter_abort(w);
    return st;
  }
  /* LMDB: an anonymous file (gone if the process dies), reopened by liblmdb
   * through /proc and linked into place at commit. HDF5 spools to an
   * anonymous file and creates the named file at commit. */
  if (fmt == SL_FORMAT_LMDB)
    w->anon_fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
  struct stat sb;
  if (w->anon_fd >= 0) {
    snprintf(w->open_path, sizeof w->open_path, "/proc/self/fd/%d", w->anon_fd);
    if (stat(w->open_path, &sb) != 0) { /* no /proc: use the named file */
      close(w->anon_fd);
      w->anon_fd = -1;
    }
  }
  const char *target = w->anon_fd >= 0 ? w->open_path : w->tmp;
  sl_status st = fmt == SL_FORMAT_LMDB
                     ? sl_lmdb_writer_open(&w->lmdb, target, w->tmp, err)
                     : sl_hdf5_writer_open(&w->hdf5, w->tmp, err);
  if (st != SL_OK) {
    sl_fwriter_abort(w);
    return st;
  }
  *out = w;
  return SL_OK;
}

sl_status sl_fwriter_set_target_width(sl_fwriter *w, uint32_t k, sl_err *err) {
  if (w->count > 0)
    return sl_err_set(err, SL_ESTATE,
                      "%s: the target width is set before the first sample",
                      w->path);
  if (k > SL_TARGETS_MAX)
    return sl_err_set(err, SL_EINVAL, "%s: %u targets a sample (at most %u)",
                      w->path, k, SL_TARGETS_MAX);
  w->target_width = k;
  return SL_OK;
}

sl_status sl_fwriter_set_levels(sl_fwriter *w, sl_err *err) {
  if (w->count > 0)
    return sl_err_set(err, SL_ESTATE,
                      "%s: levels are set before the first sample", w->path);
  w->levels = true;
  if (w->lmdb)
    sl_lmdb_writer_set_version(w->lmdb, SL_LMDB_LAYOUT_LEVELS);
  else
    sl_hdf5_writer_set_version(w->hdf5, SL_HDF5_LAYOUT_LEVELS);
  return SL_OK;
}

/* Checks a codec-7 payload and counts its levels. */
static sl_status check_levels(sl_fwriter *w, const void *payload, size_t len,
                              const sl_sample_info *meta, sl_levels *lv,
                              sl_err *err) {
  unsigned long long i = (unsigned long long)w->count;
  if (!w->levels)
    return sl_err_set(err, SL_EINVAL,
                      "%s: sample %llu: a level record, but the file was not "
                      "opened with levels",
                      w->path, i);
  const char *why = sl_levels_parse(payload, len, lv);
  if (!why && (lv->level[0].width != meta->width ||
               lv->level[0].height != meta->height))
    why = "level 0's size differs from the sample's";
  if (why)
    return sl_err_set(err, SL_EINVAL, "%s: sample %llu: %s", w->path, i, why);
  return SL_OK;
}

/* Checks sample i's boxes: what a reader would refuse, and flags this
 * build does not know. */
static sl_status check_boxes(const sl_fwriter *w, const sl_box *boxes,
                             uint32_t n, sl_err *err) {
  unsigned long long i = (unsigned long long)w->count;
  if (n > SL_BOXES_MAX || (n > 0 && !boxes))
    return sl_err_set(err, SL_EINVAL,
                      "%s: sample %llu: %u boxes at %p (0..%u, NULL only "
                      "when 0)",
                      w->path, i, n, (const void *)boxes, SL_BOXES_MAX);
  for (uint32_t k = 0; k < n; k++) {
    const sl_box *b = &boxes[k];
    const char *why = sl_box_check(b, SL_CLASSES_MAX);
    if (!why && (b->flags & ~SL_BOX_FLAGS_KNOWN))
      why = "unknown flag bits (SL_BOX_CROWD, SL_BOX_DIFFICULT)";
    if (why)
      return sl_err_set(err, SL_EINVAL,
                        "%s: sample %llu: box %u (%g,%g,%g,%g label %d flags "
                        "0x%x): %s",
                        w->path, i, k, (double)b->x0, (double)b->y0,
                        (double)b->x1, (double)b->y1, (int)b->label,
                        (unsigned)b->flags, why);
  }
  return SL_OK;
}

/* Makes room for sample i's count and n more boxes (before the sample is
 * written, so that running out of memory adds nothing). */
static sl_status reserve_boxes(sl_fwriter *w, uint32_t n, sl_err *err) {
  if (n == 0 && !w->box_n)
    return SL_OK; /* no box yet: nothing is kept */
  if (w->count >= w->box_n_cap) {
    uint64_t cap = w->box_n_cap ? 2 * w->box_n_cap : 4096;
    while (cap <= w->count)
      cap *= 2;
    uint16_t *b = realloc(w->box_n, (size_t)cap * sizeof *b);
    if (!b)
      return sl_err_set(err, SL_ENOMEM,
                        "%s: no memory for the box counts of %llu samples",
                        w->path, (unsigned long long)cap);
    memset(b + w->box_n_cap, 0, (size_t)(cap - w->box_n_cap) * sizeof *b);
    w->box_n = b;
    w->box_n_cap = cap;
  }
  if (w->box_total + n > w->box_cap) {
    uint64_t cap = w->box_cap ? 2 * w->box_cap : 4096;
    while (cap < w->box_total + n)
      cap *= 2;
    uint8_t *b = realloc(w->box_bytes, (size_t)cap * SL_BOX_BYTES);
    if (!b)
      return sl_err_set(err, SL_ENOMEM, "%s: no memory for %llu boxes", w->path,
                        (unsigned long long)cap);
    w->box_bytes = b;
    w->box_cap = cap;
  }
  return SL_OK;
}

static void keep_boxes(sl_fwriter *w, uint64_t i, const sl_box *boxes,
                       uint32_t n) {
  if (!w->box_n)
    return;
  w->box_n[i] = (uint16_t)n;
  for (uint32_t k = 0; k < n; k++) {
    sl_box_encode(w->box_bytes + (size_t)(w->box_total + k) * SL_BOX_BYTES,
                  &boxes[k]);
    if ((uint32_t)boxes[k].label >= w->box_classes)
      w->box_classes = (uint32_t)boxes[k].label + 1;
  }
  w->box_total += n;
}

sl_status sl_fwriter_add_named(sl_fwriter *w, const void *payload, size_t len,
                               const sl_sample_info *meta, const char *name,
                               const float *targets, sl_err *err) {
  return sl_fwriter_add_annotated(w, payload, len, meta, name, targets, NULL, 0,
                                  err);
}

sl_status sl_fwriter_add_annotated(sl_fwriter *w, const void *payload,
                                   size_t len, const sl_sample_info *meta,
                                   const char *name, const float *targets,
                                   const sl_box *boxes, uint32_t nboxes,
                                   sl_err *err) {
  unsigned long long i = (unsigned long long)w->count;
  size_t name_len = name ? strlen(name) : 0;
  if (w->broken.code != SL_OK)
    return sl_err_set(err, SL_ESTATE,
                      "%s: an earlier sample failed to be written (%s); "
                      "nothing more is taken and commit will fail",
                      w->path, w->broken.msg);
  if (len == 0 || len >= UINT32_MAX - name_len)
    return sl_err_set(err, SL_EINVAL,
                      "%s: sample %llu: payload of %zu bytes "
                      "(1 byte to 4 GiB allowed)",
                      w->path, i, len);
  if (name_len > SL_NAME_MAX)
    return sl_err_set(err, SL_EINVAL,
                      "%s: sample %llu: name of %zu bytes (at most %u)",
                      w->path, i, name_len, SL_NAME_MAX);
  if (w->target_width > 0 && !targets)
    return sl_err_set(err, SL_EINVAL,
                      "%s: sample %llu: no targets (the file has %u a sample)",
                      w->path, i, w->target_width);
  for (uint32_t q = 0; q < w->target_width; q++)
    if (!isfinite(targets[q]))
      return sl_err_set(err, SL_EINVAL,
                        "%s: sample %llu: target %u is %f (targets must be "
                        "finite)",
                        w->path, i, q, (double)targets[q]);
  sl_levels lv = {0};
  if (meta->codec == SL_IMAGE_JPEG_LEVELS) {
    sl_status ls = check_levels(w, payload, len, meta, &lv, err);
    if (ls != SL_OK)
      return ls;
  }
  sl_status bs = check_boxes(w, boxes, nboxes, err);
  if (bs == SL_OK)
    bs = reserve_boxes(w, nboxes, err);
  if (bs != SL_OK)
    return bs;
  sl_sample_info m = *meta;
  m.name_len = (uint16_t)name_len;
  sl_status st = w->lmdb
                     ? sl_lmdb_writer_add(w->lmdb, w->count, payload, len, &m,
                                          name, targets, w->target_width, err)
                     : sl_hdf5_writer_add(w->hdf5, payload, len, &m, name,
                                          targets, w->target_width, err);
  if (st == SL_OK) {
    keep_boxes(w, w->count, boxes, nboxes);
    w->count++;
    for (int k = 0; k < lv.n; k++) {
      w->level_images[k]++;
      w->level_bytes[k] += lv.level[k].len;
    }
  } else if (st != SL_EINVAL) { /* the file may now hold part of it */
    w->broken.code = st;
    snprintf(w->broken.msg, sizeof w->broken.msg, "%s", err ? err->msg : "");
  }
  return st;
}

sl_status sl_fwriter_add(sl_fwriter *w, const void *payload, size_t len,
                         const sl_sample_info *meta, sl_err *err) {
  return sl_fwriter_add_named(w, payload, len, meta, NULL, NULL, err);
}

/* Makes a new name in path's directory durable (best effort). */
static sl_status sync_dir(const char *path, sl_err *err) {
  char dir[PATH_MAX];
  const char *base;
  split_path(path, dir, sizeof dir, &base);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
  return SL_OK;
}

static sl_status publish(sl_fwriter *w, bool replace, sl_err *err) {
  if (w->anon_fd >= 0) {
    /* Give the anonymous file a name: the destination itself when it must
     * not be replaced (link fails if it exists), else the temporary name,
     * renamed below. */
    const char *name = replace ? w->tmp : w->path;
    if (linkat(AT_FDCWD, w->open_path, AT_FDCWD, name, AT_SYMLINK_FOLLOW) != 0)
      return errno == EEXIST && !replace
                 ? sl_err_set(err, SL_EIO, "%s: exists (not replaced)", w->path)
                 : sl_err_errno(err, SL_EIO, errno, "link %s", name);
    close(w->anon_fd);
    w->anon_fd = -1;
    if (!replace) {
      w->tmp[0] = '\0'; /* nothing left to clean up */
      return sync_dir(w->path, err);
    }
  }
  if (replace) {
    if (rename(w->tmp, w->path) != 0)
      return sl_err_errno(err, SL_EIO, errno, "rename %s -> %s", w->tmp,
                          w->path);
  } else if (renameat2(AT_FDCWD, w->tmp, AT_FDCWD, w->path, RENAME_NOREPLACE) !=
             0) {
    if (errno == EEXIST)
      return sl_err_set(err, SL_EIO, "%s: exists (not replaced)", w->path);
    if (errno != EINVAL && errno != ENOSYS)
      return sl_err_errno(err, SL_EIO, errno, "rename %s -> %s", w->tmp,
                          w->path);
    /* No RENAME_NOREPLACE on this file system: link fails if path exists. */
    if (link(w->tmp, w->path) != 0)
      return errno == EEXIST
                 ? sl_err_set(err, SL_EIO, "%s: exists (not replaced)", w->path)
                 : sl_err_errno(err, SL_EIO, errno, "link %s -> %s", w->tmp,
                                w->path);
    unlink(w->tmp);
  }
  return sync_dir(w->path, err);
}

/* Class names and the settings string are stored one per line (LMDB's
 * metadata is text), so a newline would split them; the layout also bounds
 * a name's length. */
static sl_status check_meta(const sl_fwriter *w, uint32_t nclasses,
                            const char *const *classes, const char *settings,
                            sl_err *err) {
  if (nclasses > 0 && !classes)
    return sl_err_set(err, SL_EINVAL, "%s: %u classes but no names", w->path,
                      nclasses);
  for (uint32_t c = 0; c < nclasses; c++) {
    if (!classes[c])
      return sl_err_set(err, SL_EINVAL, "%s: class %u has no name", w->path, c);
    size_t len = strlen(classes[c]);
    if (len > SL_CLASS_NAME_MAX || strpbrk(classes[c], "\r\n"))
      return sl_err_set(err, SL_EINVAL,
                        "%s: class %u name (%zu bytes) is longer than %u bytes "
                        "or has a line break",
                        w->path, c, len, SL_CLASS_NAME_MAX);
  }
  if (settings && strpbrk(settings, "\r\n"))
    return sl_err_set(err, SL_EINVAL,
                      "%s: the writer settings string has a line break",
                      w->path);
  return SL_OK;
}

sl_status sl_fwriter_commit(sl_fwriter *w, uint32_t nclasses,
                            const char *const *classes, const char *settings,
                            bool replace, sl_err *err) {
  if (w->broken.code != SL_OK) {
    sl_status st =
        sl_err_set(err, SL_ESTATE,
                   "%s: not committed: sample %llu failed to be written (%s)",
                   w->path, (unsigned long long)w->count, w->broken.msg);
    sl_fwriter_abort(w);
    return st;
  }
  sl_status st = check_meta(w, nclasses, classes, settings, err);
  if (st != SL_OK) {
    sl_fwriter_abort(w);
    return st;
  }
  /* "IMAGES:BYTES" for each level that any sample has, level 0 first. */
  char levels[SL_LEVELS_MAX * 48] = "";
  for (int k = 0, n = 0; w->levels && k < SL_LEVELS_MAX; k++)
    if (w->level_images[k])
      n += snprintf(levels + n, sizeof levels - (size_t)n, "%s%llu:%llu",
                    n ? " " : "", (unsigned long long)w->level_images[k],
                    (unsigned long long)w->level_bytes[k]);
  if (w->levels && !levels[0])
    snprintf(levels, sizeof levels, "0:0");
  if (w->box_classes > nclasses) {
    st = sl_err_set(err, SL_EINVAL,
                    "%s: a box has label %u but the file has %u classes",
                    w->path, w->box_classes - 1, nclasses);
    sl_fwriter_abort(w);
    return st;
  }
  /* Boxes only when some sample has one: the file keeps the older layout
   * otherwise. */
  sl_fw_boxes bx = {w->box_n, w->box_bytes, w->box_total};
  const sl_fw_boxes *pbx = w->box_total ? &bx : NULL;
  if (w->lmdb)
    st = sl_lmdb_writer_finish(w->lmdb, w->count, nclasses, classes,
                               w->target_width, settings ? settings : "",
                               levels, pbx, err);
  else
    st = sl_hdf5_writer_finish(w->hdf5, nclasses, classes, w->target_width,
                               settings ? settings : "", levels, pbx, err);
  w->lmdb = NULL;
  w->hdf5 = NULL;
  if (st == SL_OK)
    st = sl_fsync_path(w->anon_fd >= 0 ? w->open_path : w->tmp, err);
  if (st == SL_OK)
    st = publish(w, replace, err);
  sl_fwriter_abort(w); /* removes the temporary file if it is still there */
  return st;
}

void sl_fwriter_abort(sl_fwriter *w) {
  if (!w)
    return;
  sl_lmdb_writer_free(w->lmdb);
  sl_hdf5_writer_free(w->hdf5);
  if (w->anon_fd >= 0)
    close(w->anon_fd);
  else if (w->tmp[0])
    unlink(w->tmp);
  free(w->box_n);
  free(w->box_bytes);
  free(w->path);
  free(w);
}

uint64_t sl_fwriter_count(const sl_fwriter *w) {
  return w->count;
}

/* fsync the file at path. */
static sl_status sl_fsync_path(const char *path, sl_err *err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s", path);
  int rc = fsync(fd);
  int e = errno;
  close(fd);
  if (rc != 0)
    return sl_err_errno(err, SL_EIO, e, "%s: fsync", path);
  return SL_OK;
}

/* dir gets path's directory ("." when none), *base its last component. */
static void split_path(const char *path, char *dir, size_t cap,
                       const char **base) {
  const char *slash = strrchr(path, '/');
  if (!slash) {
    snprintf(dir, cap, ".");
    *base = path;
  } else if (slash == path) {
    snprintf(dir, cap, "/");
    *base = slash + 1;
  } else {
    snprintf(dir, cap, "%.*s", (int)(slash - path), path);
    *base = slash + 1;
  }
}

/* Deletes ".BASE.sluice-tmp.PID" files left by writers that were killed. */
static void clean_stale(const char *dir, const char *base) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  char prefix[NAME_MAX + 32];
  snprintf(prefix, sizeof prefix, ".%s" TMP_TAG, base);
  size_t pl = strlen(prefix);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, prefix, pl) != 0)
      continue;
    char *end;
    long pid = strtol(e->d_name + pl, &end, 10);
    if (*end || pid <= 0 || pid == (long)getpid())
      continue;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
      unlinkat(dirfd(d), e->d_name, 0);
  }
  closedir(d);
}
