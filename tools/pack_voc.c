/* `sluice pack --voc VOCDIR OUT`: Pascal VOC's Annotations/ID.xml files read
 * with libexpat (tools/pack_detect.h says what becomes what). */
#include <dirent.h>
#include <errno.h>
#include <expat.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/grow.h"
#include "tools/pack_detect.h"

static const char *const k_voc20[20] = {
    "aeroplane",   "bicycle", "bird",  "boat",      "bottle",
    "bus",         "car",     "cat",   "chair",     "cow",
    "diningtable", "dog",     "horse", "motorbike", "person",
    "pottedplant", "sheep",   "sofa",  "train",     "tvmonitor"};

/* One object as parsed: its class name (an index into the names seen),
 * box in VOC's 1-based pixels, difficult flag. */
typedef struct voc_obj {
  uint32_t name;
  double xmin, ymin, xmax, ymax;
  bool difficult;
} voc_obj;

/* What the SAX handlers build for one file. The element path is tracked
 * to depth 4 (annotation/object/bndbox/xmin); deeper elements (and an
 * object's <part>s) are skipped. Text is gathered only for the leaves
 * read (at most TEXT_MAX bytes: a number or a class name). */
enum { DEPTH_MAX = 8, TEXT_MAX = 256 };
typedef struct voc_parse {
  XML_Parser p;
  const char *file;
  int depth;
  char path[DEPTH_MAX][16]; /* names of the open elements (truncated) */
  char text[TEXT_MAX + 1];
  size_t text_len;
  bool text_long;
  /* the current object */
  bool in_object;
  unsigned long obj_line;
  char name[TEXT_MAX + 1];
  double v[4];   /* xmin ymin xmax ymax */
  unsigned have; /* bit k: v[k] seen; bit 4: name; bit 5: difficult */
  bool difficult;
  /* results */
  double width, height; /* <size>, 0: none */
  voc_obj *objs;
  size_t nobj, cap;
  char err[400]; /* first error ("" none) */
  /* class names seen so far, shared across files */
  struct name_set *names;
} voc_parse;

/* The class names seen, in order of first sight, with a hash of them: a
 * name is found in constant time, not by comparing it with every name
 * seen (quadratic in the names of a hostile file). */
typedef struct name_set {
  char **v;
  size_t n, cap;
  uint32_t *slot; /* 0: empty, else 1 + an index into v */
  size_t nslots;  /* 0 or a power of two, at least 2 * n */
} name_set;

static size_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603u; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211u;
  return (size_t)(h ^ (h >> 32));
}

/* Room for one more name in the hash; -1 when memory runs out. */
static int name_set_room(name_set *ns) {
  if (2 * (ns->n + 1) <= ns->nslots)
    return 0;
  size_t cap = ns->nslots ? 2 * ns->nslots : 64;
  uint32_t *t = calloc(cap, sizeof *t);
  if (!t)
    return -1;
  for (size_t i = 0; i < ns->n; i++) {
    size_t k = name_hash(ns->v[i]) & (cap - 1);
    while (t[k])
      k = (k + 1) & (cap - 1);
    t[k] = (uint32_t)(i + 1);
  }
  free(ns->slot);
  ns->slot = t;
  ns->nslots = cap;
  return 0;
}

static void name_set_free(name_set *ns) {
  for (size_t i = 0; i < ns->n; i++)
    free(ns->v[i]);
  free(ns->v);
  free(ns->slot);
  memset(ns, 0, sizeof *ns);
}

static void stop(voc_parse *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void stop(voc_parse *s, const char *fmt, ...) {
  if (s->err[0])
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->err, sizeof s->err, fmt, ap);
  va_end(ap);
  XML_StopParser(s->p, XML_FALSE);
}

/* Whether the open elements are exactly a/b/c... (NULL-terminated). */
static bool at_path(const voc_parse *s, const char *const *want) {
  int n = 0;
  while (want[n])
    n++;
  if (s->depth != n)
    return false;
  for (int i = 0; i < n; i++)
    if (strcmp(s->path[i], want[i]) != 0)
      return false;
  return true;
}

