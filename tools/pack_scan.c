/* Listing `sluice pack`'s inputs: see tools/pack_scan.h. */
#include "tools/pack_scan.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/dir_seen.h"
#include "common/rng.h"
#include "sluice.h"
#include "tools/grow.h"

enum { MAX_DEPTH = 32, MAX_LIST_TARGETS = 1024 };

/* Adds path (its name starts at path + name_off) with its label and a copy
 * of in->target_width targets. */
static int add_item(sl_pack_inputs *in, const char *path, size_t name_off,
                    int32_t label, const float *targets) {
  sl_pack_item *items =
      sl_cli_grow(in->items, &in->cap, in->n + 1, sizeof *items, 1024);
  if (!items)
    return -1;
  in->items = items;
  sl_pack_item *it = &in->items[in->n];
  memset(it, 0, sizeof *it);
  if (!(it->path = strdup(path)))
    return -1;
  if (in->target_width > 0) {
    if (!(it->targets = malloc(in->target_width * sizeof *it->targets))) {
      free(it->path);
      return -1;
    }
    memcpy(it->targets, targets, in->target_width * sizeof *it->targets);
  }
  it->name_off = name_off;
  it->label = label;
  in->n++;
  return 0;
}

int sl_pack_notes_add(sl_pack_notes *ns, const char *path, const char *reason) {
  sl_pack_note *v = sl_cli_grow(ns->v, &ns->cap, ns->n + 1, sizeof *v, 16);
  if (!v)
    return -1;
  ns->v = v;
  char *p = strdup(path), *r = strdup(reason);
  if (!p || !r) {
    free(p);
    free(r);
    return -1;
  }
  ns->v[ns->n].path = p;
  ns->v[ns->n].reason = r;
  ns->n++;
  return 0;
}

void sl_pack_notes_free(sl_pack_notes *ns) {
  for (size_t i = 0; i < ns->n; i++) {
    free(ns->v[i].path);
    free(ns->v[i].reason);
  }
  free(ns->v);
  memset(ns, 0, sizeof *ns);
}

/* The folders from the root down to the one being walked. */
typedef struct dir_id {
  uint64_t dev, ino;
} dir_id;

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The visible entries of dir, sorted by bytes; NULL with errno set when the
 * folder cannot be opened or read, or memory runs out (never a partial
 * list: a sample missing from a pack would go unnoticed). */
static char **list_dir(const char *dir, size_t *n) {
  *n = 0;
  DIR *d = opendir(dir);
  if (!d)
    return NULL;
  size_t cap = 16, count = 0;
  char **names = malloc(cap * sizeof *names);
  int failed = names ? 0 : ENOMEM;
  while (!failed) {
    errno = 0;
    struct dirent *e = readdir(d);
    if (!e) {
      failed = errno; /* 0 at the end of the folder */
      break;
    }
    if (e->d_name[0] == '.')
      continue;
    char **nn = sl_cli_grow(names, &cap, count + 1, sizeof *nn, 16);
    if (!nn) {
      failed = ENOMEM;
      break;
    }
    names = nn;
    if (!(names[count] = strdup(e->d_name))) {
      failed = ENOMEM;
      break;
    }
    count++;
  }
  closedir(d);
  if (failed) {
    for (size_t i = 0; names && i < count; i++)
      free(names[i]);
    free(names);
    errno = failed;
    return NULL;
  }
  qsort(names, count, sizeof *names, by_name);
  *n = count;
  return names;
}

