/* The Tensor type (batch.h): a view of one array of a batch (or of a
 * decoded sample) exported through __dlpack__ (versioned and legacy
 * capsules) and the buffer protocol, and the CUDA stream handling of
 * device exports (the runtime loaded at run time only). */
#include "batch.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Tensor ------------------------------------------------------------- */
static DLDataType batch_dl_dtype(sl_dtype d, Py_ssize_t *itemsize) {
  DLDataType t = {DL_UINT, 8, 1};
  switch (d) {
  case SL_DTYPE_U8:
    break;
  case SL_DTYPE_FP16:
    t.code = DL_FLOAT, t.bits = 16;
    break;
  case SL_DTYPE_BF16:
    t.code = DL_BFLOAT, t.bits = 16;
    break;
  case SL_DTYPE_FP32:
    t.code = DL_FLOAT, t.bits = 32;
    break;
  }
  *itemsize = t.bits / 8;
  return t;
}

static void tensor_fill_strides(TensorObject *t) {
  int64_t s = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    t->strides[i] = s;
    s *= t->shape[i];
  }
  for (int i = 0; i < t->ndim; i++) {
    t->bshape[i] = (Py_ssize_t)t->shape[i];
    t->bstrides[i] = (Py_ssize_t)(t->strides[i] * t->itemsize);
  }
}

PyObject *tensor_new(BatchObject *bo, int which) {
  struct bcore *bc = bo->bc;
  const sl_batch *b = &bc->b;
  TensorObject *t =
      PyObject_New(TensorObject, state_of((PyObject *)bo)->tensor_type);
  if (!t)
    return NULL;
  t->bc = bc;
  t->owner = NULL;
  t->on_device = 0;
  t->device_id = 0;
  switch (which) {
  case T_IMAGES:
    t->data = b->data;
    t->dtype = batch_dl_dtype(b->dtype, &t->itemsize);
    t->ndim = 4;
    t->shape[0] = b->n;
    if (b->layout == SL_LAYOUT_NCHW) {
      t->shape[1] = b->channels, t->shape[2] = b->height,
      t->shape[3] = b->width;
    } else {
      t->shape[1] = b->height, t->shape[2] = b->width,
      t->shape[3] = b->channels;
    }
    t->on_device = b->on_device;
    t->device_id = bc->core->device_id;
    break;
  case T_LABELS:
    t->data = (void *)(uintptr_t)b->labels;
    t->dtype = (DLDataType){DL_INT, 32, 1};
    t->itemsize = 4;
    t->ndim = 1;
    t->shape[0] = b->n;
    break;
  case T_INDICES:
    /* int64, not the C uint64: torch before 2.3 has no uint64 tensors
     * (from_dlpack: "Unsupported kUInt bits 64"), and an index never
     * reaches 2^63. */
    t->data = (void *)(uintptr_t)b->indices;
    t->dtype = (DLDataType){DL_INT, 64, 1};
    t->itemsize = 8;
    t->ndim = 1;
    t->shape[0] = b->n;
    break;
  case T_BOXES:
    t->data = (void *)(uintptr_t)b->boxes;
    t->dtype = (DLDataType){DL_FLOAT, 32, 1};
    t->itemsize = 4;
    t->ndim = 3;
    t->shape[0] = b->n;
    t->shape[1] = b->box_capacity;
    t->shape[2] = 4;
    break;
  case T_BOX_LABELS:
    t->data = (void *)(uintptr_t)b->box_labels;
    t->dtype = (DLDataType){DL_INT, 32, 1};
    t->itemsize = 4;
    t->ndim = 2;
    t->shape[0] = b->n;
    t->shape[1] = b->box_capacity;
    break;
  case T_BOX_COUNTS:
    /* int32, not the C uint32: torch before 2.3 has no uint32 tensors,
     * and a count is at most SL_BOXES_MAX. */
    t->data = (void *)(uintptr_t)b->box_counts;
    t->dtype = (DLDataType){DL_INT, 32, 1};
    t->itemsize = 4;
    t->ndim = 1;
    t->shape[0] = b->n;
    break;
  default:
    t->data = (void *)(uintptr_t)b->targets;
    t->dtype = (DLDataType){DL_FLOAT, 32, 1};
    t->itemsize = 4;
    t->ndim = 2;
    t->shape[0] = b->n;
    t->shape[1] = b->target_width;
    break;
  }
  tensor_fill_strides(t);
  atomic_fetch_add(&bc->refs, 1);
  return (PyObject *)t;
}