static void XMLCALL on_start(void *user, const XML_Char *el,
                             const XML_Char **attr) {
  (void)attr;
  voc_parse *s = user;
  if (s->depth < DEPTH_MAX)
    snprintf(s->path[s->depth], sizeof s->path[0], "%s", el);
  s->depth++;
  s->text_len = 0;
  s->text_long = false;
  static const char *const obj[] = {"annotation", "object", NULL};
  if (at_path(s, obj)) {
    s->in_object = true;
    s->obj_line = (unsigned long)XML_GetCurrentLineNumber(s->p);
    s->have = 0;
    s->difficult = false;
  }
}

static void XMLCALL on_text(void *user, const XML_Char *t, int len) {
  voc_parse *s = user;
  if (s->text_len + (size_t)len > TEXT_MAX) {
    s->text_long = true;
    return;
  }
  memcpy(s->text + s->text_len, t, (size_t)len);
  s->text_len += (size_t)len;
}

/* The gathered text, trimmed, as a finite number. */
static bool text_number(voc_parse *s, double *out) {
  s->text[s->text_len] = '\0';
  char *end;
  errno = 0;
  double d = strtod(s->text, &end);
  while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
    end++;
  if (s->text_long || end == s->text || *end || errno || !isfinite(d))
    return false;
  *out = d;
  return true;
}

