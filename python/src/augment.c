/* sluice.augment's C side: sl_augment_apply on a writable buffer of u8
 * HWC pixels, and sl_augment_policy_draw on a config built from an INI
 * path and (key, value) pairs. Failures come back as (status, message)
 * for sluice/augment.py to raise as the matching sluice.Error. */
#include "module.h"

#include <string.h>

static int get_double(PyObject *d, const char *key, double *out) {
  PyObject *v = PyDict_GetItemString(d, key); /* borrowed */
  if (!v)
    return 0;
  double x = PyFloat_AsDouble(v);
  if (x == -1.0 && PyErr_Occurred())
    return -1;
  *out = x;
  return 0;
}

static int get_int(PyObject *d, const char *key, int *out) {
  PyObject *v = PyDict_GetItemString(d, key);
  if (!v)
    return 0;
  long x = PyLong_AsLong(v);
  if (x == -1 && PyErr_Occurred())
    return -1;
  if (x < -2147483647L || x > 2147483647L) {
    PyErr_Format(PyExc_OverflowError, "%s: %ld does not fit an int", key, x);
    return -1;
  }
  *out = (int)x;
  return 0;
}

/* A sequence of n floats under key (a number is repeated n times). */
static int get_doubles(PyObject *d, const char *key, double *out, int n) {
  PyObject *v = PyDict_GetItemString(d, key);
  if (!v)
    return 0;
  if (PyNumber_Check(v)) {
    double x = PyFloat_AsDouble(v);
    if (x == -1.0 && PyErr_Occurred())
      return -1;
    for (int i = 0; i < n; i++)
      out[i] = x;
    return 0;
  }
  PyObject *seq = PySequence_Fast(v, key);
  if (!seq)
    return -1;
  Py_ssize_t len = PySequence_Size(seq);
  if (len != n) {
    Py_DECREF(seq);
    PyErr_Format(PyExc_ValueError, "%s: %d values, not %zd", key, n, len);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    PyObject *item = PySequence_GetItem(seq, i);
    double x = item ? PyFloat_AsDouble(item) : -1.0;
    Py_XDECREF(item);
    if (x == -1.0 && PyErr_Occurred()) {
      Py_DECREF(seq);
      return -1;
    }
    out[i] = x;
  }
  Py_DECREF(seq);
  return 0;
}

static int args_from_dict(PyObject *d, sl_augment_args *a) {
  double ks[2] = {0, 0};
  int rc = get_double(d, "angle", &a->angle) ||
           get_doubles(d, "translate", a->translate, 2) ||
           get_double(d, "scale", &a->scale) ||
           get_doubles(d, "shear", a->shear, 2) ||
           get_doubles(d, "center", a->center, 2) ||
           get_int(d, "interpolation", &a->interpolation) ||
           get_doubles(d, "fill", a->fill, 3) ||
           get_double(d, "factor", &a->factor) ||
           get_int(d, "bits", &a->bits) ||
           get_double(d, "threshold", &a->threshold) ||
           get_doubles(d, "kernel_size", ks, 2) ||
           get_doubles(d, "sigma", a->sigma, 2) || get_int(d, "i", &a->i) ||
           get_int(d, "j", &a->j) || get_int(d, "h", &a->h) ||
           get_int(d, "w", &a->w) || get_doubles(d, "value", a->value, 3);
  if (rc)
    return -1;
  a->has_center = PyDict_GetItemString(d, "center") != NULL;
  a->has_fill = PyDict_GetItemString(d, "fill") != NULL;
  a->kernel_size[0] = (int)ks[0];
  a->kernel_size[1] = (int)ks[1];
  return 0;
}

static PyObject *failure(sl_status st, const char *msg) {
  return Py_BuildValue("(is)", (int)st, msg);
}

