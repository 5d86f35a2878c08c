/* `sluice pack --coco INSTANCES.json IMAGES_DIR OUT`: COCO's instances JSON
 * read with libcjson (tools/pack_detect.h says what becomes what). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/pack_detect.h"

/* An id and what it stands for (an item, a label), sorted by id. */
typedef struct id_ref {
  int64_t id;
  size_t at;
} id_ref;

static int cmp_id(const void *a, const void *b) {
  const id_ref *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static const id_ref *find_id(const id_ref *v, size_t n, int64_t id) {
  id_ref key = {id, 0};
  return bsearch(&key, v, n, sizeof *v, cmp_id);
}

int sl_pack_failf(char *msg, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, cap, fmt, ap);
  va_end(ap);
  return -1;
}

char *sl_pack_read_text(const char *path, size_t *len, char *msg,
                        size_t msg_len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    sl_pack_failf(msg, msg_len, "%s: %s", path, strerror(errno));
    return NULL;
  }
  char *buf = NULL;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0)
    size = ftell(f);
  if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
    sl_pack_failf(msg, msg_len, "%s: cannot tell its size: %s", path,
                  strerror(errno));
  } else if (!(buf = malloc((size_t)size + 1))) {
    sl_pack_failf(msg, msg_len, "%s: no memory for its %ld bytes", path, size);
  } else if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
    sl_pack_failf(msg, msg_len, "%s: read failed", path);
    free(buf);
    buf = NULL;
  } else {
    buf[size] = '\0';
    *len = (size_t)size;
  }
  fclose(f);
  return buf;
}

/* An integer-valued JSON number within +-2^53 (ids, sizes). */
static bool get_int(const cJSON *o, const char *key, int64_t *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
      fabs(v->valuedouble) > 9007199254740992.0 ||
      v->valuedouble != floor(v->valuedouble))
    return false;
  *out = (int64_t)v->valuedouble;
  return true;
}

/* The "id" of an object for messages ("" when it has none). */
static void id_text(const cJSON *o, char *buf, size_t cap) {
  int64_t id;
  if (get_int(o, "id", &id))
    snprintf(buf, cap, " (id %" PRId64 ")", id);
  else
    buf[0] = '\0';
}

/* label k is the k-th id of the sorted ids: as ranges "a-b,c,..." */
static void id_ranges(const id_ref *cats, size_t n, char *out, size_t cap) {
  size_t pos = (size_t)snprintf(out, cap, "coco_ids=");
  for (size_t i = 0; i < n && pos < cap;) {
    size_t j = i;
    while (j + 1 < n && cats[j + 1].id == cats[j].id + 1)
      j++;
    int w = j > i ? snprintf(out + pos, cap - pos, "%s%" PRId64 "-%" PRId64,
                             i ? "," : "", cats[i].id, cats[j].id)
                  : snprintf(out + pos, cap - pos, "%s%" PRId64, i ? "," : "",
                             cats[i].id);
    if (w < 0 || (size_t)w >= cap - pos) {
      /* Too many ranges for the settings line: the JSON keeps them. */
      snprintf(out, cap, "coco_ids=too-many-to-record(labels-in-id-order)");
      return;
    }
    pos += (size_t)w;
    i = j + 1;
  }
}

/* categories[]: the classes, labels in id order. */
static int take_categories(sl_pack_inputs *in, const cJSON *root,
                           const char *json, id_ref **cats_out, size_t *ncats,
                           char *msg, size_t cap) {
  const cJSON *cats = cJSON_GetObjectItemCaseSensitive(root, "categories");
  if (!cJSON_IsArray(cats))
    return sl_pack_failf(msg, cap,
                         "%s: no \"categories\" array (not a COCO "
                         "instances file?)",
                         json);
  size_t n = (size_t)cJSON_GetArraySize(cats), k = 0;
  if (n == 0)
    return sl_pack_failf(msg, cap, "%s: \"categories\" is empty", json);
  id_ref *v = calloc(n, sizeof *v);
  /* each category's name by its place: cJSON_GetArrayItem walks the list
   * from its head, so looking each up again would be quadratic */
  const char **names = malloc(n * sizeof *names);
  if (!v || !names) {
    free(v);
    free(names);
    return sl_pack_failf(msg, cap, "%s: no memory", json);
  }
  *cats_out = v;
  const cJSON *c;
  cJSON_ArrayForEach(c, cats) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
    if (!get_int(c, "id", &v[k].id) || !cJSON_IsString(name)) {
      free(names);
      return sl_pack_failf(
          msg, cap,
          "%s: categories[%zu] lacks an integer \"id\" or a string "
          "\"name\"",
          json, k);
    }
    size_t len = strlen(name->valuestring);
    if (len == 0 || len > SL_CLASS_NAME_MAX ||
        strpbrk(name->valuestring, "\r\n")) {
      free(names);
      return sl_pack_failf(msg, cap,
                           "%s: categories[%zu] (id %" PRId64
                           "): name of %zu bytes "
                           "(1..%d, no line break)",
                           json, k, v[k].id, len, SL_CLASS_NAME_MAX);
    }
    names[k] = name->valuestring;
    v[k].at = k;
    k++;
  }
  qsort(v, n, sizeof *v, cmp_id);
  int rc = 0;
  for (size_t i = 1; rc == 0 && i < n; i++)
    if (v[i].id == v[i - 1].id)
      rc = sl_pack_failf(msg, cap, "%s: category id %" PRId64 " appears twice",
                         json, v[i].id);
  if (rc == 0 && !(in->classes = calloc(n, sizeof *in->classes)))
    rc = sl_pack_failf(msg, cap, "%s: no memory", json);
  for (size_t i = 0; rc == 0 && i < n; i++) {
    if (!(in->classes[i] = strdup(names[v[i].at])))
      rc = sl_pack_failf(msg, cap, "%s: no memory", json);
    else
      in->nclasses = (uint32_t)(i + 1);
    v[i].at = i; /* now: the label */
  }
  free(names);
  if (rc == 0)
    *ncats = n;
  return rc;
}

