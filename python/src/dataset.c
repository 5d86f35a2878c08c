/*
 * sluice.Dataset and sluice.Writer: random access to a dataset file and the
 * atomic writer, as sl_dataset_* and sl_writer_* give them.
 */
#include "module.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Calls that drop the GIL (decode, read) count themselves in calls; close()
 * from another thread clears ds at once (later calls raise StateError),
 * then waits for calls to reach zero before freeing the dataset. */
typedef struct {
  PyObject_HEAD sl_dataset *ds;
  pthread_mutex_t mu; /* guards calls */
  pthread_cond_t idle;
  long calls;
  int sync_ok; /* mu and idle initialised */
} DatasetObject;

typedef struct {
  PyObject_HEAD sl_writer *w;
} WriterObject;

/* ---- Dataset ------------------------------------------------------------ */
static PyObject *Dataset_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  PyObject *o = PyType_GenericNew(tp, args, kw);
  if (!o)
    return NULL;
  DatasetObject *self = (DatasetObject *)o;
  if (pthread_mutex_init(&self->mu, NULL)) {
    Py_DECREF(o);
    return PyErr_Format(PyExc_OSError, "Dataset: pthread_mutex_init failed");
  }
  if (pthread_cond_init(&self->idle, NULL)) {
    pthread_mutex_destroy(&self->mu);
    Py_DECREF(o);
    return PyErr_Format(PyExc_OSError, "Dataset: pthread_cond_init failed");
  }
  self->sync_ok = 1;
  return o;
}

static int Dataset_init(PyObject *o, PyObject *args, PyObject *kw) {
  DatasetObject *self = (DatasetObject *)o;
  PyObject *path;
  static char *kwlist[] = {"path", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&", kwlist,
                                   PyUnicode_FSConverter, &path))
    return -1;
  if (self->ds) {
    PyErr_SetString(PyExc_RuntimeError, "Dataset already initialised");
    Py_DECREF(path);
    return -1;
  }
  const char *p = PyBytes_AsString(path);
  sl_dataset *ds = NULL;
  sl_status st;
  Py_BEGIN_ALLOW_THREADS
  st = sl_dataset_open_file(&ds, p);
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (st != SL_OK) {
    raise_status(o, st, sl_dataset_errmsg(ds));
    sl_dataset_close(ds);
    return -1;
  }
  self->ds = ds;
  return 0;
}

static void Dataset_dealloc(PyObject *o) {
  DatasetObject *self = (DatasetObject *)o;
  /* No call is in flight: each holds a reference to self. */
  sl_dataset_close(self->ds);
  if (self->sync_ok) {
    pthread_cond_destroy(&self->idle);
    pthread_mutex_destroy(&self->mu);
  }
  instance_free(o);
}

static int ds_check(DatasetObject *self);

/* Counts a call that is about to drop the GIL, holding it (so close cannot
 * clear ds before the count is taken); NULL with StateError raised when the
 * dataset was closed meanwhile (an allocation may run other threads). */
static sl_dataset *ds_enter(DatasetObject *self) {
  if (ds_check(self))
    return NULL;
  pthread_mutex_lock(&self->mu);
  self->calls++;
  pthread_mutex_unlock(&self->mu);
  return self->ds;
}

/* Ends a counted call; with or without the GIL. The dataset may be freed
 * by a waiting close() as soon as this returns. */
static void ds_leave(DatasetObject *self) {
  pthread_mutex_lock(&self->mu);
  if (--self->calls == 0)
    pthread_cond_broadcast(&self->idle);
  pthread_mutex_unlock(&self->mu);
}

static int ds_check(DatasetObject *self) {
  if (!self->ds) {
    raise_status((PyObject *)self, SL_ESTATE, "the dataset is closed");
    return -1;
  }
  return 0;
}

static Py_ssize_t Dataset_len(PyObject *o) {
  DatasetObject *self = (DatasetObject *)o;
  if (ds_check(self))
    return -1;
  return (Py_ssize_t)sl_dataset_count(self->ds);
}