static void text_trimmed(voc_parse *s, char *out, size_t cap) {
  s->text[s->text_len] = '\0';
  const char *a = s->text;
  while (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r')
    a++;
  size_t n = strlen(a);
  while (n && (a[n - 1] == ' ' || a[n - 1] == '\t' || a[n - 1] == '\n' ||
               a[n - 1] == '\r'))
    n--;
  snprintf(out, cap, "%.*s", (int)n, a);
}

/* The index of class name n among the names seen (added when new). */
static int name_index(voc_parse *s, const char *n, uint32_t *out) {
  name_set *ns = s->names;
  if (name_set_room(ns) != 0)
    return -1;
  size_t k = name_hash(n) & (ns->nslots - 1);
  for (; ns->slot[k]; k = (k + 1) & (ns->nslots - 1))
    if (!strcmp(ns->v[ns->slot[k] - 1], n)) {
      *out = ns->slot[k] - 1;
      return 0;
    }
  char **v = sl_cli_grow(ns->v, &ns->cap, ns->n + 1, sizeof *v, 32);
  if (!v)
    return -1;
  ns->v = v;
  if (!(v[ns->n] = strdup(n)))
    return -1;
  ns->slot[k] = (uint32_t)(ns->n + 1);
  *out = (uint32_t)ns->n++;
  return 0;
}

static void end_object(voc_parse *s) {
  s->in_object = false;
  if ((s->have & 0x1F) != 0x1F) {
    stop(s,
         "%s:%lu: an <object> without a <name> or a complete <bndbox> "
         "(xmin, ymin, xmax, ymax)",
         s->file, s->obj_line);
    return;
  }
  for (int k = 0; k < 4; k++)
    if (!isfinite((float)s->v[k]) || !isfinite((float)(s->v[k] - 1))) {
      stop(s, "%s:%lu: a <bndbox> coordinate is too large", s->file,
           s->obj_line);
      return;
    }
  if (s->v[0] > s->v[2] || s->v[1] > s->v[3]) {
    stop(s, "%s:%lu: <bndbox> with xmin > xmax or ymin > ymax", s->file,
         s->obj_line);
    return;
  }
  if (s->nobj == SL_BOXES_MAX) { /* checked as they come: the file may hold
                                   millions */
    stop(s, "%s:%lu: more than %d objects", s->file, s->obj_line, SL_BOXES_MAX);
    return;
  }
  voc_obj *o = sl_cli_grow(s->objs, &s->cap, s->nobj + 1, sizeof *o, 8);
  uint32_t ni;
  if (!o || name_index(s, s->name, &ni)) {
    if (o)
      s->objs = o;
    stop(s, "%s: no memory", s->file);
    return;
  }
  s->objs = o;
  o[s->nobj++] =
      (voc_obj){ni, s->v[0], s->v[1], s->v[2], s->v[3], s->difficult};
}

static void XMLCALL on_end(void *user, const XML_Char *el) {
  (void)el;
  voc_parse *s = user;
  static const char *const obj[] = {"annotation", "object", NULL};
  static const char *const name[] = {"annotation", "object", "name", NULL};
  static const char *const diff[] = {"annotation", "object", "difficult", NULL};
  static const char *const sw[] = {"annotation", "size", "width", NULL};
  static const char *const sh[] = {"annotation", "size", "height", NULL};
  static const char *const coord[4] = {"xmin", "ymin", "xmax", "ymax"};
  unsigned long line = (unsigned long)XML_GetCurrentLineNumber(s->p);
  double d = 0;
  if (at_path(s, obj)) {
    end_object(s);
  } else if (s->in_object && at_path(s, name)) {
    text_trimmed(s, s->name, sizeof s->name);
    if (!s->name[0] || s->text_long || strlen(s->name) > SL_CLASS_NAME_MAX)
      stop(s, "%s:%lu: <name> is empty or longer than %d bytes", s->file, line,
           SL_CLASS_NAME_MAX);
    s->have |= 1u << 4;
  } else if (s->in_object && at_path(s, diff)) {
    if (!text_number(s, &d) || (d != 0 && d != 1))
      stop(s, "%s:%lu: <difficult> is not 0 or 1", s->file, line);
    s->difficult = d == 1;
  } else if (s->in_object && s->depth == 4 &&
             !strcmp(s->path[0], "annotation") &&
             !strcmp(s->path[1], "object") && !strcmp(s->path[2], "bndbox")) {
    for (int k = 0; k < 4; k++)
      if (!strcmp(s->path[3], coord[k])) {
        if (!text_number(s, &s->v[k]))
          stop(s, "%s:%lu: <%s> is not a number", s->file, line, coord[k]);
        s->have |= 1u << k;
      }
  } else if (at_path(s, sw) || at_path(s, sh)) {
    if (!text_number(s, &d) || d < 0 || d > 65535 || d != floor(d))
      stop(s, "%s:%lu: <%s> is not a size of 0..65535", s->file, line,
           s->path[2]);
    else if (s->path[2][0] == 'w')
      s->width = d;
    else
      s->height = d;
  }
  s->depth--;
  s->text_len = 0;
}

/* Parses one annotation file into s (objs, size). Returns 0, or -1 with
 * the message in msg. */
static int parse_file(voc_parse *s, const char *path, char *msg, size_t cap) {
  size_t len;
  char *text = sl_pack_read_text(path, &len, msg, cap);
  if (!text)
    return -1;
  XML_Parser p = XML_ParserCreate(NULL);
  if (!p) {
    free(text);
    return sl_pack_failf(msg, cap, "%s: no memory for an XML parser", path);
  }
  s->p = p;
  s->file = path;
  XML_SetUserData(p, s);
  XML_SetElementHandler(p, on_start, on_end);
  XML_SetCharacterDataHandler(p, on_text);
  int rc = 0;
  if (len > (size_t)INT32_MAX) {
    rc = sl_pack_failf(msg, cap, "%s: larger than 2 GiB", path);
  } else if (XML_Parse(p, text, (int)len, XML_TRUE) == XML_STATUS_ERROR) {
    if (s->err[0])
      rc = sl_pack_failf(msg, cap, "%s", s->err);
    else
      rc = sl_pack_failf(msg, cap, "%s:%lu: not valid XML: %s", path,
                         (unsigned long)XML_GetCurrentLineNumber(p),
                         XML_ErrorString(XML_GetErrorCode(p)));
  } else if (s->err[0]) {
    rc = sl_pack_failf(msg, cap, "%s", s->err);
  }
  XML_ParserFree(p);
  free(text);
  return rc;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The annotation ids: SPLIT's lines' first words, or every Annotations/
 * *.xml's name (without .xml) in byte order. */
static int list_ids(const char *vocdir, const char *split, char ***ids,
                    size_t *n, char *msg, size_t cap) {
  size_t idcap = 0;
  *ids = NULL;
  *n = 0;
  char path[4096];
  if (split) {
    snprintf(path, sizeof path, "%s/ImageSets/Main/%s.txt", vocdir, split);
    size_t len;
    char *text = sl_pack_read_text(path, &len, msg, cap);
    if (!text)
      return -1;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
      char *w = line + strspn(line, " \t\r");
      size_t wl = strcspn(w, " \t\r");
      if (!wl)
        continue;
      char **v = sl_cli_grow(*ids, &idcap, *n + 1, sizeof *v, 256);
      if (!v || !(v[*n] = strndup(w, wl))) {
        if (v)
          *ids = v;
        free(text);
        return sl_pack_failf(msg, cap, "%s: no memory", path);
      }
      *ids = v;
      (*n)++;
    }
    free(text);
    return 0;
  }
  snprintf(path, sizeof path, "%s/Annotations", vocdir);
  DIR *d = opendir(path);
  if (!d)
    return sl_pack_failf(msg, cap,
                         "%s: %s (not a VOCdevkit year folder like "
                         "VOCdevkit/VOC2007?)",
                         path, strerror(errno));
  struct dirent *e;
  int rc = 0;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (e->d_name[0] == '.' || l < 5 || strcmp(e->d_name + l - 4, ".xml"))
      continue;
    char **v = sl_cli_grow(*ids, &idcap, *n + 1, sizeof *v, 256);
    if (!v || !(v[*n] = strndup(e->d_name, l - 4))) {
      if (v)
        *ids = v;
      rc = sl_pack_failf(msg, cap, "%s: no memory", path);
      break;
    }
    *ids = v;
    (*n)++;
  }
  closedir(d);
  if (rc == 0 && *n)
    qsort(*ids, *n, sizeof **ids, cmp_str);
  return rc;
}

