/* libFuzzer target: the image folder walk (formats/files/source_folder.c)
 * and its per-file scan (folder_scan.c), on a directory tree the harness
 * builds from the input under $TMPDIR and removes after each run: class
 * folders, nested folders (past the walk's depth limit too), files with
 * image extensions or none holding a small JPEG, a PNG, a cut or altered
 * one or other bytes, symlinks to folders and files, to "." and "..", to
 * themselves and to nothing, FIFOs, folders named like images, and names
 * of any bytes but '/' and NUL, up to NAME_MAX. Links point inside the
 * tree only (a link out of it would walk the machine's files). Seeds in
 * fuzz/corpus_folder.
 *
 * Byte 0 picks the open: bit 0 pread or mmap, bit 1 skip_bad_files
 * (loader.on_error = skip), bit 2 dataset.format = auto (every format's
 * claim looks at the folder) or folder, bit 3 verify mode. Then ops, one
 * byte each plus its arguments, until the input ends (see build()).
 *
 * Checks: a refusal says why and hands out nothing; an opened folder's
 * classes have names, each sample's label is a class, and each sample
 * reads back at its indexed length (or, damaged in verify mode, refuses
 * to) and has a name. Build and run: fuzz/run.sh. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/core/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t k_jpeg[] = {
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01,
    0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xdb, 0x00, 0x43,
    0x00, 0x06, 0x04, 0x04, 0x05, 0x04, 0x04, 0x06, 0x05, 0x05, 0x05, 0x06,
    0x06, 0x06, 0x07, 0x09, 0x0e, 0x09, 0x09, 0x08, 0x08, 0x09, 0x12, 0x0d,
    0x0d, 0x0a, 0x0e, 0x15, 0x12, 0x16, 0x16, 0x15, 0x12, 0x14, 0x14, 0x17,
    0x1a, 0x21, 0x1c, 0x17, 0x18, 0x1f, 0x19, 0x14, 0x14, 0x1d, 0x27, 0x1d,
    0x1f, 0x22, 0x23, 0x25, 0x25, 0x25, 0x16, 0x1c, 0x29, 0x2c, 0x28, 0x24,
    0x2b, 0x21, 0x24, 0x25, 0x24, 0xff, 0xc2, 0x00, 0x0b, 0x08, 0x00, 0x04,
    0x00, 0x03, 0x01, 0x01, 0x11, 0x00, 0xff, 0xc4, 0x00, 0x14, 0x00, 0x01,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x03, 0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00,
    0x00, 0x01, 0x2f, 0xff, 0xc4, 0x00, 0x15, 0x10, 0x01, 0x01, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x02, 0x21, 0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x01, 0x05, 0x02,
    0x71, 0x7f, 0xff, 0xc4, 0x00, 0x15, 0x10, 0x01, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x00, 0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x06, 0x3f, 0x02, 0x4b,
    0xff, 0xc4, 0x00, 0x17, 0x10, 0x00, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x11,
    0x31, 0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x01, 0x3f, 0x21, 0x69,
    0x98, 0x9c, 0x3f, 0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x00,
    0x10, 0x7f, 0xff, 0xc4, 0x00, 0x17, 0x10, 0x00, 0x03, 0x01, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x11, 0x41, 0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x01, 0x3f,
    0x10, 0x95, 0xd5, 0x49, 0x56, 0x1f, 0xff, 0xd9};

static const uint8_t k_png[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00,
    0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
    0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xfd, 0xd4, 0x9a, 0x73,
    0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63,
    0x10, 0x50, 0x30, 0x00, 0x22, 0x06, 0x08, 0x05, 0x00, 0x0a, 0x0e,
    0x01, 0x81, 0x56, 0x33, 0xee, 0xf3, 0x00, 0x00, 0x00, 0x00, 0x49,
    0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};

/* The extensions a file op may give its name. */
static const char *const k_exts[] = {".jpg", ".JPEG", ".png", ".webp",
                                     ".bmp", ".txt",  "",     ".jpg.tmp"};

enum { MAX_NODES = 48, MAX_OPS = 96 };

typedef struct input {
  const uint8_t *p;
  size_t n;
} input;