/* images[]: the samples, in the file's order. */
static int take_images(sl_pack_inputs *in, const cJSON *root, const char *json,
                       const char *dir, id_ref **imgs_out, char *msg,
                       size_t cap) {
  const cJSON *imgs = cJSON_GetObjectItemCaseSensitive(root, "images");
  if (!cJSON_IsArray(imgs))
    return sl_pack_failf(msg, cap,
                         "%s: no \"images\" array (not a COCO instances "
                         "file?)",
                         json);
  size_t n = (size_t)cJSON_GetArraySize(imgs), k = 0;
  id_ref *v = calloc(n ? n : 1, sizeof *v);
  if (!v)
    return sl_pack_failf(msg, cap, "%s: no memory", json);
  *imgs_out = v;
  size_t dl = strlen(dir);
  const char *sep = dl && dir[dl - 1] == '/' ? "" : "/";
  const cJSON *im;
  cJSON_ArrayForEach(im, imgs) {
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(im, "file_name");
    int64_t w, h;
    if (!get_int(im, "id", &v[k].id) || !cJSON_IsString(fn) ||
        !fn->valuestring[0] || !get_int(im, "width", &w) ||
        !get_int(im, "height", &h) || w < 1 || h < 1 || w > 65535 || h > 65535)
      return sl_pack_failf(
          msg, cap,
          "%s: images[%zu] lacks an integer \"id\", a \"file_name\" "
          "or a \"width\" and \"height\" of 1..65535",
          json, k);
    if (strlen(fn->valuestring) > SL_SAMPLE_NAME_MAX)
      return sl_pack_failf(msg, cap,
                           "%s: images[%zu] (id %" PRId64 "): file_name too "
                           "long",
                           json, k, v[k].id);
    size_t plen = dl + strlen(sep) + strlen(fn->valuestring) + 1;
    char *path = malloc(plen);
    if (!path)
      return sl_pack_failf(msg, cap, "%s: no memory", json);
    snprintf(path, plen, "%s%s%s", dir, sep, fn->valuestring);
    int rc = sl_pack_inputs_add(in, path, dl + strlen(sep), -1, NULL);
    free(path);
    if (rc)
      return sl_pack_failf(msg, cap, "%s: no memory", json);
    in->items[in->n - 1].want_w = (uint32_t)w;
    in->items[in->n - 1].want_h = (uint32_t)h;
    v[k].at = k;
    k++;
  }
  qsort(v, n, sizeof *v, cmp_id);
  for (size_t i = 1; i < n; i++)
    if (v[i].id == v[i - 1].id)
      return sl_pack_failf(msg, cap, "%s: image id %" PRId64 " appears twice",
                           json, v[i].id);
  return 0;
}

