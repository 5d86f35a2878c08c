/* sluice.augment's C side: sl_augment_apply on a writable buffer of u8
 * HWC pixels, and sl_augment_policy_draw / sl_augment_recipe_draw on a config
 * built from an INI path and (key, value) pairs. Failures come back as (status,
 * message) for sluice/augment.py to raise as the matching sluice.Error. */
#include "module.h"

#include <stdio.h>
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

/* params read into *a, and buf's writable C-contiguous bytes into *view,
 * which must be want bytes long (else a ValueError saying they are not
 * enough for what). Returns 0, or -1 with the Python error set. */
static int args_and_buffer(PyObject *params, sl_augment_args *a, PyObject *buf,
                           size_t want, const char *what, Py_buffer *view) {
  memset(a, 0, sizeof *a);
  if (args_from_dict(params, a) != 0)
    return -1;
  if (PyObject_GetBuffer(buf, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0)
    return -1;
  if ((size_t)view->len != want) {
    Py_ssize_t len = view->len;
    PyBuffer_Release(view);
    PyErr_Format(PyExc_ValueError, "buffer of %zd bytes for %s", len, what);
    return -1;
  }
  return 0;
}

/* _augment_ops(): sl_augment_op_get's table as a list of (name, params,
 * moves_boxes), from which sluice/augment.py builds OPS and BOX_OPS. */
PyObject *py_augment_ops(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  PyObject *list = PyList_New(0);
  if (!list)
    return NULL;
  sl_augment_op_info op;
  for (uint32_t i = 0; sl_augment_op_get(i, &op); i++) {
    PyObject *row = Py_BuildValue("(ssO)", op.name, op.params,
                                  op.moves_boxes ? Py_True : Py_False);
    if (!row || PyList_Append(list, row)) {
      Py_XDECREF(row);
      Py_DECREF(list);
      return NULL;
    }
    Py_DECREF(row);
  }
  return list;
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
  char what[64];
  snprintf(what, sizeof what, "%ux%ux%u pixels", h, w, c);
  sl_augment_args a;
  Py_buffer view;
  if (args_and_buffer(params, &a, buf, (size_t)h * w * c, what, &view) != 0)
    return NULL;
  char msg[512];
  sl_status st;
  Py_BEGIN_ALLOW_THREADS
  st = sl_augment_apply(op, &a, view.buf, h, w, c, msg, sizeof msg);
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&view);
  if (st != SL_OK)
    return failure(st, msg);
  Py_RETURN_NONE;
}

/* _augment_boxes(op, buffer, n, height, width, params): n float32 boxes */
PyObject *py_augment_boxes(PyObject *m, PyObject *args) {
  (void)m;
  const char *op;
  PyObject *buf, *params;
  unsigned int n, h, w;
  if (!PyArg_ParseTuple(args, "sOIIIO!", &op, &buf, &n, &h, &w, &PyDict_Type,
                        &params))
    return NULL;
  char what[32];
  snprintf(what, sizeof what, "%u boxes", n);
  sl_augment_args a;
  Py_buffer view;
  if (args_and_buffer(params, &a, buf, (size_t)n * 4 * sizeof(float), what,
                      &view) != 0)
    return NULL;
  char msg[512];
  sl_status st = sl_augment_boxes(op, &a, view.buf, n, h, w, msg, sizeof msg);
  PyBuffer_Release(&view);
  if (st != SL_OK)
    return failure(st, msg);
  Py_RETURN_NONE;
}

/* The steps as [(op name, magnitude), ...], a new reference. */
static PyObject *steps_list(const sl_augment_step *steps, uint32_t n) {
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (uint32_t i = 0; list && i < n; i++) {
    PyObject *t = Py_BuildValue("(sd)", steps[i].op, steps[i].magnitude);
    if (!t) {
      Py_CLEAR(list);
      break;
    }
    PyList_SetItem(list, (Py_ssize_t)i, t); /* steals t */
  }
  return list;
}

/* sl_augment_recipe_draw's result as a dict (sluice.augment.draw_recipe). */
static PyObject *draw_dict(const sl_augment_draw *d) {
  static const char *names[4] = {"brightness", "contrast", "saturation", "hue"};
  PyObject *steps = steps_list(d->steps, d->n_steps);
  if (!steps)
    return NULL;
  PyObject *jitter = Py_None, *blur = Py_None, *erase = Py_None;
  Py_INCREF(Py_None);
  Py_INCREF(Py_None);
  Py_INCREF(Py_None);
  if (d->jitter) {
    Py_DECREF(jitter);
    jitter = Py_BuildValue("{s(ssss)s{sdsdsdsd}}", "order",
                           names[d->jitter_order[0]], names[d->jitter_order[1]],
                           names[d->jitter_order[2]], names[d->jitter_order[3]],
                           "factors", names[0], d->jitter_factor[0], names[1],
                           d->jitter_factor[1], names[2], d->jitter_factor[2],
                           names[3], d->jitter_factor[3]);
  }
  if (d->blur) {
    Py_DECREF(blur);
    blur = PyFloat_FromDouble(d->blur_sigma);
  }
  if (d->erase) {
    Py_DECREF(erase);
    erase =
        Py_BuildValue("(iiii)", d->erase_i, d->erase_j, d->erase_h, d->erase_w);
  }
  PyObject *out = NULL;
  if (jitter && blur && erase)
    out = Py_BuildValue("{sOsOsOsOsO}", "steps", steps, "jitter", jitter,
                        "grayscale", d->grayscale ? Py_True : Py_False,
                        "blur_sigma", blur, "erase", erase);
  Py_DECREF(steps);
  Py_XDECREF(jitter);
  Py_XDECREF(blur);
  Py_XDECREF(erase);
  return out;
}

/* _augment_draw(ini_path or None, [(key, value)...], epoch, index, width,
 * height, recipe=False) -> [(op name, magnitude), ...], or with recipe
 * the dict of draw_dict */
PyObject *py_augment_draw(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *path, *items;
  unsigned long long epoch, index;
  unsigned int w, h;
  int recipe = 0;
  if (!PyArg_ParseTuple(args, "OOKKII|p", &path, &items, &epoch, &index, &w, &h,
                        &recipe))
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
  if (recipe) {
    sl_augment_draw d;
    st = sl_augment_recipe_draw(cfg, epoch, index, w, h, &d);
    if (st != SL_OK) {
      result = failure(st, sl_strerror(st));
      goto done;
    }
    result = draw_dict(&d);
  } else {
    sl_augment_step steps[SL_AUGMENT_MAX_STEPS];
    uint32_t n = 0;
    st = sl_augment_policy_draw(cfg, epoch, index, w, h, steps, &n);
    if (st != SL_OK) {
      result = failure(st, sl_strerror(st));
      goto done;
    }
    result = steps_list(steps, n);
  }
  if (result) { /* success: wrap so the caller can tell it from a failure */
    PyObject *ok = Py_BuildValue("(iN)", 0, result);
    result = ok;
  }
done:
  sl_config_destroy(cfg);
  return result;
}
