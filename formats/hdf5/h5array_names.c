/* Class names of an HDF5 array dataset (h5array_names.h). */
#include "formats/hdf5/h5array_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CLASSES = 1 << 16, MAX_CLASS_NAME = 1024 };
static const char *const k_class_names[] = {
    "classes", "class_names", "label_names", "list_classes", NULL};

/* Reads the k strings of obj (a dataset when is_attr is false, else an
 * attribute) of type t and space s into *out: NULL on success (or
 * *skip when t is no string: not names), else why it failed. */
static const char *read_strings(hid_t obj, bool is_attr, hid_t t, hid_t s,
                                sl_h5_names *out, bool *skip) {
  *skip = false;
  int r = H5Sget_simple_extent_ndims(s);
  hsize_t n = 0;
  if (H5Tget_class(t) != H5T_STRING || r != 1 ||
      H5Sget_simple_extent_dims(s, &n, NULL) != 1) {
    *skip = true;
    return NULL;
  }
  if (n == 0 || n > MAX_CLASSES)
    return "holds 0 or more than 65536 names";
  bool var = H5Tis_variable_str(t) > 0;
  size_t fixed = var ? 0 : H5Tget_size(t);
  if (!var && (fixed == 0 || fixed > MAX_CLASS_NAME))
    return "its strings are longer than 1024 bytes";
  hid_t mt = H5Tcopy(H5T_C_S1);
  if (mt < 0 || H5Tset_size(mt, var ? H5T_VARIABLE : fixed) < 0 ||
      H5Tset_cset(mt, H5Tget_cset(t)) < 0 ||
      (!var && H5Tset_strpad(mt, H5T_STR_NULLPAD) < 0)) {
    if (mt >= 0)
      H5Tclose(mt);
    return "cannot make its memory type";
  }
  size_t each = var ? sizeof(char *) : fixed;
  void *buf = calloc((size_t)n, each);
  const char *bad = buf ? NULL : "no memory";
  if (!bad &&
      (is_attr ? H5Aread(obj, mt, buf)
               : H5Dread(obj, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf)) < 0) {
    bad = "cannot be read (damaged?)";
    var = false; /* nothing to reclaim */
  }
  size_t total = 0;
  for (hsize_t i = 0; !bad && i < n; i++) {
    const char *p = var ? ((char **)buf)[i] : (char *)buf + i * fixed;
    size_t l =
        var ? (p ? strnlen(p, MAX_CLASS_NAME + 1) : 0) : strnlen(p, fixed);
    if (l > MAX_CLASS_NAME)
      bad = "a name is longer than 1024 bytes";
    total += l + 1;
  }
  if (!bad && !(out->blob = malloc(total)))
    bad = "no memory";
  for (hsize_t i = 0, o = 0; !bad && i < n; i++) {
    const char *p = var ? ((char **)buf)[i] : (char *)buf + i * fixed;
    size_t l = var ? (p ? strlen(p) : 0) : strnlen(p, fixed);
    if (l)
      memcpy(out->blob + o, p, l);
    out->blob[o + l] = '\0';
    o += l + 1;
  }
  if (var)
    H5Dvlen_reclaim(mt, s, H5P_DEFAULT, buf);
  free(buf);
  H5Tclose(mt);
  if (!bad) {
    out->len = total;
    out->k = (uint32_t)n;
  }
  return bad;
}

/* One candidate: dataset or attribute name of obj. Found: *found, names in
 * *out; a candidate of another type is skipped. */
static sl_status try_names(sl_source *src, hid_t obj, const char *objname,
                           const char *name, bool attr, sl_h5_names *out,
                           bool *found, sl_err *err) {
  *found = false;
  if (attr ? H5Aexists(obj, name) <= 0 : H5Lexists(obj, name, H5P_DEFAULT) <= 0)
    return SL_OK;
  if (!attr) {
    H5O_info_t oi;
    if (H5Oget_info_by_name(obj, name, &oi, H5P_DEFAULT) < 0 ||
        oi.type != H5O_TYPE_DATASET)
      return SL_OK;
  }
  hid_t h =
      attr ? H5Aopen(obj, name, H5P_DEFAULT) : H5Dopen2(obj, name, H5P_DEFAULT);
  if (h < 0)
    return SL_OK;
  hid_t t = attr ? H5Aget_type(h) : H5Dget_type(h);
  hid_t s = attr ? H5Aget_space(h) : H5Dget_space(h);
  bool skip = true;
  const char *bad = t >= 0 && s >= 0 ? read_strings(h, attr, t, s, out, &skip)
                                     : "cannot read its type";
  if (t >= 0)
    H5Tclose(t);
  if (s >= 0)
    H5Sclose(s);
  if (attr)
    H5Aclose(h);
  else
    H5Dclose(h);
  if (attr)
    snprintf(out->from, sizeof out->from, "attribute %s of %s", name, objname);
  else
    snprintf(out->from, sizeof out->from, "dataset %s%s/%s", objname,
             objname[0] ? ":" : "", name);
  if (bad)
    return sl_err_set(err, SL_EFORMAT, "%s: class names, %s: %s", src->path,
                      out->from, bad);
  *found = !skip;
  return SL_OK;
}

sl_status sl_h5_class_names(sl_source *src, const sl_h5_names_where *at,
                            sl_h5_names *out, sl_err *err) {
  struct {
    hid_t obj;
    const char *what;
    bool attr;
  } where[] = {{at->file, "", false},
               {at->labels_file, at->labels_path ? at->labels_path : "", false},
               {at->images, at->images_name, true},
               {at->labels, at->labels_name, true},
               {at->file, "/", true}};
  for (size_t w = 0; w < sizeof where / sizeof where[0]; w++) {
    if (where[w].obj < 0)
      continue;
    for (int i = 0; k_class_names[i]; i++) {
      bool found = false;
      sl_status st =
          try_names(src, where[w].obj, where[w].what, k_class_names[i],
                    where[w].attr, out, &found, err);
      if (st != SL_OK || found)
        return st;
    }
  }
  return SL_OK;
}