/* One annotation's image, label and box; -1 with a message naming it. */
static int read_annotation(const cJSON *a, size_t k, const char *json,
                           const id_ref *imgs, size_t nimgs, const id_ref *cats,
                           size_t ncats, size_t *item, sl_box *box, char *msg,
                           size_t cap) {
  char idt[48];
  id_text(a, idt, sizeof idt);
  int64_t image_id, cat_id, crowd = 0;
  if (!get_int(a, "image_id", &image_id) || !get_int(a, "category_id", &cat_id))
    return sl_pack_failf(
        msg, cap,
        "%s: annotations[%zu]%s lacks an integer \"image_id\" or "
        "\"category_id\"",
        json, k, idt);
  const cJSON *ic = cJSON_GetObjectItemCaseSensitive(a, "iscrowd");
  if (ic && (!get_int(a, "iscrowd", &crowd) || crowd < 0 || crowd > 1))
    return sl_pack_failf(msg, cap,
                         "%s: annotations[%zu]%s: \"iscrowd\" is not 0 or 1",
                         json, k, idt);
  const id_ref *im = find_id(imgs, nimgs, image_id);
  if (!im)
    return sl_pack_failf(msg, cap,
                         "%s: annotations[%zu]%s names image_id %" PRId64
                         ", which is not in \"images\"",
                         json, k, idt, image_id);
  const id_ref *cat = find_id(cats, ncats, cat_id);
  if (!cat)
    return sl_pack_failf(msg, cap,
                         "%s: annotations[%zu]%s names category_id %" PRId64
                         ", which is not in \"categories\"",
                         json, k, idt, cat_id);
  const cJSON *bb = cJSON_GetObjectItemCaseSensitive(a, "bbox");
  double v[4];
  int nv = 0;
  const cJSON *x;
  if (cJSON_IsArray(bb))
    cJSON_ArrayForEach(x, bb) {
      if (nv == 4 || !cJSON_IsNumber(x) || !isfinite(x->valuedouble)) {
        nv = -1;
        break;
      }
      v[nv++] = x->valuedouble;
    }
  if (nv != 4 || v[2] < 0 || v[3] < 0 || !isfinite((float)(v[0] + v[2])) ||
      !isfinite((float)(v[1] + v[3])))
    return sl_pack_failf(
        msg, cap,
        "%s: annotations[%zu]%s: \"bbox\" is not [x, y, width, "
        "height] of finite numbers with width, height >= 0",
        json, k, idt);
  *item = im->at;
  box->x0 = (float)v[0];
  box->y0 = (float)v[1];
  box->x1 = (float)(v[0] + v[2]);
  box->y1 = (float)(v[1] + v[3]);
  if (box->x1 < box->x0) /* float rounding of a zero width */
    box->x1 = box->x0;
  if (box->y1 < box->y0)
    box->y1 = box->y0;
  box->label = (int32_t)cat->at;
  box->flags = crowd ? SL_BOX_CROWD : 0;
  return 0;
}

/* annotations[]: counted per image, then stored. */
static int take_annotations(sl_pack_inputs *in, const cJSON *root,
                            const char *json, const id_ref *imgs,
                            const id_ref *cats, size_t ncats, char *msg,
                            size_t cap) {
  const cJSON *anns = cJSON_GetObjectItemCaseSensitive(root, "annotations");
  if (!anns)
    return 0; /* image info only (COCO's test files): no boxes */
  if (!cJSON_IsArray(anns))
    return sl_pack_failf(msg, cap, "%s: \"annotations\" is not an array", json);
  const cJSON *a;
  sl_box box;
  size_t k = 0, item;
  cJSON_ArrayForEach(a, anns) {
    if (read_annotation(a, k, json, imgs, in->n, cats, ncats, &item, &box, msg,
                        cap))
      return -1;
    if (++in->items[item].nboxes > SL_BOXES_MAX)
      return sl_pack_failf(
          msg, cap, "%s: image %s has more than %d annotations", json,
          in->items[item].path + in->items[item].name_off, SL_BOXES_MAX);
    k++;
  }
  for (size_t i = 0; i < in->n; i++) {
    sl_pack_item *it = &in->items[i];
    if (it->nboxes && !(it->boxes = malloc(it->nboxes * sizeof *it->boxes)))
      return sl_pack_failf(msg, cap, "%s: no memory for the boxes", json);
    it->nboxes = 0; /* counts again as they are stored */
  }
  k = 0;
  cJSON_ArrayForEach(a, anns) {
    if (read_annotation(a, k++, json, imgs, in->n, cats, ncats, &item, &box,
                        msg, cap))
      return -1;
    in->items[item].boxes[in->items[item].nboxes++] = box;
  }
  return 0;
}

int sl_pack_scan_coco(sl_pack_inputs *in, const char *json,
                      const char *images_dir, char *ids, size_t ids_cap,
                      char *msg, size_t msg_len) {
  memset(in, 0, sizeof *in);
  size_t len;
  char *text = sl_pack_read_text(json, &len, msg, msg_len);
  if (!text)
    return -1;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!root) {
    /* cJSON stops where the text stops being JSON: its line. */
    size_t at =
        end && end >= text && end <= text + len ? (size_t)(end - text) : len;
    size_t line = 1;
    for (size_t i = 0; i < at; i++)
      line += text[i] == '\n';
    char near[24];
    size_t nl = 0;
    for (; nl < sizeof near - 1 && at + nl < len && text[at + nl] != '\n'; nl++)
      near[nl] = (unsigned char)text[at + nl] < 0x20 ? '?' : text[at + nl];
    near[nl] = '\0';
    sl_pack_failf(msg, msg_len, "%s:%zu: not valid JSON (near '%s'%s)", json,
                  line, near, at >= len ? ", at the end of the file" : "");
    free(text);
    return -1;
  }
  id_ref *cats = NULL, *imgs = NULL;
  size_t ncats = 0;
  int rc = -1;
  if (!cJSON_IsObject(root))
    sl_pack_failf(msg, msg_len,
                  "%s: not a JSON object (a COCO instances file is)", json);
  else if (take_categories(in, root, json, &cats, &ncats, msg, msg_len) == 0 &&
           take_images(in, root, json, images_dir, &imgs, msg, msg_len) == 0 &&
           take_annotations(in, root, json, imgs, cats, ncats, msg, msg_len) ==
               0) {
    id_ranges(cats, ncats, ids, ids_cap);
    rc = 0;
  }
  free(cats);
  free(imgs);
  cJSON_Delete(root);
  free(text);
  return rc;
}