static int ds_index(DatasetObject *self, PyObject *arg, uint64_t *out) {
  if (ds_check(self))
    return -1;
  long long i = PyLong_AsLongLong(arg);
  if (i == -1 && PyErr_Occurred())
    return -1;
  uint64_t n = sl_dataset_count(self->ds);
  if (i < 0)
    i += (long long)n;
  if (i < 0 || (uint64_t)i >= n) {
    PyErr_Format(PyExc_IndexError, "sample %lld out of range (%llu samples)", i,
                 (unsigned long long)n);
    return -1;
  }
  *out = (uint64_t)i;
  return 0;
}

/* Raises st with the dataset's message, copied under its lock (a decode on
 * another thread may be writing it). */
static PyObject *raise_ds(DatasetObject *self, sl_status st) {
  char msg[1024];
  sl_dataset_errmsg_copy(self->ds, msg, sizeof msg);
  return raise_status((PyObject *)self, st, msg);
}

/* info(i) -> dict of the index entry (label, codec, size, targets...) */
static PyObject *Dataset_info(PyObject *o, PyObject *arg) {
  DatasetObject *self = (DatasetObject *)o;
  uint64_t i;
  if (ds_index(self, arg, &i))
    return NULL;
  sl_sample_meta m;
  sl_status st = sl_dataset_info(self->ds, i, &m);
  if (st != SL_OK)
    return raise_ds(self, st);
  PyObject *targets = PyList_New(m.target_width);
  if (!targets)
    return NULL;
  for (uint32_t k = 0; k < m.target_width; k++) {
    PyObject *x = PyFloat_FromDouble(m.targets[k]);
    if (!x) {
      Py_DECREF(targets);
      return NULL;
    }
    PyList_SetItem(targets, k, x);
  }
  return Py_BuildValue("{s:i,s:i,s:k,s:k,s:k,s:N,s:K,s:k}", "label", m.label,
                       "codec", (int)m.codec, "width", (unsigned long)m.width,
                       "height", (unsigned long)m.height, "channels",
                       (unsigned long)m.channels, "targets", targets,
                       "stored_bytes", (unsigned long long)m.stored_bytes,
                       "box_count", (unsigned long)m.box_count);
}

/* boxes(i) -> [(x0, y0, x1, y1, label, flags), ...] in the stored image's
 * pixels ([] for a sample or file without boxes). */
static PyObject *Dataset_boxes(PyObject *o, PyObject *arg) {
  DatasetObject *self = (DatasetObject *)o;
  uint64_t i;
  if (ds_index(self, arg, &i))
    return NULL;
  const sl_box *b;
  uint32_t n;
  sl_status st = sl_dataset_boxes(self->ds, i, &b, &n);
  if (st != SL_OK)
    return raise_ds(self, st);
  PyObject *list = PyList_New(n);
  for (uint32_t k = 0; list && k < n; k++) {
    PyObject *t = Py_BuildValue("(ddddik)", (double)b[k].x0, (double)b[k].y0,
                                (double)b[k].x1, (double)b[k].y1,
                                (int)b[k].label, (unsigned long)b[k].flags);
    if (!t) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SetItem(list, k, t);
  }
  return list;
}

/* decode(i) -> Tensor (h, w, c) u8, owning its pixels */
static PyObject *Dataset_decode(PyObject *o, PyObject *arg) {
  DatasetObject *self = (DatasetObject *)o;
  uint64_t i;
  if (ds_index(self, arg, &i))
    return NULL;
  sl_sample_meta m;
  sl_status st = sl_dataset_info(self->ds, i, &m);
  if (st != SL_OK)
    return raise_ds(self, st);
  size_t cap = (size_t)m.width * m.height * m.channels;
  PyObject *buf = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)cap);
  if (!buf)
    return NULL;
  char *p = PyByteArray_AsString(buf);
  size_t len = 0;
  char msg[1024];
  sl_dataset *ds = ds_enter(self);
  if (!ds) {
    Py_DECREF(buf);
    return NULL;
  }
  Py_BEGIN_ALLOW_THREADS
  st = sl_dataset_decode(ds, i, p, cap, &len);
  if (st != SL_OK)
    sl_dataset_errmsg_copy(ds, msg, sizeof msg);
  ds_leave(self);
  Py_END_ALLOW_THREADS
  if (st != SL_OK) {
    Py_DECREF(buf);
    return raise_status(o, st, msg);
  }
  PyObject *t = tensor_owned(o, buf, m.height, m.width, m.channels);
  Py_DECREF(buf);
  return t;
}

