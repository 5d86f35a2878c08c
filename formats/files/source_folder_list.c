/* An image folder read through a list file (formats/files/image_list.h):
 * `PATH LABEL` lines as torchvision-style and Caffe ImageData lists have
 * them, or MXNet im2rec's `.lst` (INDEX<TAB>LABEL...<TAB>PATH). Paths are
 * relative to the list's folder (an absolute one is kept); sample i is the
 * list's i-th image line, its label as listed (no class names). A path
 * must resolve (links followed) beneath the list's folder. Each file is
 * indexed as the directory form indexes it (its header read at open,
 * source_folder.c; once for lines naming one file) and opened per read.
 *
 * Memory: per sample what the directory form keeps (its path, a 24-byte
 * span, 8 bytes, its index entry; im2rec's K > 1 labels: 4·K bytes of
 * targets), and while opening 8 bytes a sample (its label and line
 * number), grown by doubling. The list is read a line at a time; a list of
 * more than 1 GiB is refused. */
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

#include "formats/files/image_list.h"

#define LIST_MAX_BYTES (1ull << 30)

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

bool sl_folder_list_like(const char *path) {
  struct stat sb;
  if (!(ends_with(path, ".txt") || ends_with(path, ".lst")) ||
      stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
    return false;
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  char line[PATH_MAX + 256], why[160];
  float t[64];
  bool like = false;
  while (fgets(line, sizeof line, f)) {
    sl_list_form form = SL_LIST_ANY;
    sl_list_line l;
    if (sl_list_parse_line(line, strlen(line), &form, &l, t, 64, why,
                           sizeof why))
      break;
    if (l.path_len == 0)
      continue; /* blank, comment */
    like = sl_list_image_name(l.path, l.path_len);
    break;
  }
  fclose(f);
  return like;
}

/* A listed file's identity: lines naming one file share its scan. */
typedef struct file_id {
  uint64_t dev, ino, i;
} file_id;

typedef struct listed {
  int32_t *label;
  uint32_t *line;
  file_id *id;
  float *targets; /* n × width */
  uint64_t n, cap;
  uint32_t width;
  bool width_known;
} listed;

static int grow(listed *ls) {
  if (ls->n < ls->cap)
    return 0;
  uint64_t cap = ls->cap ? ls->cap * 2 : 1024;
  int32_t *l = realloc(ls->label, (size_t)cap * sizeof *l);
  if (l)
    ls->label = l;
  uint32_t *n = realloc(ls->line, (size_t)cap * sizeof *n);
  if (n)
    ls->line = n;
  file_id *d = realloc(ls->id, (size_t)cap * sizeof *d);
  if (d)
    ls->id = d;
  float *t = ls->width
                 ? realloc(ls->targets, (size_t)cap * ls->width * sizeof *t)
                 : ls->targets;
  if (t)
    ls->targets = t;
  if (!l || !n || !d || (ls->width && !t))
    return -1;
  ls->cap = cap;
  return 0;
}

/* Whether rel (relative to root, the list's folder resolved, or absolute)
 * resolves, links followed, to a file beneath root: a list is not a way to
 * read (and have its size and first bytes reported) any other file. */
static bool beneath(const char *root, const char *rel) {
  char joined[PATH_MAX], real[PATH_MAX];
  if (rel[0] != '/') {
    if (snprintf(joined, sizeof joined, "%s/%s", root, rel) >=
        (int)sizeof joined)
      return false;
    rel = joined;
  }
  if (!realpath(rel, real))
    return false;
  size_t n = strlen(root);
  return strcmp(root, "/") == 0 ||
         (strncmp(real, root, n) == 0 && real[n] == '/');
}

static int cmp_id(const void *a, const void *b) {
  const file_id *x = a, *y = b;
  if (x->dev != y->dev)
    return x->dev < y->dev ? -1 : 1;
  if (x->ino != y->ino)
    return x->ino < y->ino ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

/* The list's lines into the file table (each file's size from its stat)
 * and ls. */
static sl_status read_list(sl_source *src, const char *path, FILE *f,
                           const char *root, listed *ls, sl_err *err) {
  char *line = NULL, *rel = malloc(PATH_MAX), why[200];
  size_t cap = 0;
  float *t = malloc(SL_TARGETS_MAX * sizeof *t);
  sl_list_form form = SL_LIST_ANY;
  uint64_t lineno = 0, bytes = 0;
  ssize_t n;
  sl_status st =
      rel && t ? SL_OK : sl_err_set(err, SL_ENOMEM, "%s: no memory", path);
  while (st == SL_OK && (n = getline(&line, &cap, f)) >= 0) {
    lineno++;
    bytes += (uint64_t)n;
    if (bytes > LIST_MAX_BYTES || lineno > UINT32_MAX) {
      st = sl_err_set(err, SL_ETOOBIG, "%s: a list of more than 1 GiB", path);
      break;
    }
    sl_list_line l;
    const char *bad = sl_list_parse_line(line, (size_t)n, &form, &l, t,
                                         SL_TARGETS_MAX, why, sizeof why);
    if (!bad && l.path_len == 0)
      continue;
    if (!bad && l.path_len >= PATH_MAX) {
      snprintf(why, sizeof why, "a path of %zu bytes", l.path_len);
      bad = why;
    }
    if (!bad && ls->width_known && l.ntargets != ls->width) {
      snprintf(why, sizeof why,
               "%" PRIu32 " labels where the first image line has %" PRIu32,
               l.ntargets ? l.ntargets : 1, ls->width ? ls->width : 1);
      bad = why;
    }
    if (bad) {
      st = sl_err_set(
          err, SL_EFORMAT, "%s: line %" PRIu64 ": %s (%s)", path, lineno, bad,
          form == SL_LIST_IM2REC ? "an im2rec .lst: INDEX<TAB>LABEL...<TAB>PATH"
                                 : "a list of PATH LABEL lines");
      break;
    }
    if (!ls->width_known) {
      ls->width_known = true;
      ls->width = l.ntargets;
    }
    memcpy(rel, l.path, l.path_len);
    rel[l.path_len] = '\0';
    struct stat sb;
    if (fstatat(src->dirfd, rel, &sb, 0) != 0) {
      st = sl_err_errno(err, SL_EIO, errno, "%s: line %" PRIu64 ": %s", path,
                        lineno, rel);
      break;
    }
    if (!beneath(root, rel)) {
      st = sl_err_set(err, SL_EFORMAT,
                      "%s: line %" PRIu64 ": %s is outside the list's folder "
                      "%s (a list names files beneath its folder)",
                      path, lineno, rel, root);
      break;
    }
    if (!S_ISREG(sb.st_mode)) {
      st = sl_err_set(err, SL_EFORMAT,
                      "%s: line %" PRIu64 ": %s is not a regular file", path,
                      lineno, rel);
      break;
    }
    if (grow(ls) != 0) {
      st = sl_err_set(err, SL_ENOMEM, "%s: the list of %" PRIu64 " images",
                      path, ls->n + 1);
      break;
    }
    ls->label[ls->n] = l.label;
    ls->line[ls->n] = (uint32_t)lineno;
    ls->id[ls->n] = (file_id){(uint64_t)sb.st_dev, (uint64_t)sb.st_ino, ls->n};
    if (ls->width)
      memcpy(ls->targets + ls->n * ls->width, t, ls->width * sizeof *t);
    ls->n++;
    st = sl_source_add_file(src, rel, -1, (uint64_t)sb.st_size, err);
  }
  if (st == SL_OK && ferror(f))
    st = sl_err_errno(err, SL_EIO, errno, "%s: read", path);
  if (st == SL_OK && ls->n == 0)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: a list without images (lines PATH LABEL, or im2rec's "
                    "INDEX<TAB>LABEL<TAB>PATH)",
                    path);
  free(line);
  free(rel);
  free(t);
  return st;
}

/* Sample i names the file sample j (< i, listed on line jl) was scanned
 * from: j's entry at i's span, without reading the file again (a list of
 * many lines naming one file whose header lies past the first 64 KiB would
 * read up to 16 MiB a line). */
static sl_status same_file(sl_source *src, uint64_t i, uint64_t j, uint32_t jl,
                           const char *where, sl_err *err) {
  sl_sample_info *e = &src->index[i];
  if (src->index[j].codec == 0) { /* verify: j was bad */
    char why[64];
    snprintf(why, sizeof why, "the file of line %" PRIu32 ", which is damaged",
             jl);
    return sl_source_bad_entry(src, i, where, why, err);
  }
  *e = src->index[j];
  e->offset = src->spans[i].base;
  e->name_len = 0; /* set once checked, as sl_folder_scan_file does */
  sl_status st = sl_source_check_entry(src, i, where, err);
  size_t nl = strlen(sl_source_file_path(src, (size_t)i));
  if (st == SL_OK && e->codec != 0)
    e->name_len = (uint16_t)(nl < UINT16_MAX ? nl : UINT16_MAX);
  return st;
}

sl_status sl_source_index_folder_list(sl_source *src, const char *path,
                                      sl_err *err) {
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  size_t dl = slash ? (size_t)(slash - path) : 0;
  if (dl >= sizeof dir)
    return sl_err_set(err, SL_EINVAL, "%s: path too long", path);
  memcpy(dir, slash ? path : ".", slash ? (dl ? dl : 1) : 1);
  dir[slash ? (dl ? dl : 1) : 1] = '\0';
  src->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (src->dirfd < 0)
    return sl_err_errno(err, SL_EIO, errno, "%s: its folder %s", path, dir);
  char root[PATH_MAX];
  if (!realpath(dir, root))
    return sl_err_errno(err, SL_EIO, errno, "%s: its folder %s", path, dir);
  FILE *f = fopen(path, "r");
  if (!f)
    return sl_err_errno(err, SL_EIO, errno, "%s", path);
  listed ls = {0};
  sl_status st = read_list(src, path, f, root, &ls, err);
  fclose(f);
  /* Lines naming one file (by device and inode) share the first's scan:
   * ls.id[k].i becomes, for line k's file, the first line naming it. */
  uint64_t *first = st == SL_OK ? malloc((ls.n ? ls.n : 1) * 8) : NULL;
  if (st == SL_OK && !first)
    st = sl_err_set(err, SL_ENOMEM, "%s: the list of %" PRIu64 " images", path,
                    ls.n);
  if (st == SL_OK) {
    qsort(ls.id, (size_t)ls.n, sizeof *ls.id, cmp_id);
    for (uint64_t k = 0; k < ls.n; k++)
      first[ls.id[k].i] = k > 0 && ls.id[k].dev == ls.id[k - 1].dev &&
                                  ls.id[k].ino == ls.id[k - 1].ino
                              ? first[ls.id[k - 1].i]
                              : ls.id[k].i;
  }
  if (st == SL_OK) {
    src->target_width = ls.width;
    st = sl_source_alloc_index(src, ls.n, err);
  }
  if (st == SL_OK) {
    sl_source_files_done(src);
    src->names_are_files = true;
    if (ls.width)
      memcpy(src->targets, ls.targets, (size_t)ls.n * ls.width * 4);
  }
  uint8_t *buf = st == SL_OK ? malloc(SL_FOLDER_HEAD_BYTES) : NULL;
  if (st == SL_OK && !buf)
    st = sl_err_set(err, SL_ENOMEM, "%s: header buffer", path);
  src->dropping = src->skip_bad_files;
  for (uint64_t i = 0; st == SL_OK && i < ls.n; i++) {
    char where[32];
    snprintf(where, sizeof where, "line %" PRIu32, ls.line[i]);
    src->file_first[i] = i;
    st = first[i] == i
             ? sl_folder_scan_file(src, i, buf, where, err)
             : same_file(src, i, first[i], ls.line[first[i]], where, err);
    if (st == SL_OK && src->index[i].codec != 0)
      src->index[i].label = ls.label[i];
  }
  if (st == SL_OK && src->left_out > 0)
    st = sl_source_drop_left_out(src, err);
  src->dropping = false;
  free(buf);
  free(first);
  free(ls.id);
  free(ls.label);
  free(ls.line);
  free(ls.targets);
  return st;
}