/* The classes: VOC's 20 when every name is one of them, else the names
 * sorted; *label_of[i] maps name i to its label. */
static int choose_classes(sl_pack_inputs *in, char **names, size_t nnames,
                          uint32_t *label_of, bool *standard) {
  *standard = true;
  for (size_t i = 0; i < nnames && *standard; i++) {
    bool found = false;
    for (int c = 0; c < 20; c++)
      found |= !strcmp(names[i], k_voc20[c]);
    *standard = found;
  }
  size_t k = *standard ? 20 : nnames;
  if (!(in->classes = calloc(k ? k : 1, sizeof *in->classes)))
    return -1;
  /* the names' places, sorted by name: label c is sorted[c]'s */
  char **sorted = malloc((nnames ? nnames : 1) * sizeof *sorted);
  if (!sorted)
    return -1;
  if (nnames) { /* names is NULL when no object was seen */
    memcpy(sorted, names, nnames * sizeof *sorted);
    qsort(sorted, nnames, sizeof *sorted, cmp_str);
  }
  for (size_t c = 0; c < k; c++) {
    if (!(in->classes[c] = strdup(*standard ? k_voc20[c] : sorted[c]))) {
      free(sorted);
      return -1;
    }
    in->nclasses = (uint32_t)(c + 1);
  }
  free(sorted);
  for (size_t i = 0; i < nnames; i++) {
    /* the classes are in byte order (k_voc20 is too), each name among
     * them */
    char **hit = bsearch(&names[i], in->classes, in->nclasses,
                         sizeof *in->classes, cmp_str);
    if (!hit)
      return -1;
    label_of[i] = (uint32_t)(hit - in->classes);
  }
  return 0;
}