/* read(i) -> bytes: the stored image */
static PyObject *Dataset_read(PyObject *o, PyObject *arg) {
  DatasetObject *self = (DatasetObject *)o;
  uint64_t i;
  if (ds_index(self, arg, &i))
    return NULL;
  sl_sample_meta m;
  sl_status st = sl_dataset_info(self->ds, i, &m);
  if (st != SL_OK)
    return raise_ds(self, st);
  PyObject *buf =
      PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)m.stored_bytes);
  if (!buf)
    return NULL;
  char *p = PyByteArray_AsString(buf);
  size_t len = 0;
  char msg[1024];
  /* The read may wait on the disk: other threads run meanwhile. */
  sl_dataset *ds = ds_enter(self);
  if (!ds) {
    Py_DECREF(buf);
    return NULL;
  }
  Py_BEGIN_ALLOW_THREADS
  st = sl_dataset_read(ds, i, p, (size_t)m.stored_bytes, &len);
  if (st != SL_OK)
    sl_dataset_errmsg_copy(ds, msg, sizeof msg);
  ds_leave(self);
  Py_END_ALLOW_THREADS
  if (st != SL_OK) {
    Py_DECREF(buf);
    return raise_status(o, st, msg);
  }
  PyObject *b =
      PyBytes_FromStringAndSize(PyByteArray_AsString(buf), (Py_ssize_t)len);
  Py_DECREF(buf);
  return b;
}

/* name(i) -> str: the path the sample was packed from ("" if none) */
static PyObject *Dataset_name(PyObject *o, PyObject *arg) {
  DatasetObject *self = (DatasetObject *)o;
  uint64_t i;
  if (ds_index(self, arg, &i))
    return NULL;
  sl_sample_meta m;
  sl_status st = sl_dataset_info(self->ds, i, &m);
  if (st != SL_OK)
    return raise_ds(self, st);
  size_t cap = (size_t)m.name_bytes + 1;
  char *buf = malloc(cap);
  if (!buf)
    return PyErr_NoMemory();
  st = sl_dataset_name(self->ds, i, buf, cap);
  if (st != SL_OK) {
    free(buf);
    return raise_ds(self, st);
  }
  PyObject *r = PyUnicode_DecodeFSDefault(buf);
  free(buf);
  return r;
}

static PyObject *Dataset_class_names(PyObject *o, void *u) {
  (void)u;
  DatasetObject *self = (DatasetObject *)o;
  if (ds_check(self))
    return NULL;
  uint32_t n = sl_dataset_class_count(self->ds);
  PyObject *list = PyList_New(n);
  if (!list)
    return NULL;
  for (uint32_t k = 0; k < n; k++) {
    const char *name = sl_dataset_class_name(self->ds, k);
    PyObject *s = PyUnicode_DecodeUTF8(
        name ? name : "", (Py_ssize_t)strlen(name ? name : ""), "replace");
    if (!s) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SetItem(list, k, s);
  }
  return list;
}

static PyObject *Dataset_target_width(PyObject *o, void *u) {
  (void)u;
  DatasetObject *self = (DatasetObject *)o;
  if (ds_check(self))
    return NULL;
  return PyLong_FromUnsignedLong(sl_dataset_target_width(self->ds));
}

static PyObject *Dataset_format(PyObject *o, void *u) {
  (void)u;
  DatasetObject *self = (DatasetObject *)o;
  if (ds_check(self))
    return NULL;
  return PyUnicode_FromString(sl_dataset_format(self->ds));
}