static int take(input *in) {
  if (in->n == 0)
    return -1;
  in->n--;
  return *in->p++;
}

/* The tree: folders and files by their path under the root ("" is the
 * root), and where the next op works. */
typedef struct tree {
  char base[PATH_MAX]; /* $TMPDIR/fuzz_folder.PID: holds only root/ */
  char dirs[MAX_NODES][PATH_MAX];
  int depth[MAX_NODES];
  int ndirs;
  char files[MAX_NODES][PATH_MAX];
  int nfiles;
  int cwd; /* index into dirs */
} tree;

/* A name from the input: 1..15 bytes, or 200..255 with the top bit of
 * the length byte; '/' and NUL become '_', "." and ".." get a prefix.
 * ext (may be "") is appended within NAME_MAX. */
static void take_name(input *in, const char *ext, char *out) {
  int l = take(in);
  if (l < 0)
    l = 1;
  size_t len = l & 0x80 ? 200 + (size_t)(l & 0x3f) : 1 + (size_t)(l % 15);
  size_t room = NAME_MAX - strlen(ext);
  if (len > room)
    len = room;
  for (size_t i = 0; i < len; i++) {
    int c = take(in);
    if (c < 0) /* the input ran out: a repeated letter */
      c = 'a' + (int)(i % 26);
    out[i] = c == '/' || c == 0 ? '_' : (char)c;
  }
  out[len] = '\0';
  if (!strcmp(out, ".") || !strcmp(out, ".."))
    out[0] = 'd';
  strcat(out, ext);
}

/* The path of node rel (a path under root) on disk. */
static int on_disk(const tree *t, const char *rel, char *out) {
  int n =
      snprintf(out, PATH_MAX, "%s/root%s%s", t->base, rel[0] ? "/" : "", rel);
  return n > 0 && n < PATH_MAX ? 0 : -1;
}

/* rel: the current folder's path joined with name. */
static int child(const tree *t, const char *name, char *rel) {
  const char *d = t->dirs[t->cwd];
  int n = snprintf(rel, PATH_MAX, "%s%s%s", d, d[0] ? "/" : "", name);
  return n > 0 && n < PATH_MAX - 64 ? 0 : -1;
}

static void add_dir(tree *t, const char *rel, int depth) {
  if (t->ndirs < MAX_NODES) {
    snprintf(t->dirs[t->ndirs], PATH_MAX, "%s", rel);
    t->depth[t->ndirs++] = depth;
  }
}

static void add_file(tree *t, const char *rel) {
  if (t->nfiles < MAX_NODES)
    snprintf(t->files[t->nfiles++], PATH_MAX, "%s", rel);
}

/* The bytes of a file op: a template whole, cut short or with one byte
 * changed, or bytes from the input. */