PyObject *tensor_owned(PyObject *self, PyObject *owner, uint32_t h, uint32_t w,
                       uint32_t c) {
  TensorObject *t = PyObject_New(TensorObject, state_of(self)->tensor_type);
  if (!t)
    return NULL;
  t->bc = NULL;
  t->owner = owner;
  Py_INCREF(owner);
  t->data = PyByteArray_AsString(owner);
  t->on_device = 0;
  t->device_id = 0;
  t->dtype = (DLDataType){DL_UINT, 8, 1};
  t->itemsize = 1;
  t->ndim = 3;
  t->shape[0] = h, t->shape[1] = w, t->shape[2] = c;
  tensor_fill_strides(t);
  return (PyObject *)t;
}

static void Tensor_dealloc(PyObject *o) {
  TensorObject *t = (TensorObject *)o;
  if (t->bc)
    bcore_decref(t->bc);
  Py_XDECREF(t->owner);
  instance_free(o);
}

static void export_free(struct export *e) {
  if (e->bc) {
    struct core *c = e->bc->core;
    atomic_fetch_add(&c->deleted, 1);
    bcore_decref(e->bc);
  }
  if (e->owner) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF(e->owner);
    PyGILState_Release(g);
  }
  free(e);
}

static void deleter_legacy(DLManagedTensor *m) {
  export_free((struct export *)m->manager_ctx);
}

static void deleter_v1(DLManagedTensorVersioned *m) {
  export_free((struct export *)m->manager_ctx);
}

/* Capsule destructors: a capsule never consumed deletes its tensor; a
 * consumed one was renamed ("used_...") and its consumer owns it. They may
 * run while an exception is set, so they neither raise nor clear one. */
static void capsule_legacy(PyObject *cap) {
  if (PyCapsule_IsValid(cap, "dltensor")) {
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (m && m->deleter)
      m->deleter(m);
  }
}

static void capsule_v1(PyObject *cap) {
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    DLManagedTensorVersioned *m =
        PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m && m->deleter)
      m->deleter(m);
  }
}

/* The CUDA runtime calls the exports need, from the runtime the consumer
 * (torch, JAX, CuPy) has loaded: the module links no CUDA and imports
 * without it. Resolved once, with the GIL held, by the first device export
 * that names a stream; read without it by core_drain afterwards (the
 * batch's reference count orders the two). */
typedef struct {
  int (*wait_event)(void *stream, void *event, unsigned flags);
  int (*event_create)(void **event, unsigned flags);
  int (*event_record)(void *event, void *stream);
  int (*event_destroy)(void *event);
  int (*stream_sync)(void *stream);
} cudart_fns;

static cudart_fns g_cudart;
static int g_cudart_ok; /* 1: every function found */

static int sym_to(void *h, const char *name, void *fn, size_t fn_size) {
  void *sym = dlsym(h, name);
  if (!sym)
    return -1;
  memcpy(fn, &sym, fn_size);
  return 0;
}

static int cudart_try(void *h) {
  cudart_fns f;
  if (sym_to(h, "cudaStreamWaitEvent", &f.wait_event, sizeof f.wait_event) ||
      sym_to(h, "cudaEventCreateWithFlags", &f.event_create,
             sizeof f.event_create) ||
      sym_to(h, "cudaEventRecord", &f.event_record, sizeof f.event_record) ||
      sym_to(h, "cudaEventDestroy", &f.event_destroy, sizeof f.event_destroy) ||
      sym_to(h, "cudaStreamSynchronize", &f.stream_sync,
             sizeof f.stream_sync)) {
    dlclose(h);
    return -1;
  }
  g_cudart = f; /* the handle stays open for the process */
  g_cudart_ok = 1;
  return 0;
}

