/* An image folder in ImageFolder layout, read in place: root/CLASS/...
 * files, the class subfolders sorted by name giving labels 0..C-1 and each
 * class's files (its subfolders too) in sorted order, as torchvision's
 * ImageFolder orders them. Sample i is file i; it is opened per read
 * (a million files cannot all stay open or mapped): pread and io_uring
 * read it, mmap falls back to pread (io/ says so).
 *
 * Each image's header is read at open (kind, size, channels: the index
 * entry is complete and immutable before any worker runs); files whose
 * extension is an image's that sluice does not decode (bmp, ppm, pgm,
 * tif, tiff) and files that are no image by their extension are skipped
 * (counted in sl_source_skipped).
 *
 * Links are followed (torchvision's os.walk(followlinks=True)), each
 * folder entered once by (device, inode): a class folder that is another
 * class's folder, by a link, is empty. Time and memory follow the folders'
 * entries, whatever the links.
 *
 * Memory: per file its name (the path under root, 8 B + its bytes), a
 * 24-byte span and 8 bytes (source.h), and its index entry; the scan
 * reads at most 64 KiB of a file (16 MiB when its header lies further). */
#include "formats/core/source_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dir_seen.h"
#include "common/pread_full.h"
#include "formats/core/format.h"

#define HEAD_BYTES SL_FOLDER_HEAD_BYTES
#define MAX_DEPTH 32

typedef struct names {
  char **v;
  size_t n, cap;
} names;

static sl_status push(names *ns, const char *s, sl_err *err) {
  if (ns->n == ns->cap) {
    size_t cap = ns->cap ? ns->cap * 2 : 64;
    char **v = realloc(ns->v, cap * sizeof *v);
    if (!v)
      return sl_err_set(err, SL_ENOMEM, "image folder: file list");
    ns->v = v;
    ns->cap = cap;
  }
  if (!(ns->v[ns->n] = strdup(s)))
    return sl_err_set(err, SL_ENOMEM, "image folder: file list");
  ns->n++;
  return SL_OK;
}