static void write_content(input *in, const char *path, int kind) {
  const uint8_t *tp = kind & 1 ? k_png : k_jpeg;
  size_t tn = kind & 1 ? sizeof k_png : sizeof k_jpeg;
  uint8_t buf[sizeof k_jpeg > sizeof k_png ? sizeof k_jpeg : sizeof k_png];
  memcpy(buf, tp, tn);
  const uint8_t *p = buf;
  size_t n = tn;
  int how = take(in);
  if (how >= 0 && how % 4 == 1) { /* cut */
    int at = take(in);
    n = at < 0 ? 0 : (size_t)at * tn / 256;
  } else if (how >= 0 && how % 4 == 2) { /* one byte changed */
    int at = take(in), v = take(in);
    if (at >= 0 && v >= 0)
      buf[(size_t)at * tn / 256] = (uint8_t)v;
  } else if (how >= 0 && how % 4 == 3) { /* from the input */
    int len = take(in);
    n = len < 0 ? 0 : (size_t)len;
    if (n > in->n)
      n = in->n;
    p = in->p;
    in->p += n;
    in->n -= n;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  if (n && write(fd, p, n) != (ssize_t)n)
    (void)0; /* a short file is as good an input */
  close(fd);
}

/* The target of a link made in the current folder, relative to it and
 * inside the tree: a folder or a file of the tree (through ".." to the
 * root, then down), ".", "..", a name that is not there, or the link
 * itself. */
static void link_target(tree *t, input *in, const char *self, char *out) {
  int k = take(in), which = take(in);
  if (k < 0)
    k = 0;
  if (which < 0)
    which = 0;
  int depth = t->depth[t->cwd];
  char up[PATH_MAX] = "";
  for (int i = 0; i < depth && strlen(up) + 4 < 2048; i++)
    strcat(up, "../");
  switch (k % 6) {
  case 0:
    snprintf(out, PATH_MAX, "%s%s", up[0] ? up : "./",
             t->dirs[which % t->ndirs]);
    break;
  case 1:
    if (t->nfiles) {
      snprintf(out, PATH_MAX, "%s%s", up, t->files[which % t->nfiles]);
      break;
    }
    /* fall through: no file yet */
  case 2:
    snprintf(out, PATH_MAX, ".");
    break;
  case 3:
    snprintf(out, PATH_MAX, "%s", depth ? ".." : ".");
    break;
  case 4:
    snprintf(out, PATH_MAX, "nowhere-%d", which);
    break;
  default:
    snprintf(out, PATH_MAX, "%s", self);
    break;
  }
}

/* Ops (the byte's value mod 10):
 *   0 a folder here        1 go into a folder of the tree (next byte)
 *   2 go up                3 a JPEG file here, 4 a PNG file (extension
 *   5 a file of other bytes  and content from the following bytes)
 *   6 a link here          7 a chain of nested folders (next byte: how
 *   8 a FIFO here            deep, up to 40), and go into the deepest
 *   9 an empty file, or a folder named like an image
 * An op that fails (a name too long for the path, one taken) does
 * nothing: the tree is what the file system made of the ops. */
static void build(tree *t, input *in) {
  char name[NAME_MAX + 1], rel[PATH_MAX], path[PATH_MAX];
  for (int ops = 0; ops < MAX_OPS; ops++) {
    int op = take(in);
    if (op < 0)
      return;
    switch (op % 10) {
    case 0:
      take_name(in, "", name);
      if (child(t, name, rel) == 0 && on_disk(t, rel, path) == 0 &&
          mkdir(path, 0755) == 0)
        add_dir(t, rel, t->depth[t->cwd] + 1);
      break;
    case 1: {
      int which = take(in);
      t->cwd = which < 0 ? 0 : which % t->ndirs;
      break;
    }
    case 2: { /* the parent: the folder whose path is ours cut at its '/' */
      const char *d = t->dirs[t->cwd];
      const char *slash = strrchr(d, '/');
      size_t plen = slash ? (size_t)(slash - d) : 0;
      for (int i = 0; i < t->ndirs; i++)
        if (strlen(t->dirs[i]) == plen && !strncmp(t->dirs[i], d, plen)) {
          t->cwd = i;
          break;
        }
      break;
    }
    case 3:
    case 4:
    case 5: {
      int e = take(in);
      take_name(in, k_exts[(e < 0 ? 0 : e) % 8], name);
      if (child(t, name, rel) == 0 && on_disk(t, rel, path) == 0) {
        write_content(in, path, op % 10 == 4);
        add_file(t, rel);
      }
      break;
    }
    case 6: {
      int e = take(in);
      take_name(in, k_exts[(e < 0 ? 0 : e) % 8], name);
      char target[PATH_MAX];
      link_target(t, in, name, target);
      if (child(t, name, rel) == 0 && on_disk(t, rel, path) == 0 &&
          symlink(target, path) == 0)
        add_file(t, rel); /* a link to a folder is walked as one */
      break;
    }
    case 7: {
      int k = take(in);
      k = k < 0 ? 1 : k % 41;
      for (int i = 0; i < k; i++) {
        snprintf(name, sizeof name, "n%d", i);
        if (child(t, name, rel) != 0 || on_disk(t, rel, path) != 0 ||
            mkdir(path, 0755) != 0 || t->ndirs == MAX_NODES)
          break;
        add_dir(t, rel, t->depth[t->cwd] + 1);
        t->cwd = t->ndirs - 1;
      }
      break;
    }
    case 8:
      take_name(in, ".jpg", name);
      if (child(t, name, rel) == 0 && on_disk(t, rel, path) == 0)
        (void)mkfifo(path, 0644);
      break;
    default: {
      int e = take(in);
      take_name(in, k_exts[(e < 0 ? 0 : e) % 8], name);
      if (child(t, name, rel) != 0 || on_disk(t, rel, path) != 0)
        break;
      if (e >= 0 && e & 0x80) {
        if (mkdir(path, 0755) == 0)
          add_dir(t, rel, t->depth[t->cwd] + 1);
      } else {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0)
          close(fd);
      }
      break;
    }
    }
  }
}

