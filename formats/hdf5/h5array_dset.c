/* Opening an HDF5 array file's datasets by name, and the texts of their
 * shapes and types that the open's messages are made of
 * (formats/hdf5/h5array_dset.h). */
#include "formats/hdf5/h5array_dset.h"

#include <stdio.h>
#include <string.h>

void sl_h5_shape_text(const sl_h5_dset *a, char *buf, size_t cap) {
  size_t o = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < a->rank && o < cap; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%s%llu", i ? ", " : "",
                          (unsigned long long)a->dims[i]);
  if (o < cap)
    snprintf(buf + o, cap - o, "%s)", a->rank == 1 ? "," : "");
}

void sl_h5_type_text(hid_t t, char *buf, size_t cap) {
  H5T_class_t c = H5Tget_class(t);
  size_t bits = H5Tget_size(t) * 8;
  switch (c) {
  case H5T_INTEGER:
    snprintf(buf, cap, "%s%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "uint" : "int",
             bits);
    break;
  case H5T_FLOAT:
    snprintf(buf, cap, "float%zu", bits);
    break;
  case H5T_VLEN:
    snprintf(buf, cap, "variable-length");
    break;
  case H5T_STRING:
    snprintf(buf, cap, "string");
    break;
  case H5T_ENUM:
    snprintf(buf, cap, "enum (bool?)");
    break;
  case H5T_OPAQUE:
    snprintf(buf, cap, "opaque");
    break;
  case H5T_COMPOUND:
    snprintf(buf, cap, "compound");
    break;
  default:
    snprintf(buf, cap, "class %d", (int)c);
  }
}

sl_status sl_h5_dset_open_in(sl_source *src, hid_t file, const char *fpath,
                             const char *name, bool required,
                             const char *option, sl_h5_dset *a, sl_err *err) {
  a->d = -1;
  snprintf(a->name, sizeof a->name, "%s%s%s%s", fpath ? fpath : "",
           fpath ? ":" : "", name[0] == '/' ? "" : "/", name);
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) {
    if (!required)
      return SL_OK;
    return sl_err_set(err, SL_EFORMAT, "%s: %s = %s: no such dataset",
                      fpath ? fpath : src->path, option, a->name);
  }
  a->d = H5Dopen2(file, name, H5P_DEFAULT);
  if (a->d < 0)
    return required
               ? sl_err_set(err, SL_EFORMAT, "%s: %s (%s) is not a dataset",
                            fpath ? fpath : src->path, a->name, option)
               : SL_OK;
  hid_t s = H5Dget_space(a->d);
  int r = s >= 0 ? H5Sget_simple_extent_ndims(s) : -1;
  if (r < 0 || r > SL_H5_MAX_RANK ||
      (r > 0 && H5Sget_simple_extent_dims(s, a->dims, NULL) != r)) {
    if (s >= 0)
      H5Sclose(s);
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s: cannot read its shape (rank %d; up to "
                      "%d read)",
                      src->path, a->name, r, SL_H5_MAX_RANK);
  }
  H5Sclose(s);
  a->rank = r;
  return SL_OK;
}

const char *sl_h5_chunk_text(const sl_h5_dset *a, const hsize_t *cdims,
                             char *buf, size_t cap) {
  sl_h5_dset c = *a;
  memcpy(c.dims, cdims, sizeof c.dims);
  sl_h5_shape_text(&c, buf, cap);
  return buf;
}