static void free_names(char **names, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

static int image_ext(const char *name) {
  static const char *const exts[] = {".jpg", ".jpeg", ".png",  ".bmp",  ".ppm",
                                     ".pgm", ".tif",  ".tiff", ".webp", ".gif"};
  const char *dot = strrchr(name, '.');
  if (!dot)
    return 0;
  for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
    if (strcasecmp(dot, exts[i]) == 0)
      return 1;
  return 0;
}

/* Whether the folder sb was entered before (a link to it, from elsewhere
 * than above it): each folder is entered once, so links cannot make the
 * walk exponential (two links a level to the next folder). Notes path as
 * skipped when so. 1: seen before, 0: not, -1: out of memory (msg says). */
static int seen_before(sl_pack_inputs *in, sl_dir_seen *seen, const char *path,
                       const struct stat *sb, char *msg, size_t msg_len) {
  int rc = sl_dir_seen_add(seen, (uint64_t)sb->st_dev, (uint64_t)sb->st_ino);
  if (rc == 0 &&
      sl_pack_notes_add(&in->skipped, path,
                        "a link to a folder already walked under another "
                        "name: each folder is walked once") != 0)
    rc = -1;
  if (rc < 0)
    snprintf(msg, msg_len, "out of memory");
  return rc < 0 ? -1 : rc == 0;
}

static int walk(sl_pack_inputs *in, const char *dir, size_t root_len,
                int32_t label, dir_id *above, sl_dir_seen *seen, int depth,
                char *msg, size_t msg_len) {
  size_t n;
  char **names = list_dir(dir, &n);
  if (!names) {
    snprintf(msg, msg_len, "%s: cannot list: %s", dir, strerror(errno));
    return -1;
  }
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    char path[4096];
    struct stat sb;
    if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >=
        (int)sizeof path) {
      snprintf(msg, msg_len, "%s/%s: path longer than %zu bytes", dir, names[i],
               sizeof path - 1);
      rc = -1;
      break;
    }
    if (stat(path, &sb) != 0) {
      /* An image we cannot stat (dangling link, no permission) is still
       * an input: its read fails and it is reported as skipped, so a pack
       * is never silently partial. */
      if (image_ext(names[i]) &&
          add_item(in, path, root_len + 1, label, NULL) != 0) {
        snprintf(msg, msg_len, "out of memory");
        rc = -1;
      }
      continue;
    }
    if (S_ISDIR(sb.st_mode)) {
      int loop = -1;
      for (int k = 0; k <= depth && loop < 0; k++)
        if (above[k].dev == (uint64_t)sb.st_dev &&
            above[k].ino == (uint64_t)sb.st_ino)
          loop = k;
      if (loop >= 0) {
        char why[200];
        int up = depth + 1 - loop;
        snprintf(why, sizeof why,
                 "a symlink loop: this is the folder %d level%s up (%s): not "
                 "entered",
                 up, up == 1 ? "" : "s",
                 loop == 0 ? "SRC"
                           : "a class folder "
                             "or below");
        if (sl_pack_notes_add(&in->skipped, path, why) != 0) {
          snprintf(msg, msg_len, "out of memory");
          rc = -1;
        }
        continue;
      }
      if (depth + 1 > MAX_DEPTH) {
        snprintf(msg, msg_len, "%s: folders nested deeper than %d", path,
                 MAX_DEPTH);
        rc = -1;
        break;
      }
      int again = seen_before(in, seen, path, &sb, msg, msg_len);
      if (again != 0) {
        rc = again < 0 ? -1 : 0;
        continue;
      }
      above[depth + 1] = (dir_id){(uint64_t)sb.st_dev, (uint64_t)sb.st_ino};
      rc =
          walk(in, path, root_len, label, above, seen, depth + 1, msg, msg_len);
    } else if (S_ISREG(sb.st_mode) && image_ext(names[i])) {
      if (add_item(in, path, root_len + 1, label, NULL) != 0) {
        snprintf(msg, msg_len, "out of memory");
        rc = -1;
      } else {
        in->items[in->n - 1].dev = (uint64_t)sb.st_dev;
        in->items[in->n - 1].ino = (uint64_t)sb.st_ino;
      }
    }
  }
  free_names(names, n);
  return rc;
}

/* Items with the same device and inode as an earlier one, in item order. */
typedef struct id_ref {
  uint64_t dev, ino;
  size_t i;
} id_ref;