static PyObject *Dataset_close(PyObject *o, PyObject *u) {
  (void)u;
  DatasetObject *self = (DatasetObject *)o;
  sl_dataset *ds = self->ds;
  self->ds = NULL; /* later calls raise StateError */
  if (ds) {
    /* Waits for the decodes and reads in flight on other threads. */
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&self->mu);
    while (self->calls > 0)
      pthread_cond_wait(&self->idle, &self->mu);
    pthread_mutex_unlock(&self->mu);
    sl_dataset_close(ds);
    Py_END_ALLOW_THREADS
  }
  Py_RETURN_NONE;
}

static PyMethodDef Dataset_methods[] = {
    {"info", Dataset_info, METH_O, "The index entry of sample i, as a dict."},
    {"boxes", Dataset_boxes, METH_O,
     "Sample i's boxes: [(x0, y0, x1, y1, label, flags)]."},
    {"decode", Dataset_decode, METH_O,
     "Sample i's pixels, u8 HWC, as a Tensor (DLPack, buffer protocol)."},
    {"read", Dataset_read, METH_O, "Sample i's stored bytes."},
    {"name", Dataset_name, METH_O,
     "Sample i's name: the path, relative to the packed folder, of the "
     "image it was made from (sl_dataset_name); '' when none is recorded."},
    {"close", Dataset_close, METH_NOARGS,
     "Frees the dataset, after the calls in flight on other threads; later "
     "calls raise StateError."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Dataset_getset[] = {
    {"class_names", Dataset_class_names, NULL, NULL, NULL},
    {"target_width", Dataset_target_width, NULL, NULL, NULL},
    {"format", Dataset_format, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot Dataset_slots[] = {
    {Py_tp_init, Dataset_init},
    {Py_tp_new, Dataset_new},
    {Py_tp_dealloc, Dataset_dealloc},
    {Py_tp_methods, Dataset_methods},
    {Py_tp_getset, Dataset_getset},
    {Py_sq_length, Dataset_len},
    {Py_tp_doc, "A dataset file opened for random access (sl_dataset). "
                "Read-only: any thread may read; memory: the index (24 "
                "bytes a sample) and targets."},
    {0, NULL}};

PyType_Spec Dataset_spec = {"sluice._sluice._Dataset", sizeof(DatasetObject), 0,
                            Py_TPFLAGS_DEFAULT, Dataset_slots};

/* ---- Writer ------------------------------------------------------------- */
static int Writer_init(PyObject *o, PyObject *args, PyObject *kw) {
  WriterObject *self = (WriterObject *)o;
  PyObject *path;
  const char *format = NULL, *settings = NULL;
  unsigned int target_width = 0, levels = 0, level_quality = 0;
  int keep_jpeg = 0, replace = 0;
  static char *kwlist[] = {"path",      "format",        "target_width",
                           "keep_jpeg", "replace",       "settings",
                           "levels",    "level_quality", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|zIppzII", kwlist,
                                   PyUnicode_FSConverter, &path, &format,
                                   &target_width, &keep_jpeg, &replace,
                                   &settings, &levels, &level_quality))
    return -1;
  sl_writer_options opts;
  memset(&opts, 0, sizeof opts);
  opts.format = format;
  opts.target_width = target_width;
  opts.keep_jpeg = keep_jpeg;
  opts.replace = replace;
  opts.settings = settings;
  opts.levels = levels;
  opts.level_quality = level_quality;
  sl_writer *w = NULL;
  sl_status st = sl_writer_create(&w, PyBytes_AsString(path), &opts);
  Py_DECREF(path);
  if (st != SL_OK) {
    raise_status(o, st, w ? sl_writer_errmsg(w) : "");
    sl_writer_destroy(w);
    return -1;
  }
  sl_writer_destroy(self->w);
  self->w = w;
  return 0;
}

static void Writer_dealloc(PyObject *o) {
  sl_writer_destroy(((WriterObject *)o)->w);
  instance_free(o);
}

static int w_check(WriterObject *self) {
  if (!self->w) {
    raise_status((PyObject *)self, SL_ESTATE, "the writer is closed");
    return -1;
  }
  return 0;
}

/* Fills a malloc'd float array from a sequence (or NULL for None). */
static int floats_from(PyObject *seq, float **out) {
  *out = NULL;
  if (seq == Py_None)
    return 0;
  PyObject *f = PySequence_Fast(seq, "targets must be a sequence of floats");
  if (!f)
    return -1;
  Py_ssize_t n = PySequence_Size(f);
  float *v = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  if (!v) {
    Py_DECREF(f);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *x = PySequence_GetItem(f, i);
    double d = x ? PyFloat_AsDouble(x) : -1.0;
    Py_XDECREF(x);
    if (PyErr_Occurred()) {
      free(v);
      Py_DECREF(f);
      return -1;
    }
    v[i] = (float)d;
  }
  Py_DECREF(f);
  *out = v;
  return 0;
}

/* add_pixels(pixels, width, height, channels, label=-1, targets=None,
 * name=None) */
static PyObject *Writer_add_pixels(PyObject *o, PyObject *args, PyObject *kw) {
  WriterObject *self = (WriterObject *)o;
  if (w_check(self))
    return NULL;
  Py_buffer px;
  unsigned int w, h, c;
  int label = -1;
  PyObject *targets = Py_None;
  const char *name = NULL;
  static char *kwlist[] = {"pixels", "width",   "height", "channels",
                           "label",  "targets", "name",   NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "y*III|iOz", kwlist, &px, &w, &h,
                                   &c, &label, &targets, &name))
    return NULL;
  float *t = NULL;
  if (floats_from(targets, &t)) {
    PyBuffer_Release(&px);
    return NULL;
  }
  sl_status st = SL_OK;
  if ((size_t)px.len != (size_t)w * h * c)
    PyErr_Format(PyExc_ValueError,
                 "pixels hold %zd bytes, width × height × channels is %zu",
                 px.len, (size_t)w * h * c);
  else
    st = sl_writer_add_pixels(self->w, px.buf, w, h, c, label, t, name);
  free(t);
  PyBuffer_Release(&px);
  if (PyErr_Occurred())
    return NULL;
  if (st != SL_OK)
    return raise_status(o, st, sl_writer_errmsg(self->w));
  Py_RETURN_NONE;
}

/* add_encoded(data, label=-1, targets=None, name=None) */
/* boxes: None, or a sequence of (x0, y0, x1, y1, label[, flags]) into a
 * malloc'd array (*out NULL when empty). Returns 0, or -1 with an
 * exception set. */
static int boxes_from(PyObject *boxes, sl_box **out, uint32_t *n) {
  *out = NULL;
  *n = 0;
  if (boxes == Py_None)
    return 0;
  Py_ssize_t len = PySequence_Size(boxes);
  if (len < 0)
    return -1;
  if (len > SL_BOXES_MAX) {
    PyErr_Format(PyExc_ValueError, "%zd boxes (at most %d a sample)", len,
                 SL_BOXES_MAX);
    return -1;
  }
  sl_box *b = len ? malloc((size_t)len * sizeof *b) : NULL;
  if (len && !b) {
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t k = 0; k < len; k++) {
    PyObject *item = PySequence_GetItem(boxes, k);
    PyObject *tup = item ? PySequence_Tuple(item) : NULL;
    Py_XDECREF(item);
    unsigned int flags = 0;
    int ok = tup && PyArg_ParseTuple(tup, "ffffi|I", &b[k].x0, &b[k].y0,
                                     &b[k].x1, &b[k].y1, &b[k].label, &flags);
    Py_XDECREF(tup);
    if (!ok) {
      free(b);
      return -1;
    }
    b[k].flags = flags;
  }
  *out = b;
  *n = (uint32_t)len;
  return 0;
}

static PyObject *Writer_add_encoded(PyObject *o, PyObject *args, PyObject *kw) {
  WriterObject *self = (WriterObject *)o;
  if (w_check(self))
    return NULL;
  Py_buffer data;
  int label = -1;
  PyObject *targets = Py_None, *boxes = Py_None;
  const char *name = NULL;
  static char *kwlist[] = {"data", "label", "targets", "name", "boxes", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "y*|iOzO", kwlist, &data, &label,
                                   &targets, &name, &boxes))
    return NULL;
  float *t = NULL;
  sl_box *bx = NULL;
  uint32_t nb = 0;
  if (floats_from(targets, &t) || boxes_from(boxes, &bx, &nb)) {
    free(t);
    PyBuffer_Release(&data);
    return NULL;
  }
  sl_status st = sl_writer_add_annotated(self->w, data.buf, (size_t)data.len,
                                         label, t, name, bx, nb);
  free(bx);
  free(t);
  PyBuffer_Release(&data);
  if (st != SL_OK)
    return raise_status(o, st, sl_writer_errmsg(self->w));
  Py_RETURN_NONE;
}

static PyObject *Writer_set_class_name(PyObject *o, PyObject *args) {
  WriterObject *self = (WriterObject *)o;
  if (w_check(self))
    return NULL;
  unsigned int label;
  const char *name;
  if (!PyArg_ParseTuple(args, "Is", &label, &name))
    return NULL;
  sl_status st = sl_writer_set_class_name(self->w, label, name);
  if (st != SL_OK)
    return raise_status(o, st, sl_writer_errmsg(self->w));
  Py_RETURN_NONE;
}

static PyObject *Writer_commit(PyObject *o, PyObject *u) {
  (void)u;
  WriterObject *self = (WriterObject *)o;
  if (w_check(self))
    return NULL;
  sl_status st;
  Py_BEGIN_ALLOW_THREADS
  st = sl_writer_commit(self->w);
  Py_END_ALLOW_THREADS
  if (st != SL_OK)
    return raise_status(o, st, sl_writer_errmsg(self->w));
  Py_RETURN_NONE;
}

static PyObject *Writer_close(PyObject *o, PyObject *u) {
  (void)u;
  WriterObject *self = (WriterObject *)o;
  sl_writer_destroy(self->w);
  self->w = NULL;
  Py_RETURN_NONE;
}

static PyObject *Writer_count(PyObject *o, void *u) {
  (void)u;
  WriterObject *self = (WriterObject *)o;
  if (w_check(self))
    return NULL;
  return PyLong_FromUnsignedLongLong(sl_writer_count(self->w));
}

static PyMethodDef Writer_methods[] = {
    {"add_pixels", (PyCFunction)(void (*)(void))Writer_add_pixels,
     METH_VARARGS | METH_KEYWORDS, "Appends u8 HWC pixels as a raw sample."},
    {"add_encoded", (PyCFunction)(void (*)(void))Writer_add_encoded,
     METH_VARARGS | METH_KEYWORDS,
     "add_encoded(data, label=-1, targets=None, name=None, boxes=None): "
     "appends a JPEG or PNG file's bytes; boxes: (x0, y0, x1, y1, label[, "
     "flags]) in its pixels (flags: 1 crowd, 2 difficult)."},
    {"set_class_name", Writer_set_class_name, METH_VARARGS, NULL},
    {"commit", Writer_commit, METH_NOARGS,
     "Writes, syncs and names the file (atomic)."},
    {"close", Writer_close, METH_NOARGS,
     "Frees the writer; without a commit nothing is left at the path."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Writer_getset[] = {
    {"count", Writer_count, NULL, "Samples added so far.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot Writer_slots[] = {
    {Py_tp_init, Writer_init},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, Writer_dealloc},
    {Py_tp_methods, Writer_methods},
    {Py_tp_getset, Writer_getset},
    {Py_tp_doc,
     "Writer(path, format=None, target_width=0, keep_jpeg=False, "
     "replace=False, settings=None, levels=0, level_quality=0): an atomic "
     "dataset writer (sl_writer; levels: bit m-1 stores JPEGs also at m/8, "
     "e.g. 8 for 1/2, 40 for 3/4 and 1/2): "
     "nothing is at path until commit(). Memory: one LMDB transaction (<= 32 "
     "MiB) and 16 + 4 x target_width bytes a sample until commit. Thread "
     "safety: one thread at a time."},
    {0, NULL}};

PyType_Spec Writer_spec = {"sluice._sluice.Writer", sizeof(WriterObject), 0,
                           Py_TPFLAGS_DEFAULT, Writer_slots};
