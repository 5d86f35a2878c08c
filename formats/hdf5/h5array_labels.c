/* Reading the labels, targets and row lengths beside an HDF5 pixel array
 * (formats/hdf5/h5array_labels.h). */
#include "formats/hdf5/h5array_labels.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_length_names[] = {"lengths", "sizes", "lens", NULL};
static const char *const k_label_names[] = {"labels", "y", "ans", "train_set_y",
                                            "label",  "Y", NULL};

/* A label or target dataset of n rows: class and K (values per row). */
static sl_status check_numeric(sl_source *src, const sl_h5_dset *a, uint64_t n,
                               const char *images, bool *is_float, uint64_t *k,
                               sl_err *err) {
  char sh[128], ty[64], why[200] = "";
  sl_h5_shape_text(a, sh, sizeof sh);
  hid_t t = H5Dget_type(a->d);
  H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
  if (t >= 0)
    sl_h5_type_text(t, ty, sizeof ty);
  else
    snprintf(ty, sizeof ty, "unknown");
  if (t >= 0)
    H5Tclose(t);
  *k = 1;
  for (int i = 1; i < a->rank; i++) {
    if (a->dims[i] != 0 && *k > UINT64_MAX / a->dims[i])
      *k = UINT64_MAX;
    else
      *k *= a->dims[i];
  }
  if (c != H5T_INTEGER && c != H5T_FLOAT && c != H5T_ENUM)
    snprintf(why, sizeof why,
             "has %s elements (integers, floats or bools "
             "read)",
             ty);
  else if (a->rank < 1 || a->dims[0] != n)
    snprintf(why, sizeof why,
             "has shape %s but %s holds %" PRIu64 " images (one row each "
             "expected)",
             sh, images, n);
  else if (*k == 0 || *k > SL_TARGETS_MAX)
    snprintf(why, sizeof why,
             "has shape %s: %" PRIu64 " values per row (1 to %u read)", sh, *k,
             SL_TARGETS_MAX);
  if (why[0])
    return sl_err_set(err, SL_EFORMAT, "%s: dataset %s %s", src->path, a->name,
                      why);
  *is_float = c == H5T_FLOAT;
  return SL_OK;
}

static sl_status read_all(sl_source *src, const sl_h5_dset *a, hid_t memtype,
                          void *buf, sl_err *err) {
  if (H5Dread(a->d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s cannot be read (truncated or damaged "
                      "file?)",
                      src->path, a->name);
  return SL_OK;
}

sl_status sl_h5_labels_open(sl_source *src, hid_t file, const sl_h5_dset *img,
                            uint64_t n, sl_h5_labels *L, sl_err *err) {
  sl_status st = SL_OK;
  /* Labels: named, else the first common name that is not the images; in
   * dataset.labels_path's file when set. */
  hid_t lf = file;
  const char *lp = src->labels_path;
  if (lp) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0)
      lf = L->file = H5Fopen(lp, H5F_ACC_RDONLY, fapl);
    else
      lf = -1;
    if (fapl >= 0)
      H5Pclose(fapl);
    if (lf < 0)
      return sl_err_set(err, SL_EFORMAT,
                        "%s: dataset.labels_path = %s: HDF5 cannot open it "
                        "(missing, not HDF5, or damaged)",
                        src->path, lp);
  }
  if (src->labels)
    st = sl_h5_dset_open_in(src, lf, lp, src->labels, true, "dataset.labels",
                            &L->lab, err);
  for (int i = 0;
       !src->labels && st == SL_OK && L->lab.d < 0 && k_label_names[i]; i++) {
    st = sl_h5_dset_open_in(src, lf, lp, k_label_names[i], false,
                            "dataset.labels", &L->lab, err);
    if (st == SL_OK && L->lab.d >= 0 && strcmp(L->lab.name, img->name) == 0) {
      H5Dclose(L->lab.d);
      L->lab.d = -1;
    }
  }
  if (st == SL_OK && src->targets_name)
    st = sl_h5_dset_open_in(src, lf, lp, src->targets_name, true,
                            "dataset.targets", &L->tgt, err);
  if (st == SL_OK && lp && L->lab.d < 0 && L->tgt.d < 0)
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: dataset.labels_path = %s holds no labels (y, "
                    "labels, ...; name them with dataset.labels)",
                    src->path, lp);
  if (st != SL_OK)
    return st;
  bool lab_float = false, tgt_float = false;
  uint64_t lk = 0, tk = 0;
  if (L->lab.d >= 0)
    st = check_numeric(src, &L->lab, n, img->name, &lab_float, &lk, err);
  if (st == SL_OK && L->tgt.d >= 0)
    st = check_numeric(src, &L->tgt, n, img->name, &tgt_float, &tk, err);
  if (st != SL_OK)
    return st;
  /* Labels with K > 1 values a row (one-hot, multi-label) are targets. */
  bool lab_targets = L->lab_targets = L->lab.d >= 0 && lk > 1;
  if (lab_targets && L->tgt.d >= 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s has %" PRIu64 " values per row (read "
                      "as targets) and dataset.targets names %s as well; "
                      "name (N,) integer labels with dataset.labels",
                      src->path, L->lab.name, lk, L->tgt.name);
  const sl_h5_dset *T = L->targets = lab_targets     ? &L->lab
                                     : L->tgt.d >= 0 ? &L->tgt
                                                     : NULL;
  src->target_width = T ? (uint32_t)(lab_targets ? lk : tk) : 0;
  bool argmax = L->argmax = src->label_argmax;
  if (argmax && (!T || (L->lab.d >= 0 && !lab_targets)))
    return sl_err_set(err, SL_ECONFIG,
                      "%s: dataset.label_from = argmax labels each row of an "
                      "(N,K) dataset, but %s%s",
                      src->path, L->lab.d >= 0 ? L->lab.name : "",
                      L->lab.d >= 0 ? " has one value a row (read as labels)"
                                    : "there is no (N,K) labels dataset");
  if (L->lab.d >= 0 && !lab_targets) {
    if (!(L->ints = malloc(n * sizeof *L->ints)) ||
        (lab_float && !(L->floats = malloc(n * sizeof *L->floats))))
      return sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " labels",
                        src->path, n);
    st = lab_float ? read_all(src, &L->lab, H5T_NATIVE_DOUBLE, L->floats, err)
                   : read_all(src, &L->lab, H5T_NATIVE_INT64, L->ints, err);
  }
  return st;
}