static int by_id(const void *a, const void *b) {
  const id_ref *x = a, *y = b;
  if (x->dev != y->dev)
    return x->dev < y->dev ? -1 : 1;
  if (x->ino != y->ino)
    return x->ino < y->ino ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

static int find_twice(sl_pack_inputs *in) {
  if (in->n < 2)
    return 0;
  id_ref *r = malloc(in->n * sizeof *r);
  if (!r)
    return -1;
  for (size_t i = 0; i < in->n; i++)
    r[i] = (id_ref){in->items[i].dev, in->items[i].ino, i};
  qsort(r, in->n, sizeof *r, by_id);
  int rc = 0;
  for (size_t k = 1; rc == 0 && k < in->n; k++) {
    size_t first = k - 1;
    while (first > 0 && r[first - 1].dev == r[k].dev &&
           r[first - 1].ino == r[k].ino)
      first--;
    if (r[first].dev != r[k].dev || r[first].ino != r[k].ino)
      continue;
    const sl_pack_item *a = &in->items[r[first].i];
    char why[4200];
    snprintf(why, sizeof why, "the same file as %s (packed under both names)",
             a->path + a->name_off);
    rc = sl_pack_notes_add(&in->twice, in->items[r[k].i].path, why);
  }
  free(r);
  return rc;
}

static int scan_folder(sl_pack_inputs *in, const char *root, char *msg,
                       size_t msg_len) {
  struct stat rs;
  if (stat(root, &rs) != 0) {
    snprintf(msg, msg_len, "%s: %s", root, strerror(errno));
    return -1;
  }
  dir_id above[MAX_DEPTH + 1];
  above[0] = (dir_id){(uint64_t)rs.st_dev, (uint64_t)rs.st_ino};
  sl_dir_seen seen = {0};
  if (sl_dir_seen_add(&seen, (uint64_t)rs.st_dev, (uint64_t)rs.st_ino) < 0) {
    snprintf(msg, msg_len, "out of memory");
    return -1;
  }
  size_t n;
  char **names = list_dir(root, &n);
  if (!names) {
    snprintf(msg, msg_len, "%s: cannot list: %s", root, strerror(errno));
    sl_dir_seen_free(&seen);
    return -1;
  }
  in->classes = calloc(n ? n : 1, sizeof *in->classes);
  int rc = in->classes ? 0 : -1;
  if (rc)
    snprintf(msg, msg_len, "%s: out of memory for %zu classes", root, n);
  for (size_t i = 0; rc == 0 && i < n; i++) {
    char path[4096];
    struct stat sb;
    if (snprintf(path, sizeof path, "%s/%s", root, names[i]) >=
            (int)sizeof path ||
        stat(path, &sb) != 0)
      continue;
    if (!S_ISDIR(sb.st_mode)) { /* files beside the class folders */
      if (image_ext(names[i]) &&
          sl_pack_notes_add(
              &in->skipped, path,
              "an image directly in SRC, not in a class folder (labels "
              "come from the class folders)") != 0) {
        snprintf(msg, msg_len, "out of memory");
        rc = -1;
      }
      continue;
    }
    if (sb.st_dev == rs.st_dev && sb.st_ino == rs.st_ino) {
      if (sl_pack_notes_add(
              &in->skipped, path,
              "a symlink loop: this is SRC itself: not entered") != 0) {
        snprintf(msg, msg_len, "out of memory");
        rc = -1;
      }
      continue;
    }
    if (strlen(names[i]) > SL_CLASS_NAME_MAX || strpbrk(names[i], "\r\n")) {
      snprintf(msg, msg_len,
               "%s: class folder name longer than %u bytes or has a line "
               "break (the dataset stores one name per line)",
               path, SL_CLASS_NAME_MAX);
      rc = -1;
      break;
    }
    uint32_t label = in->nclasses;
    in->classes[in->nclasses++] = names[i];
    names[i] = NULL;
    int again = seen_before(in, &seen, path, &sb, msg, msg_len);
    if (again != 0) { /* a class folder that is another's: no images */
      rc = again < 0 ? -1 : 0;
      continue;
    }
    above[1] = (dir_id){(uint64_t)sb.st_dev, (uint64_t)sb.st_ino};
    rc = walk(in, path, strlen(root), (int32_t)label, above, &seen, 1, msg,
              msg_len);
  }
  free_names(names, n);
  sl_dir_seen_free(&seen);
  if (rc == 0 && find_twice(in) != 0) {
    snprintf(msg, msg_len, "out of memory");
    rc = -1;
  }
  if (rc == 0 && in->nclasses == 0) {
    snprintf(msg, msg_len,
             "%s: no class subfolders (expected SRC/CLASS/"
             "image.jpg, or give --list FILE)",
             root);
    rc = -1;
  }
  return rc;
}

/* Parses the numbers that end line s, right to left: the last words that
 * read as numbers are the label (an integer) and up to cap targets after
 * it. *path_end gets where the path ends (before the blanks ahead of the
 * label). Returns the number of targets, or -1 when the line has no
 * integer label, a target that is not a finite float32, or more than cap
 * targets. */
static int parse_tail(char *s, char **path_end, long *label, float *targets,
                      int cap) {
  char *words[MAX_LIST_TARGETS + 1];
  int n = 0;
  char *end = s + strlen(s);
  for (;;) {
    char *w = end;
    while (w > s && w[-1] != ' ' && w[-1] != '\t')
      w--;
    if (w == s || w == end)
      break; /* the first word is the path, whatever it looks like */
    char *stop;
    errno = 0;
    float v = strtof(w, &stop); /* targets are stored as float32 */
    if (stop != end || errno == ERANGE || !isfinite(v))
      break;
    if (n == cap + 1)
      return -1; /* more numbers than a label and cap targets */
    words[n++] = w;
    end = w;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
      end--;
    *end = '\0';
  }
  if (n == 0)
    return -1;
  char *stop;
  errno = 0;
  *label = strtol(words[n - 1], &stop, 10);
  if (*stop || errno == ERANGE)
    return -1;
  for (int j = 0; j < n - 1; j++)
    targets[j] = strtof(words[n - 2 - j], NULL);
  *path_end = end;
  return n - 1;
}

static int scan_list(sl_pack_inputs *in, const char *root, const char *list,
                     char *msg, size_t msg_len) {
  FILE *f = fopen(list, "r");
  if (!f) {
    snprintf(msg, msg_len, "%s: %s", list, strerror(errno));
    return -1;
  }
  char line[8192];
  long lineno = 0, max_label = -1;
  bool seen_line = false;
  int rc = 0;
  while (rc == 0 && fgets(line, sizeof line, f)) {
    lineno++;
    size_t len = strlen(line);
    if (len == sizeof line - 1 && line[len - 1] != '\n') {
      snprintf(msg, msg_len, "%s:%ld: line too long", list, lineno);
      rc = -1;
      break;
    }
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
                   line[len - 1] == ' ' || line[len - 1] == '\t'))
      line[--len] = '\0';
    char *s = line;
    while (*s == ' ' || *s == '\t')
      s++;
    if (!*s || *s == '#')
      continue;
    float targets[MAX_LIST_TARGETS];
    char *path_end;
    long label;
    int k = parse_tail(s, &path_end, &label, targets, MAX_LIST_TARGETS);
    if (k < 0 || label < 0 || label >= (long)SL_CLASSES_MAX) {
      snprintf(msg, msg_len,
               "%s:%ld: expected 'relative/path LABEL [TARGET...]' with "
               "LABEL an integer in 0..%u and at most %d targets",
               list, lineno, SL_CLASSES_MAX - 1, MAX_LIST_TARGETS);
      rc = -1;
      break;
    }
    if (in->n == 0 && !seen_line)
      in->target_width = (uint32_t)k;
    seen_line = true;
    if ((uint32_t)k != in->target_width) {
      snprintf(msg, msg_len,
               "%s:%ld: %d targets after the label, but the first line has "
               "%" PRIu32 " (every line needs the same number)",
               list, lineno, k, in->target_width);
      rc = -1;
      break;
    }
    *path_end = '\0';
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", root, s) >= (int)sizeof path) {
      snprintf(msg, msg_len, "%s:%ld: path too long", list, lineno);
      rc = -1;
    } else if (add_item(in, path, strlen(root) + 1, (int32_t)label, targets) !=
               0) {
      snprintf(msg, msg_len, "out of memory");
      rc = -1;
    }
    if (label > max_label)
      max_label = label;
  }
  if (rc == 0 && ferror(f)) {
    snprintf(msg, msg_len, "%s: read error", list);
    rc = -1;
  }
  fclose(f);
  if (rc == 0 && max_label >= 0) {
    in->classes = calloc((size_t)max_label + 1, sizeof *in->classes);
    for (long c = 0; in->classes && c <= max_label; c++) {
      char name[24];
      snprintf(name, sizeof name, "%ld", c);
      in->classes[c] = strdup(name);
      if (!in->classes[c])
        rc = -1;
    }
    if (!in->classes)
      rc = -1;
    else
      in->nclasses = (uint32_t)max_label + 1;
    if (rc)
      snprintf(msg, msg_len, "out of memory");
  }
  return rc;
}

