/* Where `sluice pack` writes: one file, or (--shards N) a folder of N
 * shards and their index (tools/pack_out.h). */
#include "tools/pack_out.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sl_pack_out {
  const char *out;
  sl_writer_options wo;
  const char *const *classes;
  uint32_t nclasses;
  uint32_t shards; /* 0: one file */
  size_t items;
  uint32_t k;   /* the shard being written */
  sl_writer *w; /* its writer */
  uint32_t committed;
  char path[PATH_MAX];
};

static const char *ext_of(const char *fmt) {
  return strcmp(fmt, "hdf5") == 0 ? "h5" : "lmdb";
}

static int shard_path(const sl_pack_out *o, uint32_t k, char *buf, size_t cap) {
  return snprintf(buf, cap, "%s/part-%05" PRIu32 ".%s", o->out, k,
                  ext_of(o->wo.format)) < (int)cap
             ? 0
             : -1;
}

/* The first item of shard k: items are cut into runs of equal size (the
 * first ones one item longer), the same for any number of threads. */
static size_t shard_first(const sl_pack_out *o, uint32_t k) {
  return (size_t)((unsigned __int128)o->items * k / o->shards);
}

static int open_writer(sl_pack_out *o, char *msg, size_t cap) {
  const char *path = o->out;
  if (o->shards) {
    if (shard_path(o, o->k, o->path, sizeof o->path) != 0) {
      snprintf(msg, cap, "%s: path too long", o->out);
      return -1;
    }
    path = o->path;
  }
  if (sl_writer_create(&o->w, path, &o->wo) != SL_OK) {
    snprintf(msg, cap, "%s", sl_writer_errmsg(o->w));
    sl_writer_destroy(o->w);
    o->w = NULL;
    return -1;
  }
  for (uint32_t c = 0; c < o->nclasses; c++)
    if (sl_writer_set_class_name(o->w, c, o->classes[c]) != SL_OK) {
      snprintf(msg, cap, "%s", sl_writer_errmsg(o->w));
      return -1;
    }
  return 0;
}

static int commit_writer(sl_pack_out *o, char *msg, size_t cap) {
  if (sl_writer_commit(o->w) != SL_OK) {
    snprintf(msg, cap, "%s", sl_writer_errmsg(o->w));
    return -1;
  }
  sl_writer_destroy(o->w);
  o->w = NULL;
  o->committed++;
  return 0;
}

/* A folder that holds anything is refused without --force (its files would
 * join the set); with it, an earlier pack's shards and index go, so that
 * none of them is indexed with the new ones. */
static bool earlier_pack(const char *n) {
  unsigned k;
  char ext[8], rest;
  return !strcmp(n, "sluice.index") ||
         (sscanf(n, "part-%5u.%7[a-z0-9]%c", &k, ext, &rest) == 2 &&
          (!strcmp(ext, "lmdb") || !strcmp(ext, "h5")));
}

/* One pass over the folder: with remove false, fails on anything that may
 * not go; with remove true, removes an earlier pack's files. */
static int walk_folder(const sl_pack_out *o, bool remove, char *msg,
                       size_t cap) {
  DIR *d = opendir(o->out);
  if (!d) {
    snprintf(msg, cap, "%s: %s", o->out, strerror(errno));
    return -1;
  }
  int rc = 0;
  struct dirent *e;
  while (rc == 0 && (errno = 0, e = readdir(d)) != NULL) {
    const char *n = e->d_name;
    if (!strcmp(n, ".") || !strcmp(n, ".."))
      continue;
    bool ours = earlier_pack(n);
    if (!remove && (!o->wo.replace || !ours)) {
      snprintf(msg, cap,
               "%s: the folder holds %s%s (give an empty or new folder%s)",
               o->out, n, ours ? " from an earlier pack" : "",
               ours ? ", or --force to replace that pack" : "");
      rc = -1;
    } else if (remove && unlinkat(dirfd(d), n, 0) != 0) {
      snprintf(msg, cap, "%s/%s: %s", o->out, n, strerror(errno));
      rc = -1;
    }
  }
  if (rc == 0 && errno) {
    snprintf(msg, cap, "%s: readdir: %s", o->out, strerror(errno));
    rc = -1;
  }
  closedir(d);
  return rc;
}

/* A folder that holds anything is refused without --force (its files would
 * join the set); with it, an earlier pack's shards and index go, so that
 * none of them is indexed with the new ones: checked whole first, so that
 * a refused folder loses nothing. */
static int clear_folder(const sl_pack_out *o, char *msg, size_t cap) {
  return walk_folder(o, false, msg, cap) == 0 ? walk_folder(o, true, msg, cap)
                                              : -1;
}

int sl_pack_out_open(sl_pack_out **out, const char *path, uint32_t shards,
                     size_t items, const sl_writer_options *wo,
                     const char *const *classes, uint32_t nclasses, char *msg,
                     size_t cap) {
  *out = NULL;
  sl_pack_out *o = calloc(1, sizeof *o);
  if (!o) {
    snprintf(msg, cap, "out of memory");
    return -1;
  }
  *o = (sl_pack_out){.out = path,
                     .wo = *wo,
                     .classes = classes,
                     .nclasses = nclasses,
                     .shards = shards,
                     .items = items};
  if (shards) {
    struct stat sb;
    if (mkdir(path, 0777) != 0 &&
        !(errno == EEXIST && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))) {
      snprintf(msg, cap, "%s: cannot make the folder of shards: %s", path,
               errno == EEXIST ? "a file of that name exists"
                               : strerror(errno));
      free(o);
      return -1;
    }
    if (clear_folder(o, msg, cap) != 0) {
      free(o);
      return -1;
    }
  }
  *out = o;
  return open_writer(o, msg, cap);
}

sl_writer *sl_pack_out_writer(sl_pack_out *o, size_t item, char *msg,
                              size_t cap) {
  while (o->shards && o->k + 1 < o->shards &&
         item >= shard_first(o, o->k + 1)) {
    if (commit_writer(o, msg, cap) != 0)
      return NULL;
    o->k++;
    if (open_writer(o, msg, cap) != 0)
      return NULL;
  }
  return o->w;
}

int sl_pack_out_commit(sl_pack_out *o, char *msg, size_t cap) {
  /* Shards past the last item (a run of skipped images) exist, empty: the
   * set holds the N shards asked for. */
  if (!sl_pack_out_writer(o, o->items, msg, cap) ||
      commit_writer(o, msg, cap) != 0)
    return -1;
  if (!o->shards)
    return 0;
  sl_index_report r;
  if (sl_dataset_index(o->out, &r, msg, cap) != SL_OK)
    return -1;
  return 0;
}

void sl_pack_out_close(sl_pack_out *o, bool done) {
  if (!o)
    return;
  sl_writer_destroy(o->w); /* an uncommitted shard leaves nothing */
  /* Failed or stopped: the shards committed so far go too, so that
   * nothing but a whole set is left (no index was written). */
  for (uint32_t k = 0; !done && k < o->committed; k++) {
    char p[PATH_MAX];
    if (shard_path(o, k, p, sizeof p) == 0)
      (void)unlink(p);
  }
  free(o);
}