/* A runtime the process has loaded already (the CUDA backend's, torch's)
 * first, whichever its version: loading a second one beside it would give
 * the process two; then the first one found on the search path. Events
 * and streams are the driver's handles, valid in any runtime. */
static int cudart_load(void) {
  if (g_cudart_ok)
    return 0;
  static const char *const libs[] = {"libcudart.so.13", "libcudart.so.12",
                                     "libcudart.so.11.0", "libcudart.so"};
  const size_t n = sizeof libs / sizeof libs[0];
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < n; i++) {
      void *h = dlopen(libs[i], RTLD_LAZY | (pass == 0 ? RTLD_NOLOAD : 0));
      if (h && cudart_try(h) == 0)
        return 0;
    }
  return -1;
}

/* Makes stream `to` wait for the work queued on `from` so far (an event,
 * no host sync); when that cannot be done, waits for `from` on the host.
 * Consumer thread, without the GIL. */
static void join_stream(void *to, void *from) {
  enum { EVENT_DISABLE_TIMING = 2 };
  void *ev = NULL;
  if (g_cudart.event_create(&ev, EVENT_DISABLE_TIMING) == 0) {
    int err = g_cudart.event_record(ev, from);
    if (!err)
      err = g_cudart.wait_event(to, ev, 0);
    g_cudart.event_destroy(ev); /* freed once the wait is done */
    if (!err)
      return;
  }
  /* A stream that cannot be waited on (destroyed: its work is done) gives
   * an error here too; nothing more is possible. */
  (void)g_cudart.stream_sync(from);
}

/* The stream a batch's slot is released on: its first export's, joined by
 * every other export's; NULL (the legacy default stream) when none named
 * one. */
void *release_stream(struct bcore *bc) {
  if (bc->nstreams == 0)
    return NULL;
  void *first = (void *)bc->streams[0];
  for (int i = 1; i < bc->nstreams; i++)
    join_stream(first, (void *)bc->streams[i]);
  return first;
}

/* Makes the consumer's stream wait for the batch (no host sync) and adds it
 * to the streams the slot's release waits for. s: 1 (legacy default), 2
 * (per thread) or a cudaStream_t; -1: the consumer synchronises itself. */
static int tensor_stream_wait(TensorObject *t, intptr_t s) {
  if (!t->bc || !t->on_device || s == -1)
    return 0;
  struct bcore *bc = t->bc;
  int seen = 0;
  for (int i = 0; i < bc->nstreams; i++)
    seen |= bc->streams[i] == (uintptr_t)s;
  if (!seen && bc->nstreams == BATCH_STREAMS) {
    PyErr_Format(PyExc_BufferError,
                 "this batch is exported on %d streams already (the most "
                 "its release waits for): export on one of them, or "
                 "synchronise and pass stream=-1",
                 BATCH_STREAMS);
    return -1;
  }
  if ((bc->b.ready || (!seen && bc->nstreams > 0)) && cudart_load()) {
    raise_status((PyObject *)t, SL_ECUDA,
                 "__dlpack__(stream=...): cannot find cudaStreamWaitEvent "
                 "and the event calls (libcudart not loadable)");
    return -1;
  }
  if (bc->b.ready) {
    /* ready is the cudaEvent_t itself (sluice.h), not a pointer to one. */
    int err = g_cudart.wait_event((void *)s, bc->b.ready, 0);
    if (err) {
      char msg[128];
      snprintf(msg, sizeof msg,
               "cudaStreamWaitEvent on the batch's ready event failed "
               "(cudaError %d)",
               err);
      raise_status((PyObject *)t, SL_ECUDA, msg);
      return -1;
    }
  }
  if (!seen)
    bc->streams[bc->nstreams++] = (uintptr_t)s;
  return 0;
}