static void names_free(names *ns) {
  for (size_t i = 0; i < ns->n; i++)
    free(ns->v[i]);
  free(ns->v);
  *ns = (names){0};
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* torchvision's order: sorted(os.walk(...)) then sorted(files): by the
 * folder's path first, then by the file's name. */
static int by_dir_then_name(const void *a, const void *b) {
  const char *x = *(char *const *)a, *y = *(char *const *)b;
  const char *sx = strrchr(x, '/'), *sy = strrchr(y, '/');
  size_t dx = sx ? (size_t)(sx - x) : 0, dy = sy ? (size_t)(sy - y) : 0;
  int c = strncmp(x, y, dx < dy ? dx : dy);
  if (c == 0 && dx != dy) {
    /* one folder is a prefix of the other: Python compares the strings */
    return dx < dy ? -1 : 1;
  }
  if (c != 0)
    return c;
  return strcmp(sx ? sx + 1 : x, sy ? sy + 1 : y);
}

static const char *ext_of(const char *name) {
  const char *d = strrchr(name, '.');
  return d ? d + 1 : "";
}

static bool decoded_ext(const char *e) {
  return !strcasecmp(e, "jpg") || !strcasecmp(e, "jpeg") ||
         !strcasecmp(e, "png") || !strcasecmp(e, "webp");
}

static bool other_image_ext(const char *e) {
  return !strcasecmp(e, "bmp") || !strcasecmp(e, "ppm") ||
         !strcasecmp(e, "pgm") || !strcasecmp(e, "tif") ||
         !strcasecmp(e, "tiff");
}

/* The entries of dir (relative to root) that are folders (dirs true) or
 * files, following links. */
static sl_status list_dir(int root, const char *dir, bool dirs, names *out,
                          const char *path, sl_err *err) {
  int fd = openat(root, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s/%s", path, dir);
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return sl_err_errno(err, SL_EIO, errno, "%s/%s", path, dir);
  }
  sl_status st = SL_OK;
  struct dirent *de;
  char rel[PATH_MAX];
  while (st == SL_OK) {
    errno = 0; /* readdir sets it only on failure; the fstatat below may */
    if (!(de = readdir(d))) {
      if (errno)
        st = sl_err_errno(err, SL_EIO, errno, "%s/%s: readdir", path, dir);
      break;
    }
    if (de->d_name[0] == '.' &&
        (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
      continue;
    struct stat sb;
    if (fstatat(fd, de->d_name, &sb, 0) != 0)
      continue; /* a dangling link: os.walk skips it too */
    if (dirs != S_ISDIR(sb.st_mode) || (!dirs && !S_ISREG(sb.st_mode)))
      continue;
    if (snprintf(rel, sizeof rel, "%s%s%s", dir[0] == '.' && !dir[1] ? "" : dir,
                 dir[0] == '.' && !dir[1] ? "" : "/",
                 de->d_name) >= (int)sizeof rel) {
      st = sl_err_set(err, SL_EIO, "%s/%s/%s: path too long", path, dir,
                      de->d_name);
      break;
    }
    st = push(out, rel, err);
  }
  closedir(d);
  return st;
}

/* Adds the folder dir (relative to root) to seen. *fresh: whether it was
 * not there yet. */
static sl_status see_dir(int root, const char *dir, sl_dir_seen *seen,
                         bool *fresh, const char *path, sl_err *err) {
  struct stat sb;
  if (fstatat(root, dir, &sb, 0) != 0)
    return sl_err_errno(err, SL_EIO, errno, "%s/%s", path, dir);
  int rc = sl_dir_seen_add(seen, (uint64_t)sb.st_dev, (uint64_t)sb.st_ino);
  if (rc < 0)
    return sl_err_set(err, SL_ENOMEM, "%s/%s: folders walked", path, dir);
  *fresh = rc == 1;
  return SL_OK;
}

/* Every file under dir (relative to root), recursively, following links
 * but entering each folder (device, inode) once, at its first path in
 * sorted order: links cannot make the walk loop or take time exponential
 * in the entries (two links a level to the next folder), and a folder
 * reached twice adds its files once. */
static sl_status walk(int root, const char *dir, int depth, names *files,
                      sl_dir_seen *seen, const char *path, sl_err *err) {
  if (depth > MAX_DEPTH)
    return sl_err_set(err, SL_EIO, "%s/%s: folders nested more than %d deep",
                      path, dir, MAX_DEPTH);
  bool fresh = false;
  sl_status st = see_dir(root, dir, seen, &fresh, path, err);
  if (st != SL_OK || !fresh)
    return st;
  st = list_dir(root, dir, false, files, path, err);
  names sub = {0};
  if (st == SL_OK)
    st = list_dir(root, dir, true, &sub, path, err);
  if (st == SL_OK && sub.n) /* qsort of NULL, 0 is undefined */
    qsort(sub.v, sub.n, sizeof *sub.v, by_name);
  for (size_t i = 0; st == SL_OK && i < sub.n; i++)
    st = walk(root, sub.v[i], depth + 1, files, seen, path, err);
  names_free(&sub);
  return st;
}

/* Whether dir is an ImageFolder: a class subfolder holding an image. */
static bool sl_folder_like(const char *dir) {
  int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return false;
  names classes = {0};
  bool like = false;
  if (list_dir(root, ".", true, &classes, dir, NULL) == SL_OK)
    for (size_t c = 0; !like && c < classes.n; c++) {
      names files = {0};
      if (list_dir(root, classes.v[c], false, &files, dir, NULL) == SL_OK)
        for (size_t i = 0; !like && i < files.n; i++)
          like = decoded_ext(ext_of(files.v[i]));
      names_free(&files);
    }
  names_free(&classes);
  close(root);
  return like;
}

/* Indexes an ImageFolder directory at path. */
static sl_status sl_source_index_folder(sl_source *src, const char *path,
                                        sl_err *err) {
  src->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (src->dirfd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s", path);
  names classes = {0}, files = {0};
  sl_dir_seen seen = {0};
  char *blob = NULL;
  bool fresh;
  sl_status st = see_dir(src->dirfd, ".", &seen, &fresh, path, err);
  if (st == SL_OK)
    st = list_dir(src->dirfd, ".", true, &classes, path, err);
  if (st == SL_OK && classes.n) /* qsort of NULL, 0 is undefined */
    qsort(classes.v, classes.n, sizeof *classes.v, by_name);
  if (st == SL_OK && (classes.n == 0 || classes.n > INT32_MAX))
    st = sl_err_set(err, SL_EIO,
                    "%s: a folder, not a dataset: no class subfolders (an "
                    "ImageFolder is ROOT/CLASS/IMAGE); `sluice pack %s "
                    "OUT.lmdb` makes a dataset of the images in it",
                    path, path);
  uint32_t *first_of = NULL; /* each class's first file */
  size_t blob_len = 0;
  if (st == SL_OK && !(first_of = calloc(classes.n + 1, sizeof *first_of)))
    st = sl_err_set(err, SL_ENOMEM, "%s: classes", path);
  for (size_t c = 0; st == SL_OK && c < classes.n; c++) {
    size_t before = files.n;
    st = walk(src->dirfd, classes.v[c], 0, &files, &seen, path, err);
    if (st == SL_OK && files.n > before) /* files.v may still be NULL */
      qsort(files.v + before, files.n - before, sizeof *files.v,
            by_dir_then_name);
    /* keep what sluice decodes; the rest is skipped, counted */
    size_t w = before;
    for (size_t i = before; st == SL_OK && i < files.n; i++) {
      const char *e = ext_of(files.v[i]);
      if (decoded_ext(e)) {
        files.v[w++] = files.v[i];
        continue;
      }
      if (other_image_ext(e))
        src->skipped++;
      free(files.v[i]);
    }
    if (st == SL_OK) {
      files.n = w;
      first_of[c + 1] = (uint32_t)files.n;
      blob_len += strlen(classes.v[c]) + 1;
      if (files.n > UINT32_MAX)
        st = sl_err_set(err, SL_ETOOBIG, "%s: more than 2^32 files", path);
    }
  }
  if (st == SL_OK && files.n == 0)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: no .jpg, .jpeg, .png or .webp file under its %zu "
                    "class folders",
                    path, classes.n);
  if (st == SL_OK && !(blob = malloc(blob_len ? blob_len : 1)))
    st = sl_err_set(err, SL_ENOMEM, "%s: class names", path);
  if (st == SL_OK) {
    size_t at = 0;
    for (size_t c = 0; c < classes.n; c++) {
      size_t l = strlen(classes.v[c]) + 1;
      memcpy(blob + at, classes.v[c], l);
      at += l;
    }
    st = sl_source_set_classes(src, blob, blob_len, (uint32_t)classes.n, err);
  }
  /* The table: each file at its base, with its size as listed (a file
   * that shrinks later is a short read, named, at read time). */
  for (size_t i = 0; st == SL_OK && i < files.n; i++) {
    struct stat sb;
    uint64_t size =
        fstatat(src->dirfd, files.v[i], &sb, 0) == 0 ? (uint64_t)sb.st_size : 0;
    st = sl_source_add_file(src, files.v[i], -1, size, err);
  }
  if (st == SL_OK)
    st = sl_source_alloc_index(src, files.n, err);
  if (st == SL_OK) {
    sl_source_files_done(src);
    src->names_are_files = true;
  }
  uint8_t *buf = st == SL_OK ? malloc(HEAD_BYTES) : NULL;
  if (st == SL_OK && !buf)
    st = sl_err_set(err, SL_ENOMEM, "%s: header buffer", path);
  src->dropping = src->skip_bad_files;
  for (size_t c = 0; st == SL_OK && c < classes.n; c++)
    for (uint64_t i = first_of[c]; st == SL_OK && i < first_of[c + 1]; i++) {
      st = sl_folder_scan_file(src, i, buf, NULL, err);
      if (st == SL_OK && src->index[i].codec != 0)
        src->index[i].label = (int32_t)c;
    }
  for (size_t i = 0; st == SL_OK && i < src->nfiles; i++)
    src->file_first[i] = i;
  if (st == SL_OK && src->left_out > 0)
    st = sl_source_drop_left_out(src, err);
  src->dropping = false;
  free(buf);
  free(blob);
  free(first_of);
  names_free(&classes);
  names_free(&files);
  sl_dir_seen_free(&seen);
  return st;
}

/* ---- the row ------------------------------------------------------------- */

static bool is_dir(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* A directory holding an LMDB environment is LMDB's, whatever else is in
 * it. */
static bool lmdb_env_dir(const char *dir) {
  char p[PATH_MAX];
  struct stat sb;
  return snprintf(p, sizeof p, "%s/data.mdb", dir) < (int)sizeof p &&
         stat(p, &sb) == 0;
}

static sl_status folder_claim(const char *path, sl_format_kind *kind,
                              bool *mine, sl_err *err) {
  (void)kind, (void)err;
  *mine = is_dir(path) ? !lmdb_env_dir(path) && sl_folder_like(path)
                       : sl_folder_list_like(path); /* PATH LABEL, .lst */
  return SL_OK;
}

static sl_status folder_index(sl_source *src, const char *path, sl_err *err) {
  return is_dir(path) ? sl_source_index_folder(src, path, err)
                      : sl_source_index_folder_list(src, path, err);
}

const sl_format sl_format_folder = {
    .kind = SL_FORMAT_FOLDER,
    .name = "folder",
    .title = "image folders",
    .what = "an image folder",
    .options = 0,
    .entries =
        SL_ENTRIES_BIT(SL_ENTRIES_AUTO) | SL_ENTRIES_BIT(SL_ENTRIES_IMAGES),
    .claim = folder_claim,
    .index_many = folder_index,
};