/* _augment_apply(op, buffer, height, width, channels, params) */
PyObject *py_augment_apply(PyObject *m, PyObject *args) {
  (void)m;
  const char *op;
  PyObject *buf, *params;
  unsigned int h, w, c;
  if (!PyArg_ParseTuple(args, "sOIIIO!", &op, &buf, &h, &w, &c, &PyDict_Type,
                        &params))
    return NULL;
  sl_augment_args a;
  memset(&a, 0, sizeof a);
  if (args_from_dict(params, &a) != 0)
    return NULL;
  Py_buffer view;
  if (PyObject_GetBuffer(buf, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0)
    return NULL;
  if ((size_t)view.len != (size_t)h * w * c) {
    PyBuffer_Release(&view);
    PyErr_Format(PyExc_ValueError, "buffer of %zd bytes for %ux%ux%u pixels",
                 view.len, h, w, c);
    return NULL;
  }
  char msg[512];
  sl_status st;
  Py_BEGIN_ALLOW_THREADS st =
      sl_augment_apply(op, &a, view.buf, h, w, c, msg, sizeof msg);
  Py_END_ALLOW_THREADS PyBuffer_Release(&view);
  if (st != SL_OK)
    return failure(st, msg);
  Py_RETURN_NONE;
}

/* _augment_draw(ini_path or None, [(key, value)...], epoch, index, width,
 * height) -> [(op name, magnitude), ...] */
PyObject *py_augment_draw(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *path, *items;
  unsigned long long epoch, index;
  unsigned int w, h;
  if (!PyArg_ParseTuple(args, "OOKKII", &path, &items, &epoch, &index, &w, &h))
    return NULL;
  sl_config *cfg = NULL;
  if (sl_config_create(&cfg) != SL_OK)
    return PyErr_NoMemory();
  PyObject *result = NULL;
  sl_status st = SL_OK;
  if (path != Py_None) {
    PyObject *fs = NULL;
    if (!PyUnicode_FSConverter(path, &fs))
      goto done;
    st = sl_config_load_ini(cfg, PyBytes_AsString(fs));
    Py_DECREF(fs);
    if (st != SL_OK) {
      result = failure(st, sl_config_errmsg(cfg));
      goto done;
    }
  }
  PyObject *seq = PySequence_Fast(items, "options must be a sequence");
  if (!seq)
    goto done;
  for (Py_ssize_t i = 0; i < PySequence_Size(seq); i++) {
    PyObject *pair = PySequence_GetItem(seq, i);
    const char *k, *v;
    int ok = pair && PyArg_ParseTuple(pair, "ss", &k, &v);
    if (ok)
      st = sl_config_set(cfg, k, v);
    Py_XDECREF(pair);
    if (!ok) {
      Py_DECREF(seq);
      goto done;
    }
    if (st != SL_OK) {
      Py_DECREF(seq);
      result = failure(st, sl_config_errmsg(cfg));
      goto done;
    }
  }
  Py_DECREF(seq);
  st = sl_config_validate(cfg);
  if (st != SL_OK) {
    result = failure(st, sl_config_errmsg(cfg));
    goto done;
  }
  sl_augment_step steps[SL_AUGMENT_MAX_STEPS];
  uint32_t n = 0;
  st = sl_augment_policy_draw(cfg, epoch, index, w, h, steps, &n);
  if (st != SL_OK) {
    result = failure(st, sl_strerror(st));
    goto done;
  }
  result = PyList_New((Py_ssize_t)n);
  for (uint32_t i = 0; result && i < n; i++) {
    PyObject *t = Py_BuildValue("(sd)", steps[i].op, steps[i].magnitude);
    if (!t) {
      Py_CLEAR(result);
      break;
    }
    PyList_SetItem(result, (Py_ssize_t)i, t); /* steals t */
  }
  if (result) { /* success: wrap so the caller can tell it from a failure */
    PyObject *ok = Py_BuildValue("(iN)", 0, result);
    result = ok;
  }
done:
  sl_config_destroy(cfg);
  return result;
}