/* __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) */
static PyObject *Tensor_dlpack(PyObject *o, PyObject *args, PyObject *kw) {
  TensorObject *t = (TensorObject *)o;
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None,
           *copy = Py_None;
  static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO", kwlist, &stream,
                                   &max_version, &dl_device, &copy))
    return NULL;
  if (copy != Py_None && PyObject_IsTrue(copy) == 1) {
    PyErr_SetString(PyExc_BufferError,
                    "sluice tensors export views only: copy=True is not "
                    "supported by __dlpack__ (copy the array after import)");
    return NULL;
  }
  intptr_t s = 1; /* None: the legacy default stream (DLPack, CUDA) */
  if (stream != Py_None) {
    s = (intptr_t)PyLong_AsSsize_t(stream);
    if (s == -1 && PyErr_Occurred())
      return NULL;
    if (!t->on_device && s != -1) {
      PyErr_SetString(PyExc_BufferError,
                      "stream must be None for a tensor in host memory");
      return NULL;
    }
    if (t->on_device && s == 0) {
      PyErr_SetString(PyExc_ValueError,
                      "stream 0 is ambiguous (DLPack): pass 1 for the legacy "
                      "default stream or 2 for the per-thread one");
      return NULL;
    }
  }
  if (tensor_stream_wait(t, s))
    return NULL;
  int versioned = 0;
  if (max_version != Py_None) {
    PyObject *major = PySequence_GetItem(max_version, 0);
    if (!major)
      return NULL;
    long mj = PyLong_AsLong(major);
    Py_DECREF(major);
    if (mj == -1 && PyErr_Occurred())
      return NULL;
    versioned = mj >= 1;
  }
  struct export *e = calloc(1, sizeof *e);
  if (!e)
    return PyErr_NoMemory();
  memcpy(e->shape, t->shape, sizeof e->shape);
  memcpy(e->strides, t->strides, sizeof e->strides);
  e->versioned = versioned;
  DLTensor *dt = versioned ? &e->m.v1.dl_tensor : &e->m.legacy.dl_tensor;
  dt->data = t->data;
  dt->device.device_type = t->on_device ? DL_CUDA : DL_CPU;
  dt->device.device_id = t->on_device ? t->device_id : 0;
  dt->ndim = t->ndim;
  dt->dtype = t->dtype;
  dt->shape = e->shape;
  dt->strides = e->strides;
  dt->byte_offset = 0;
  PyObject *cap;
  if (versioned) {
    e->m.v1.version = (DLPackVersion){1, 0};
    e->m.v1.manager_ctx = e;
    e->m.v1.deleter = deleter_v1;
    e->m.v1.flags = 0;
    cap = PyCapsule_New(&e->m.v1, "dltensor_versioned", capsule_v1);
  } else {
    e->m.legacy.manager_ctx = e;
    e->m.legacy.deleter = deleter_legacy;
    cap = PyCapsule_New(&e->m.legacy, "dltensor", capsule_legacy);
  }
  if (!cap) {
    free(e);
    return NULL;
  }
  /* Only now does the export own references: the capsule frees it. */
  if (t->bc) {
    e->bc = t->bc;
    atomic_fetch_add(&t->bc->refs, 1);
    atomic_fetch_add(&t->bc->core->exports, 1);
  }
  if (t->owner) {
    e->owner = t->owner;
    Py_INCREF(t->owner);
  }
  return cap;
}

static PyObject *Tensor_dlpack_device(PyObject *o, PyObject *unused) {
  (void)unused;
  TensorObject *t = (TensorObject *)o;
  return Py_BuildValue("(ii)", t->on_device ? DL_CUDA : DL_CPU,
                       t->on_device ? t->device_id : 0);
}

