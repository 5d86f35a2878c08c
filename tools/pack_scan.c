/* Listing `sluice pack`'s inputs: see tools/pack_scan.h. */
#include "tools/pack_scan.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/rng.h"
#include "formats/layout.h"

enum { MAX_DEPTH = 32 };

static int add_item(sl_pack_inputs *in, const char *path, int32_t label) {
  if (in->n == in->cap) {
    size_t cap = in->cap ? 2 * in->cap : 1024;
    sl_pack_item *it = realloc(in->items, cap * sizeof *it);
    if (!it)
      return -1;
    in->items = it;
    in->cap = cap;
  }
  if (!(in->items[in->n].path = strdup(path)))
    return -1;
  in->items[in->n++].label = label;
  return 0;
}

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
    if (count == cap) {
      char **nn = realloc(names, 2 * cap * sizeof *nn);
      if (!nn) {
        failed = ENOMEM;
        break;
      }
      names = nn;
      cap *= 2;
    }
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

static int walk(sl_pack_inputs *in, const char *dir, int32_t label, int depth,
                char *msg, size_t msg_len) {
  if (depth > MAX_DEPTH) {
    snprintf(msg, msg_len, "%s: folders nested deeper than %d", dir, MAX_DEPTH);
    return -1;
  }
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
      if (image_ext(names[i]) && add_item(in, path, label) != 0) {
        snprintf(msg, msg_len, "out of memory");
        rc = -1;
      }
      continue;
    }
    if (S_ISDIR(sb.st_mode))
      rc = walk(in, path, label, depth + 1, msg, msg_len);
    else if (S_ISREG(sb.st_mode) && image_ext(names[i]) &&
             add_item(in, path, label) != 0) {
      snprintf(msg, msg_len, "out of memory");
      rc = -1;
    }
  }
  free_names(names, n);
  return rc;
}

static int scan_folder(sl_pack_inputs *in, const char *root, char *msg,
                       size_t msg_len) {
  size_t n;
  char **names = list_dir(root, &n);
  if (!names) {
    snprintf(msg, msg_len, "%s: cannot list: %s", root, strerror(errno));
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
        stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
      continue; /* files beside the class folders are not samples */
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
    rc = walk(in, path, (int32_t)label, 1, msg, msg_len);
  }
  free_names(names, n);
  if (rc == 0 && in->nclasses == 0) {
    snprintf(msg, msg_len,
             "%s: no class subfolders (expected SRC/CLASS/"
             "image.jpg, or give --list FILE)",
             root);
    rc = -1;
  }
  return rc;
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
    char *sp = strrchr(s, ' '), *tab = strrchr(s, '\t');
    if (tab > sp)
      sp = tab;
    char *end = NULL;
    long label = sp ? strtol(sp + 1, &end, 10) : -1;
    if (!sp || end == sp + 1 || *end || label < 0 || label >= SL_CLASSES_MAX) {
      snprintf(msg, msg_len,
               "%s:%ld: expected 'relative/path LABEL' with "
               "LABEL in 0..%u",
               list, lineno, SL_CLASSES_MAX - 1);
      rc = -1;
      break;
    }
    while (sp > s && (sp[-1] == ' ' || sp[-1] == '\t'))
      sp--;
    *sp = '\0';
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", root, s) >= (int)sizeof path) {
      snprintf(msg, msg_len, "%s:%ld: path too long", list, lineno);
      rc = -1;
    } else if (add_item(in, path, (int32_t)label) != 0) {
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
  for (size_t i = 0; i < in->n; i++)
    free(in->items[i].path);
  free(in->items);
  for (uint32_t c = 0; c < in->nclasses; c++)
    free(in->classes[c]);
  free(in->classes);
  memset(in, 0, sizeof *in);
}