int sl_pack_scan_voc(sl_pack_inputs *in, const char *vocdir, const char *split,
                     char *ids_text, size_t ids_cap, char *msg,
                     size_t msg_len) {
  memset(in, 0, sizeof *in);
  char **ids = NULL;
  size_t nids = 0;
  name_set names = {0};
  voc_obj **objs = NULL; /* per item, until the labels are known */
  int rc = list_ids(vocdir, split, &ids, &nids, msg, msg_len);
  if (rc == 0 && !(objs = calloc(nids ? nids : 1, sizeof *objs)))
    rc = sl_pack_failf(msg, msg_len, "%s: no memory", vocdir);
  size_t dl = strlen(vocdir);
  const char *sep = dl && vocdir[dl - 1] == '/' ? "" : "/";
  for (size_t i = 0; rc == 0 && i < nids; i++) {
    char xml[4096], img[4096];
    if (snprintf(xml, sizeof xml, "%s%sAnnotations/%s.xml", vocdir, sep,
                 ids[i]) >= (int)sizeof xml ||
        snprintf(img, sizeof img, "%s%sJPEGImages/%s.jpg", vocdir, sep,
                 ids[i]) >= (int)sizeof img) {
      rc = sl_pack_failf(msg, msg_len, "%s: path too long", vocdir);
      break;
    }
    voc_parse s;
    memset(&s, 0, sizeof s);
    s.names = &names;
    rc = parse_file(&s, xml, msg, msg_len);
    if (rc == 0 && s.nobj > SL_BOXES_MAX)
      rc = sl_pack_failf(msg, msg_len, "%s: more than %d objects", xml,
                         SL_BOXES_MAX);
    if (rc == 0 && sl_pack_inputs_add(in, img, dl + strlen(sep), -1, NULL))
      rc = sl_pack_failf(msg, msg_len, "%s: no memory", vocdir);
    if (rc == 0) {
      sl_pack_item *it = &in->items[in->n - 1];
      it->want_w = (uint32_t)s.width; /* 0 (no <size>): not checked */
      it->want_h = (uint32_t)s.height;
      if (!it->want_w || !it->want_h)
        it->want_w = it->want_h = 0;
      it->nboxes = (uint32_t)s.nobj;
      objs[i] = s.objs;
    } else {
      free(s.objs);
    }
  }
  uint32_t *label_of = NULL;
  bool standard = false;
  if (rc == 0 &&
      (!(label_of = calloc(names.n ? names.n : 1, sizeof *label_of)) ||
       choose_classes(in, names.v, names.n, label_of, &standard)))
    rc = sl_pack_failf(msg, msg_len, "%s: no memory", vocdir);
  /* The boxes, in pixel edges: 1-based inclusive xmin..xmax covers
   * [xmin - 1, xmax). */
  for (size_t i = 0; rc == 0 && i < in->n; i++) {
    sl_pack_item *it = &in->items[i];
    if (!it->nboxes)
      continue;
    if (!(it->boxes = malloc(it->nboxes * sizeof *it->boxes))) {
      rc = sl_pack_failf(msg, msg_len, "%s: no memory", vocdir);
      break;
    }
    for (uint32_t k = 0; k < it->nboxes; k++) {
      const voc_obj *o = &objs[i][k];
      it->boxes[k] = (sl_box){(float)(o->xmin - 1),
                              (float)(o->ymin - 1),
                              (float)o->xmax,
                              (float)o->ymax,
                              (int32_t)label_of[o->name],
                              o->difficult ? SL_BOX_DIFFICULT : 0};
    }
  }
  if (rc == 0)
    snprintf(ids_text, ids_cap,
             "voc_classes=%s voc_box=xmin-1,ymin-1,xmax,ymax",
             standard ? "standard20" : "found-sorted");
  for (size_t i = 0; i < nids; i++) {
    free(ids[i]);
    if (objs)
      free(objs[i]);
  }
  name_set_free(&names);
  free(ids);
  free(objs);
  free(label_of);
  return rc;
}