int sl_pack_scan(sl_pack_inputs *in, const char *root, const char *list,
                 char *msg, size_t msg_len) {
  memset(in, 0, sizeof *in);
  return list ? scan_list(in, root, list, msg, msg_len)
              : scan_folder(in, root, msg, msg_len);
}

void sl_pack_shuffle(sl_pack_inputs *in, uint64_t seed) {
  sl_rng r = sl_rng_for(seed, 0x7061636bu /* "pack" */, 0);
  for (size_t i = in->n; i > 1; i--) {
    size_t j = (size_t)sl_rng_below(&r, i);
    sl_pack_item t = in->items[i - 1];
    in->items[i - 1] = in->items[j];
    in->items[j] = t;
  }
}

void sl_pack_inputs_free(sl_pack_inputs *in) {
  for (size_t i = 0; i < in->n; i++) {
    free(in->items[i].path);
    free(in->items[i].targets);
    free(in->items[i].boxes);
  }
  free(in->items);
  for (uint32_t c = 0; c < in->nclasses; c++)
    free(in->classes[c]);
  free(in->classes);
  sl_pack_notes_free(&in->skipped);
  sl_pack_notes_free(&in->twice);
  memset(in, 0, sizeof *in);
}

int sl_pack_inputs_add(sl_pack_inputs *in, const char *path, size_t name_off,
                       int32_t label, const float *targets) {
  return add_item(in, path, name_off, label, targets);
}