static int Tensor_getbuffer(PyObject *o, Py_buffer *view, int flags) {
  TensorObject *t = (TensorObject *)o;
  if (t->on_device) {
    PyErr_SetString(PyExc_BufferError,
                    "the tensor is in device memory: use __dlpack__");
    return -1;
  }
  if (t->dtype.code == DL_BFLOAT) {
    PyErr_SetString(PyExc_BufferError,
                    "bfloat16 has no buffer format: use __dlpack__");
    return -1;
  }
  static char fmt_u8[] = "B", fmt_f16[] = "e", fmt_f32[] = "f", fmt_i32[] = "i",
              fmt_i64[] = "q";
  char *fmt = fmt_u8;
  if (t->dtype.code == DL_FLOAT)
    fmt = t->dtype.bits == 16 ? fmt_f16 : fmt_f32;
  else if (t->dtype.code == DL_INT)
    fmt = t->dtype.bits == 64 ? fmt_i64 : fmt_i32;
  Py_ssize_t len = t->itemsize;
  for (int i = 0; i < t->ndim; i++)
    len *= t->bshape[i];
  view->buf = t->data;
  view->obj = o;
  Py_INCREF(o);
  view->len = len;
  view->readonly = 0;
  view->itemsize = t->itemsize;
  view->format = (flags & PyBUF_FORMAT) ? fmt : NULL;
  view->ndim = t->ndim;
  view->shape = (flags & PyBUF_ND) ? t->bshape : NULL;
  view->strides = (flags & PyBUF_STRIDES) ? t->bstrides : NULL;
  view->suboffsets = NULL;
  view->internal = NULL;
  return 0;
}

static void Tensor_releasebuffer(PyObject *o, Py_buffer *view) {
  (void)o;
  (void)view;
}

static PyObject *Tensor_get_shape(PyObject *o, void *unused) {
  (void)unused;
  TensorObject *t = (TensorObject *)o;
  PyObject *tup = PyTuple_New(t->ndim);
  if (!tup)
    return NULL;
  for (int i = 0; i < t->ndim; i++) {
    PyObject *x = PyLong_FromLongLong(t->shape[i]);
    if (!x) {
      Py_DECREF(tup);
      return NULL;
    }
    PyTuple_SetItem(tup, i, x);
  }
  return tup;
}

static PyObject *Tensor_get_data_ptr(PyObject *o, void *unused) {
  (void)unused;
  return PyLong_FromVoidPtr(((TensorObject *)o)->data);
}

static PyObject *Tensor_get_dtype(PyObject *o, void *unused) {
  (void)unused;
  TensorObject *t = (TensorObject *)o;
  const char *name = "uint8";
  if (t->dtype.code == DL_FLOAT)
    name = t->dtype.bits == 16 ? "float16" : "float32";
  else if (t->dtype.code == DL_BFLOAT)
    name = "bfloat16";
  else if (t->dtype.code == DL_INT)
    name = t->dtype.bits == 64 ? "int64" : "int32";
  return PyUnicode_FromString(name);
}

static PyMethodDef Tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))Tensor_dlpack,
     METH_VARARGS | METH_KEYWORDS,
     "A DLPack capsule viewing the data (versioned when max_version >= "
     "(1, 0)); the slot stays held until its deleter runs."},
    {"__dlpack_device__", Tensor_dlpack_device, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Tensor_getset[] = {
    {"shape", Tensor_get_shape, NULL, NULL, NULL},
    {"data_ptr", Tensor_get_data_ptr, NULL, "Address of the first element.",
     NULL},
    {"dtype", Tensor_get_dtype, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot Tensor_slots[] = {
    {Py_tp_dealloc, Tensor_dealloc},
    {Py_tp_methods, Tensor_methods},
    {Py_tp_getset, Tensor_getset},
    {Py_bf_getbuffer, Tensor_getbuffer},
    {Py_bf_releasebuffer, Tensor_releasebuffer},
    {Py_tp_doc,
     "A view of one array of a batch (or of a decoded sample): exports "
     "__dlpack__ and the buffer protocol without copying. Holds the batch's "
     "slot until it and every export are freed. Read from any thread."},
    {0, NULL}};

PyType_Spec Tensor_spec = {
    "sluice._sluice.Tensor", sizeof(TensorObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, Tensor_slots};