sl_status sl_h5_labels_read_targets(sl_source *src, const sl_h5_labels *L,
                                    sl_err *err) {
  return L->targets
             ? read_all(src, L->targets, H5T_NATIVE_FLOAT, src->targets, err)
             : SL_OK;
}

const char *sl_h5_label_of(const sl_source *src, const sl_h5_labels *L,
                           uint64_t i, int64_t *label) {
  *label = -1;
  if (L->floats) {
    double v = L->floats[i];
    if (!(v >= -1.0 && v <= (double)INT32_MAX) || v != floor(v))
      return "its label is not an integer in [-1, 2^31)";
    *label = (int64_t)v;
  } else if (L->ints) {
    if (L->ints[i] < -1 || L->ints[i] > INT32_MAX)
      return "its label is outside [-1, 2^31)";
    *label = L->ints[i];
  } else if (L->argmax) { /* the first largest value, if above 0 */
    const float *row = src->targets + i * src->target_width;
    float best = 0.0f;
    for (uint32_t k = 0; k < src->target_width; k++)
      if (row[k] > best) {
        best = row[k];
        *label = k;
      }
  }
  return NULL;
}

void sl_h5_labels_close(sl_h5_labels *L) {
  free(L->ints);
  free(L->floats);
  L->ints = NULL;
  L->floats = NULL;
  if (L->lab.d >= 0)
    H5Dclose(L->lab.d);
  if (L->tgt.d >= 0)
    H5Dclose(L->tgt.d);
  if (L->file >= 0)
    H5Fclose(L->file);
  L->lab.d = L->tgt.d = L->file = -1;
}

sl_status sl_h5_read_lengths(sl_source *src, hid_t file, const sl_h5_dset *img,
                             uint64_t n, uint64_t row_bytes, sl_h5_dset *len,
                             int64_t **out, sl_err *err) {
  char sh[128];
  sl_h5_shape_text(img, sh, sizeof sh);
  sl_status st = SL_OK;
  if (src->lengths_name)
    st = sl_h5_dset_open(src, file, src->lengths_name, true, "dataset.lengths",
                         len, err);
  for (int i = 0;
       !src->lengths_name && st == SL_OK && len->d < 0 && k_length_names[i];
       i++)
    st = sl_h5_dset_open(src, file, k_length_names[i], false, "dataset.lengths",
                         len, err);
  if (st != SL_OK)
    return st;
  if (len->d < 0)
    return sl_err_set(err, SL_EFORMAT,
                      "%s: dataset %s has shape %s: rank %s, read as "
                      "fixed-size encoded images (rows of JPEG/PNG bytes "
                      "padded to %" PRIu64 "), but no dataset gives each "
                      "row's length (lengths, sizes or lens; name it with "
                      "dataset.lengths)",
                      src->path, img->name, sh,
                      img->rank == 1 ? "1 opaque" : "2", row_bytes);
  bool fl = false;
  uint64_t k = 0;
  st = check_numeric(src, len, n, img->name, &fl, &k, err);
  if (st == SL_OK && (fl || k != 1))
    st = sl_err_set(err, SL_EFORMAT,
                    "%s: dataset %s (the lengths of %s's rows) has %s; one "
                    "integer a row read",
                    src->path, len->name, img->name,
                    fl ? "float values" : "more than one value a row");
  if (st != SL_OK)
    return st;
  if (!(*out = malloc(n * sizeof **out)))
    return sl_err_set(err, SL_ENOMEM, "%s: no memory for %" PRIu64 " lengths",
                      src->path, n);
  return read_all(src, len, H5T_NATIVE_INT64, *out, err);
}