static void on_bad(void *user, uint64_t index, const char *reason) {
  (void)index;
  if (!reason || !reason[0])
    abort(); /* a bad sample says why */
  ++*(uint64_t *)user;
}

static void check(const char *root, int how) {
  sl_source_opts o = {.fmt = how & 4 ? SL_FORMAT_AUTO : SL_FORMAT_FOLDER,
                      .skip_bad_files = (how & 2) != 0};
  sl_source_mode mode = how & 1 ? SL_SOURCE_PREAD : SL_SOURCE_MMAP;
  sl_source *src = NULL;
  sl_err err = {0};
  uint64_t bad = 0;
  sl_status st = how & 8 ? sl_source_open_verify_opts(&src, root, &o, mode,
                                                      on_bad, &bad, &err)
                         : sl_source_open_opts(&src, root, &o, mode, &err);
  if (getenv("FUZZ_VERBOSE")) /* for seeds: what the tree made */
    fprintf(stderr, "%s %s: %llu samples\n", sl_status_name(st),
            st == SL_OK ? "" : err.msg,
            st == SL_OK ? (unsigned long long)sl_source_count(src) : 0ull);
  if (st != SL_OK) {
    if (err.msg[0] == '\0' || src)
      abort(); /* a refusal says why and hands out nothing */
    return;
  }
  if (strcmp(sl_source_format_name(src), "folder") != 0) {
    sl_source_close(src); /* another format claimed it (auto) */
    return;
  }
  uint64_t n = sl_source_count(src);
  uint32_t classes = sl_source_class_count(src);
  for (uint32_t c = 0; c < classes; c++)
    if (!sl_source_class_name(src, c))
      abort();
  size_t cap = sl_source_max_length(src) + 1;
  uint8_t *buf = malloc(cap);
  char name[PATH_MAX + 1]; /* a folder's sample name is its path */
  if (!buf)
    abort();
  for (uint64_t i = 0; i < n; i++) {
    const sl_sample_info *e = sl_source_info(src, i);
    if (e->codec != 0 && (e->label < 0 || (uint32_t)e->label >= classes))
      abort(); /* a sample's label is its class folder's */
    const uint8_t *d = NULL;
    size_t len = 0;
    st = sl_source_read(src, i, buf, cap, &d, &len, &err);
    if (e->codec != 0 && (st != SL_OK || len != e->length))
      abort(); /* the tree does not change between open and read */
    if (sl_source_name(src, i, name, sizeof name, &err) != SL_OK)
      abort();
  }
  free(buf);
  sl_source_close(src);
}

static int remove_one(const char *path, const struct stat *sb, int flag,
                      struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  (void)remove(path);
  return 0;
}

/* Removes base and everything under it, links not followed. */
static void remove_tree(const char *base) {
  (void)nftw(base, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static tree t; /* ~400 KiB: off the stack */
  if (size == 0)
    return 0;
  const char *tmp = getenv("TMPDIR");
  snprintf(t.base, sizeof t.base, "%s/fuzz_folder.%ld",
           tmp && *tmp ? tmp : "/tmp", (long)getpid());
  remove_tree(t.base);
  char root[PATH_MAX];
  snprintf(root, sizeof root, "%s/root", t.base);
  if (mkdir(t.base, 0755) != 0 || mkdir(root, 0755) != 0)
    return 0;
  t.ndirs = t.nfiles = t.cwd = 0;
  add_dir(&t, "", 0);
  input in = {data + 1, size - 1};
  build(&t, &in);
  check(root, data[0]);
  remove_tree(t.base);
  return 0;
}
