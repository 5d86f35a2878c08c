/*
 * _sluice: the CPython binding of include/sluice.h, on the limited API
 * (abi3, Python >= 3.11). The Python layer (python/sluice/__init__.py) maps
 * options, rank and world, and iteration onto the objects here.
 *
 * Lifetime: a Loader's C state (struct core) is reference counted. The
 * Python Loader holds one reference, every batch it hands out one more.
 * A batch (struct bcore) is reference counted too: the Python Batch holds
 * one, every exported DLPack tensor and every Tensor view object one. When
 * a batch's count reaches zero, on any thread (a DLPack deleter may run on
 * any thread, after close()), its slot is queued for release; the consumer
 * thread releases queued slots before each next. sl_loader_close runs when
 * the last reference to the core goes, so a view never outlives its slot.
 *
 * close() may come from another thread (a watchdog) while a call is in
 * flight with the GIL dropped: each such call holds a reference to the core
 * for its duration, and close takes the op lock (waiting for the call in
 * flight) to mark the core closed, so a call that was waiting for the lock
 * and every later one raise StateError.
 */
#include "module.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- DLPack (v1.0 ABI, with the legacy DLManagedTensor) ----------------- */
typedef struct {
  int32_t device_type;
  int32_t device_id;
} DLDevice;
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

enum { DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BFLOAT = 4 };
enum { DL_CPU = 1, DL_CUDA = 2 };

/* ---- Types -------------------------------------------------------------- */
struct bcore;

/* A loader's C state, shared by the Python Loader and its batches. */
struct core {
  atomic_long refs;
  sl_loader *ld;
  pthread_mutex_t op;   /* one consumer call at a time */
  int closed;           /* under op: close() ran, calls refuse */
  pthread_mutex_t lock; /* guards pending */
  struct bcore *pending;
  int prefetch;
  int device_id;
  atomic_ullong exports;     /* DLPack tensors handed out */
  atomic_ullong deleted;     /* of which deleted (deleter called) */
  atomic_ullong outstanding; /* batches not yet queued for release */
};

/* One batch handed out by sl_loader_next. Its exports may name several
 * streams (one tensor given to two consumers): the release waits for all of
 * them, so the slot is never rewritten while one still reads it. */
enum { BATCH_STREAMS = 8 };
struct bcore {
  atomic_long refs;
  struct core *core;
  sl_batch b;
  struct bcore *next; /* in core->pending */
  /* The distinct cudaStream_t of the exports, in order (none: released on
   * the legacy default stream). Written with the GIL held while the batch
   * is referenced, read by core_drain once the last reference went. */
  uintptr_t streams[BATCH_STREAMS];
  int nstreams;
};

static void *release_stream(struct bcore *bc);

typedef struct {
  PyObject_HEAD struct core *core;
} LoaderObject;

typedef struct {
  PyObject_HEAD struct bcore *bc;
} BatchObject;

/* Which array of a batch a Tensor views. */
enum { T_IMAGES, T_LABELS, T_INDICES, T_TARGETS, T_OWNED };

typedef struct {
  PyObject_HEAD struct bcore *bc; /* NULL for T_OWNED */
  PyObject *owner;                /* T_OWNED: the bytearray holding data */
  void *data;
  int ndim;
  int64_t shape[4];
  int64_t strides[4]; /* in elements */
  DLDataType dtype;
  int on_device;
  int device_id;
  Py_ssize_t itemsize;
  Py_ssize_t bshape[4], bstrides[4]; /* for the buffer protocol */
} TensorObject;

/* The managed tensor an export hands to its consumer. */
struct export {
  union {
    DLManagedTensor legacy;
    DLManagedTensorVersioned v1;
  } m;
  int versioned;
  struct bcore *bc;
  PyObject *owner; /* T_OWNED: a strong reference, dropped with the GIL */
  int64_t shape[4];
  int64_t strides[4];
};

module_state *state_of(PyObject *o) {
  return PyType_GetModuleState(Py_TYPE(o));
}

/* ---- Errors ------------------------------------------------------------- */
PyObject *raise_status(PyObject *self, sl_status st, const char *msg) {
  module_state *ms = state_of(self);
  if (!ms)
    return NULL; /* PyType_GetModuleState set the error */
  PyObject *type = ms->error;
  if ((unsigned)st < 32 && ms->by_status[st])
    type = ms->by_status[st];
  PyObject *text = PyUnicode_FromString(msg && msg[0] ? msg : sl_strerror(st));
  if (!text)
    return NULL;
  PyObject *exc = PyObject_CallFunctionObjArgs(type, text, NULL);
  Py_DECREF(text);
  if (!exc)
    return NULL;
  PyObject *code = PyLong_FromLong((long)st);
  if (code) {
    PyObject_SetAttrString(exc, "status", code);
    Py_DECREF(code);
  }
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
  return NULL;
}

/* ---- Reference counting of the C state ---------------------------------- */
static void core_decref(struct core *c) {
  if (atomic_fetch_sub(&c->refs, 1) != 1)
    return;
  sl_loader_close(c->ld); /* frees the slots still held */
  struct bcore *p = c->pending;
  while (p) {
    struct bcore *n = p->next;
    free(p);
    p = n;
  }
  pthread_mutex_destroy(&c->op);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

/* Any thread, with or without the GIL. */
static void bcore_decref(struct bcore *bc) {
  if (atomic_fetch_sub(&bc->refs, 1) != 1)
    return;
  struct core *c = bc->core;
  atomic_fetch_sub(&c->outstanding, 1);
  pthread_mutex_lock(&c->lock);
  bc->next = c->pending;
  c->pending = bc;
  pthread_mutex_unlock(&c->lock);
  core_decref(c);
}

/* Consumer thread, holding c->op. */
static void core_drain(struct core *c) {
  pthread_mutex_lock(&c->lock);
  struct bcore *p = c->pending;
  c->pending = NULL;
  pthread_mutex_unlock(&c->lock);
  while (p) {
    struct bcore *n = p->next;
    sl_batch_release(c->ld, &p->b, release_stream(p));
    free(p);
    p = n;
  }
}

void instance_free(PyObject *o) {
  PyTypeObject *tp = Py_TYPE(o);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(o);
  Py_DECREF(tp);
}

/* ---- Loader ------------------------------------------------------------- */
/* Takes c->op from a thread holding the GIL, dropping the GIL while another
 * thread's next holds op, so that waiting never stalls other threads. */
static void op_lock_gil(struct core *c) {
  if (pthread_mutex_trylock(&c->op) == 0)
    return;
  Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&c->op);
  Py_END_ALLOW_THREADS
}

static int loader_check(LoaderObject *self) {
  if (!self->core) {
    raise_status((PyObject *)self, SL_ESTATE, "the loader is closed");
    return -1;
  }
  return 0;
}

static const char closed_msg[] = "the loader was closed by another thread "
                                 "while this call waited";

/* For a call that drops the GIL: the open loader's core with a reference
 * the call holds until core_leave, so a close() meanwhile cannot free it;
 * NULL with StateError raised when the loader is closed. */
static struct core *core_enter(LoaderObject *self) {
  if (loader_check(self))
    return NULL;
  atomic_fetch_add(&self->core->refs, 1);
  return self->core;
}

/* Drops core_enter's reference; the last one closes the loader, so the GIL
 * is released around it. Any thread holding the GIL. */
static void core_leave(struct core *c) {
  Py_BEGIN_ALLOW_THREADS core_decref(c);
  Py_END_ALLOW_THREADS
}

/* _Loader(ini_path_or_None, [(key, value), ...]) */
static int Loader_init(PyObject *o, PyObject *args, PyObject *kw) {
  LoaderObject *self = (LoaderObject *)o;
  PyObject *path = Py_None, *items = NULL;
  static char *kwlist[] = {"config", "options", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO", kwlist, &path, &items))
    return -1;
  if (self->core) {
    PyErr_SetString(PyExc_RuntimeError, "Loader already initialised");
    return -1;
  }
  sl_config *cfg = NULL;
  if (sl_config_create(&cfg) != SL_OK) {
    PyErr_NoMemory();
    return -1;
  }
  sl_status st = SL_OK;
  if (path != Py_None) {
    PyObject *fs = NULL;
    if (!PyUnicode_FSConverter(path, &fs))
      goto fail_cfg;
    st = sl_config_load_ini(cfg, PyBytes_AsString(fs));
    Py_DECREF(fs);
    if (st != SL_OK) {
      raise_status(o, st, sl_config_errmsg(cfg));
      goto fail_cfg;
    }
  }
  if (items && items != Py_None) {
    PyObject *it = PyObject_GetIter(items);
    if (!it)
      goto fail_cfg;
    PyObject *pair;
    while ((pair = PyIter_Next(it))) {
      const char *k, *v;
      if (!PyArg_ParseTuple(pair, "ss", &k, &v)) {
        Py_DECREF(pair);
        Py_DECREF(it);
        goto fail_cfg;
      }
      st = sl_config_set(cfg, k, v);
      Py_DECREF(pair);
      if (st != SL_OK) {
        Py_DECREF(it);
        raise_status(o, st, sl_config_errmsg(cfg));
        goto fail_cfg;
      }
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
      goto fail_cfg;
  }
  char buf[64];
  int prefetch = 0, gpu = 0;
  if (sl_config_get(cfg, "device.prefetch", buf, sizeof buf) == SL_OK)
    prefetch = atoi(buf);
  if (sl_config_get(cfg, "device.gpu", buf, sizeof buf) == SL_OK)
    gpu = atoi(buf);

  sl_loader *ld = NULL;
  Py_BEGIN_ALLOW_THREADS st = sl_loader_open(&ld, cfg);
  Py_END_ALLOW_THREADS if (st != SL_OK) {
    raise_status(o, st, ld ? sl_loader_errmsg(ld) : sl_config_errmsg(cfg));
    sl_loader_close(ld);
    goto fail_cfg;
  }
  sl_config_destroy(cfg);
  struct core *c = calloc(1, sizeof *c);
  if (!c) {
    sl_loader_close(ld);
    PyErr_NoMemory();
    return -1;
  }
  atomic_init(&c->refs, 1);
  c->ld = ld;
  c->prefetch = prefetch;
  c->device_id = gpu;
  pthread_mutex_init(&c->op, NULL);
  pthread_mutex_init(&c->lock, NULL);
  self->core = c;
  return 0;
fail_cfg:
  sl_config_destroy(cfg);
  return -1;
}

static PyObject *Loader_close(PyObject *o, PyObject *unused) {
  (void)unused;
  LoaderObject *self = (LoaderObject *)o;
  struct core *c = self->core;
  self->core = NULL; /* later calls raise StateError */
  if (c) {
    /* Waits for the call in flight (it holds op); one waiting for op sees
     * closed and refuses. */
    Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&c->op);
    c->closed = 1;
    pthread_mutex_unlock(&c->op);
    core_decref(c);
    Py_END_ALLOW_THREADS
  }
  Py_RETURN_NONE;
}

static void Loader_dealloc(PyObject *o) {
  LoaderObject *self = (LoaderObject *)o;
  if (self->core)
    core_decref(self->core);
  instance_free(o);
}

static PyObject *Loader_start_epoch(PyObject *o, PyObject *arg) {
  LoaderObject *self = (LoaderObject *)o;
  if (loader_check(self))
    return NULL;
  unsigned long long e = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred())
    return NULL;
  struct core *c = core_enter(self);
  if (!c)
    return NULL;
  sl_status st;
  char msg[1024];
  Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&c->op);
  if (c->closed) {
    st = SL_ESTATE;
    snprintf(msg, sizeof msg, "%s", closed_msg);
  } else {
    core_drain(c);
    st = sl_loader_start_epoch(c->ld, e);
    if (st != SL_OK)
      snprintf(msg, sizeof msg, "%s", sl_loader_errmsg(c->ld));
  }
  pthread_mutex_unlock(&c->op);
  core_decref(c);
  Py_END_ALLOW_THREADS if (st != SL_OK) return raise_status(o, st, msg);
  Py_RETURN_NONE;
}

/* Returns a Batch, or None at the end of the epoch. The GIL is released
 * while it waits. */
static PyObject *Loader_next(PyObject *o, PyObject *unused) {
  (void)unused;
  LoaderObject *self = (LoaderObject *)o;
  if (loader_check(self))
    return NULL;
  struct bcore *bc = calloc(1, sizeof *bc);
  if (!bc)
    return PyErr_NoMemory();
  struct core *c = core_enter(self);
  if (!c) {
    free(bc);
    return NULL;
  }
  sl_status st;
  char msg[1200];
  Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&c->op);
  if (c->closed) {
    st = SL_ESTATE;
    snprintf(msg, sizeof msg, "%s", closed_msg);
  } else {
    core_drain(c);
    st = sl_loader_next(c->ld, &bc->b);
    if (st != SL_OK && st != SL_END)
      snprintf(msg, sizeof msg, "%s", sl_loader_errmsg(c->ld));
  }
  pthread_mutex_unlock(&c->op);
  Py_END_ALLOW_THREADS if (st == SL_END) {
    free(bc);
    core_leave(c);
    Py_RETURN_NONE;
  }
  if (st != SL_OK) {
    free(bc);
    core_leave(c);
    if (st == SL_ESTATE && strstr(msg, "sl_loader_start_epoch first"))
      snprintf(msg, sizeof msg,
               "no epoch started: call loader.set_epoch(e) first, or "
               "iterate loader.epoch(e)");
    if (st == SL_ESTATE && strstr(msg, "slots are held")) {
      size_t n = strlen(msg);
      snprintf(msg + n, sizeof msg - n,
               " (device.prefetch = %d: the Python side holds %llu batches; "
               "drop batches and every tensor made from them, or raise "
               "device.prefetch)",
               c->prefetch, (unsigned long long)atomic_load(&c->outstanding));
    }
    return raise_status(o, st, msg);
  }
  BatchObject *b = PyObject_New(BatchObject, state_of(o)->batch_type);
  if (!b) {
    op_lock_gil(c);
    sl_batch_release(c->ld, &bc->b, NULL);
    pthread_mutex_unlock(&c->op);
    free(bc);
    core_leave(c);
    return NULL;
  }
  atomic_init(&bc->refs, 1);
  atomic_fetch_add(&c->outstanding, 1);
  bc->core = c; /* the batch takes over core_enter's reference */
  b->bc = bc;
  return (PyObject *)b;
}

static PyObject *Loader_batches_per_epoch(PyObject *o, PyObject *unused) {
  (void)unused;
  LoaderObject *self = (LoaderObject *)o;
  if (loader_check(self))
    return NULL;
  return PyLong_FromUnsignedLongLong(
      sl_loader_batches_per_epoch(self->core->ld));
}

static PyObject *Loader_sample_count(PyObject *o, PyObject *unused) {
  (void)unused;
  LoaderObject *self = (LoaderObject *)o;
  if (loader_check(self))
    return NULL;
  return PyLong_FromUnsignedLongLong(sl_loader_sample_count(self->core->ld));
}

static PyObject *Loader_resolution(PyObject *o, PyObject *arg) {
  LoaderObject *self = (LoaderObject *)o;
  if (loader_check(self))
    return NULL;
  unsigned long long e = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred())
    return NULL;
  return PyLong_FromUnsignedLong(sl_loader_epoch_resolution(self->core->ld, e));
}

static int dict_u64(PyObject *d, const char *k, unsigned long long v) {
  PyObject *x = PyLong_FromUnsignedLongLong(v);
  if (!x)
    return -1;
  int r = PyDict_SetItemString(d, k, x);
  Py_DECREF(x);
  return r;
}

static int dict_f(PyObject *d, const char *k, double v) {
  PyObject *x = PyFloat_FromDouble(v);
  if (!x)
    return -1;
  int r = PyDict_SetItemString(d, k, x);
  Py_DECREF(x);
  return r;
}

static int dict_s(PyObject *d, const char *k, const char *v) {
  PyObject *x = PyUnicode_FromString(v ? v : "");
  if (!x)
    return -1;
  int r = PyDict_SetItemString(d, k, x);
  Py_DECREF(x);
  return r;
}

static PyObject *Loader_stats(PyObject *o, PyObject *unused) {
  (void)unused;
  LoaderObject *self = (LoaderObject *)o;
  struct core *c = core_enter(self);
  if (!c)
    return NULL;
  sl_loader_stats s;
  sl_status st;
  char msg[1024];
  op_lock_gil(c);
  if (c->closed) {
    st = SL_ESTATE;
    snprintf(msg, sizeof msg, "%s", closed_msg);
  } else {
    st = sl_loader_stats_get(c->ld, &s);
    if (st != SL_OK)
      snprintf(msg, sizeof msg, "%s", sl_loader_errmsg(c->ld));
  }
  pthread_mutex_unlock(&c->op);
  core_leave(c);
  if (st != SL_OK)
    return raise_status(o, st, msg);
  PyObject *d = PyDict_New();
  if (!d)
    return NULL;
  PyObject *bad = PyList_New(0);
  if (!bad)
    goto fail;
  for (uint32_t i = 0; i < s.nbad && i < SL_STATS_BAD_KEEP; i++) {
    PyObject *x = PyLong_FromUnsignedLongLong(s.bad[i]);
    if (!x || PyList_Append(bad, x)) {
      Py_XDECREF(x);
      Py_DECREF(bad);
      goto fail;
    }
    Py_DECREF(x);
  }
  int r = PyDict_SetItemString(d, "bad", bad);
  Py_DECREF(bad);
  if (r || dict_u64(d, "epoch", s.epoch) || dict_u64(d, "batches", s.batches) ||
      dict_u64(d, "samples", s.samples) || dict_u64(d, "skipped", s.skipped) ||
      dict_u64(d, "failed", s.failed) ||
      dict_u64(d, "bytes_read", s.bytes_read) ||
      dict_u64(d, "read_ns", s.read_ns) ||
      dict_u64(d, "decode_ns", s.decode_ns) ||
      dict_u64(d, "augment_ns", s.augment_ns) ||
      dict_u64(d, "staging_wait_ns", s.staging_wait_ns) ||
      dict_u64(d, "slot_wait_ns", s.slot_wait_ns) ||
      dict_u64(d, "consumer_wait_ns", s.consumer_wait_ns) ||
      dict_u64(d, "epoch_batches", s.epoch_batches) ||
      dict_f(d, "epoch_seconds", s.epoch_seconds) ||
      dict_f(d, "images_per_s", s.images_per_s) ||
      dict_u64(d, "workers", s.workers) || dict_s(d, "backend", s.backend) ||
      dict_s(d, "backend_note", s.backend_note) ||
      dict_u64(d, "jpeg_samples", s.jpeg_samples) ||
      dict_u64(d, "jpeg_windowed", s.jpeg_windowed) ||
      dict_u64(d, "chunk_unfilters", s.chunk_unfilters) ||
      dict_u64(d, "level0_decodes", s.level_decodes[0]) ||
      dict_u64(d, "level1_decodes", s.level_decodes[1]) ||
      dict_u64(d, "level2_decodes", s.level_decodes[2]) ||
      dict_u64(d, "level3_decodes", s.level_decodes[3]) ||
      dict_u64(d, "dlpack_exports", atomic_load(&c->exports)) ||
      dict_u64(d, "dlpack_deleted", atomic_load(&c->deleted)) ||
      dict_u64(d, "batches_held", atomic_load(&c->outstanding)) ||
      dict_u64(d, "prefetch", (unsigned long long)c->prefetch))
    goto fail;
  return d;
fail:
  Py_DECREF(d);
  return NULL;
}

static PyObject *Loader_save_state(PyObject *o, PyObject *unused) {
  (void)unused;
  LoaderObject *self = (LoaderObject *)o;
  struct core *c = core_enter(self);
  if (!c)
    return NULL;
  unsigned char buf[SL_LOADER_STATE_BYTES];
  size_t len = sizeof buf;
  char msg[1024];
  sl_status st;
  op_lock_gil(c);
  if (c->closed) {
    st = SL_ESTATE;
    snprintf(msg, sizeof msg, "%s", closed_msg);
  } else {
    st = sl_loader_save_state(c->ld, buf, &len);
    if (st != SL_OK)
      snprintf(msg, sizeof msg, "%s", sl_loader_errmsg(c->ld));
  }
  pthread_mutex_unlock(&c->op);
  core_leave(c);
  if (st != SL_OK)
    return raise_status(o, st, msg);
  return PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)len);
}

static PyObject *Loader_restore_state(PyObject *o, PyObject *arg) {
  LoaderObject *self = (LoaderObject *)o;
  if (loader_check(self))
    return NULL;
  Py_buffer view;
  if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE))
    return NULL;
  struct core *c = core_enter(self);
  if (!c) {
    PyBuffer_Release(&view);
    return NULL;
  }
  char msg[1024];
  sl_status st;
  Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&c->op);
  if (c->closed) {
    st = SL_ESTATE;
    snprintf(msg, sizeof msg, "%s", closed_msg);
  } else {
    core_drain(c);
    st = sl_loader_restore_state(c->ld, view.buf, (size_t)view.len);
    if (st != SL_OK)
      snprintf(msg, sizeof msg, "%s", sl_loader_errmsg(c->ld));
  }
  pthread_mutex_unlock(&c->op);
  core_decref(c);
  Py_END_ALLOW_THREADS PyBuffer_Release(&view);
  if (st != SL_OK)
    return raise_status(o, st, msg);
  Py_RETURN_NONE;
}

static PyObject *Loader_closed(PyObject *o, void *unused) {
  (void)unused;
  return PyBool_FromLong(((LoaderObject *)o)->core == NULL);
}

static PyMethodDef Loader_methods[] = {
    {"close", Loader_close, METH_NOARGS,
     "Drops the loader; its threads stop and its memory goes once the last "
     "batch and tensor made from it are freed. From another thread: waits "
     "for the call in flight; later calls raise StateError."},
    {"start_epoch", Loader_start_epoch, METH_O, "sl_loader_start_epoch."},
    {"next", Loader_next, METH_NOARGS,
     "The next Batch, or None at the end of the epoch. Releases the GIL "
     "while it waits."},
    {"batches_per_epoch", Loader_batches_per_epoch, METH_NOARGS, NULL},
    {"sample_count", Loader_sample_count, METH_NOARGS, NULL},
    {"resolution", Loader_resolution, METH_O, NULL},
    {"stats", Loader_stats, METH_NOARGS, "sl_loader_stats as a dict."},
    {"save_state", Loader_save_state, METH_NOARGS, "The C state blob."},
    {"restore_state", Loader_restore_state, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Loader_getset[] = {
    {"closed", Loader_closed, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot Loader_slots[] = {
    {Py_tp_init, Loader_init},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, Loader_dealloc},
    {Py_tp_methods, Loader_methods},
    {Py_tp_getset, Loader_getset},
    {Py_tp_doc, "The C loader (use sluice.Loader). One consumer thread at a "
                "time; batches may be read from any thread."},
    {0, NULL}};

static PyType_Spec Loader_spec = {"sluice._sluice._Loader",
                                  sizeof(LoaderObject), 0, Py_TPFLAGS_DEFAULT,
                                  Loader_slots};

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

static PyObject *tensor_new(BatchObject *bo, int which) {
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

static int cudart_load(void) {
  if (g_cudart_ok)
    return 0;
  static const char *const libs[] = {"libcudart.so", "libcudart.so.12",
                                     "libcudart.so.11.0"};
  for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
    void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
      h = dlopen(libs[i], RTLD_LAZY);
    if (!h)
      continue;
    cudart_fns f;
    if (sym_to(h, "cudaStreamWaitEvent", &f.wait_event, sizeof f.wait_event) ||
        sym_to(h, "cudaEventCreateWithFlags", &f.event_create,
               sizeof f.event_create) ||
        sym_to(h, "cudaEventRecord", &f.event_record, sizeof f.event_record) ||
        sym_to(h, "cudaEventDestroy", &f.event_destroy,
               sizeof f.event_destroy) ||
        sym_to(h, "cudaStreamSynchronize", &f.stream_sync,
               sizeof f.stream_sync)) {
      dlclose(h);
      continue;
    }
    g_cudart = f; /* the handle stays open for the process */
    g_cudart_ok = 1;
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
static void *release_stream(struct bcore *bc) {
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
    int err = g_cudart.wait_event((void *)s, *(void **)bc->b.ready, 0);
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

static PyType_Spec Tensor_spec = {
    "sluice._sluice.Tensor", sizeof(TensorObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, Tensor_slots};

/* ---- Batch -------------------------------------------------------------- */
static void Batch_dealloc(PyObject *o) {
  BatchObject *b = (BatchObject *)o;
  if (b->bc)
    bcore_decref(b->bc);
  instance_free(o);
}

static PyObject *Batch_images(PyObject *o, void *u) {
  (void)u;
  return tensor_new((BatchObject *)o, T_IMAGES);
}
static PyObject *Batch_labels(PyObject *o, void *u) {
  (void)u;
  return tensor_new((BatchObject *)o, T_LABELS);
}
static PyObject *Batch_indices(PyObject *o, void *u) {
  (void)u;
  return tensor_new((BatchObject *)o, T_INDICES);
}
static PyObject *Batch_targets(PyObject *o, void *u) {
  (void)u;
  BatchObject *b = (BatchObject *)o;
  if (!b->bc->b.targets || b->bc->b.target_width == 0)
    Py_RETURN_NONE;
  return tensor_new(b, T_TARGETS);
}
static PyObject *Batch_valid(PyObject *o, void *u) {
  (void)u;
  return PyLong_FromUnsignedLong(((BatchObject *)o)->bc->b.valid);
}
static PyObject *Batch_mix(PyObject *o, void *u) {
  (void)u;
  const sl_batch *b = &((BatchObject *)o)->bc->b;
  static const char *const kinds[] = {"none", "mixup", "cutmix"};
  const char *kind = b->mix_kind < 3 ? kinds[b->mix_kind] : "unknown";
  return Py_BuildValue("(sd(IIII))", kind, (double)b->mix_lambda, b->mix_box[0],
                       b->mix_box[1], b->mix_box[2], b->mix_box[3]);
}
static PyObject *Batch_n(PyObject *o, void *u) {
  (void)u;
  return PyLong_FromUnsignedLong(((BatchObject *)o)->bc->b.n);
}
static PyObject *Batch_epoch(PyObject *o, void *u) {
  (void)u;
  return PyLong_FromUnsignedLongLong(((BatchObject *)o)->bc->b.epoch);
}
static PyObject *Batch_index(PyObject *o, void *u) {
  (void)u;
  return PyLong_FromUnsignedLongLong(((BatchObject *)o)->bc->b.index);
}
static PyObject *Batch_resolution(PyObject *o, void *u) {
  (void)u;
  const sl_batch *b = &((BatchObject *)o)->bc->b;
  return Py_BuildValue("(kk)", (unsigned long)b->height,
                       (unsigned long)b->width);
}
static PyObject *Batch_nbytes(PyObject *o, void *u) {
  (void)u;
  return PyLong_FromSize_t(((BatchObject *)o)->bc->b.bytes);
}
static PyObject *Batch_data_ptr(PyObject *o, void *u) {
  (void)u;
  return PyLong_FromVoidPtr(((BatchObject *)o)->bc->b.data);
}
static PyObject *Batch_on_device(PyObject *o, void *u) {
  (void)u;
  return PyBool_FromLong(((BatchObject *)o)->bc->b.on_device);
}

static PyGetSetDef Batch_getset[] = {
    {"images", Batch_images, NULL, "The pixels: a Tensor view of the slot.",
     NULL},
    {"labels", Batch_labels, NULL, "int32 labels (-1: unlabelled).", NULL},
    {"indices", Batch_indices, NULL,
     "int64 dataset index per sample (int64 so that "
     "torch.from_dlpack takes it on every torch).",
     NULL},
    {"targets", Batch_targets, NULL, "float32 (n, K) targets, or None.", NULL},
    {"valid", Batch_valid, NULL, "Samples [0, valid) are real.", NULL},
    {"mix", Batch_mix, NULL,
     "(kind, lambda, (y0, y1, x0, x1)): how Mixup/CutMix mixed the batch; "
     "sample j with sample n - 1 - j, weighing itself lambda.",
     NULL},
    {"n", Batch_n, NULL, NULL, NULL},
    {"epoch", Batch_epoch, NULL, NULL, NULL},
    {"index", Batch_index, NULL, "Batch index within the epoch.", NULL},
    {"resolution", Batch_resolution, NULL, "(height, width).", NULL},
    {"nbytes", Batch_nbytes, NULL, NULL, NULL},
    {"data_ptr", Batch_data_ptr, NULL, "Address of the slot's pixels.", NULL},
    {"on_device", Batch_on_device, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot Batch_slots[] = {
    {Py_tp_dealloc, Batch_dealloc},
    {Py_tp_getset, Batch_getset},
    {Py_tp_doc,
     "One batch: a slot of the loader's ring, held (never rewritten) until "
     "this object and every tensor made from it are freed. Memory: none of "
     "its own beyond the slot. Read from any thread."},
    {0, NULL}};

static PyType_Spec Batch_spec = {
    "sluice._sluice.Batch", sizeof(BatchObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, Batch_slots};

/* ---- Module ------------------------------------------------------------- */
static PyObject *mod_version(PyObject *m, PyObject *u) {
  (void)m;
  (void)u;
  return PyUnicode_FromString(sl_version_string());
}

static PyObject *mod_options(PyObject *m, PyObject *u) {
  (void)m;
  (void)u;
  size_t n = sl_option_count();
  PyObject *list = PyList_New(0);
  if (!list)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    sl_option_info info;
    if (sl_option_info_get(i, &info) != SL_OK)
      continue;
    PyObject *t = Py_BuildValue("(sssss)", info.key, info.type,
                                info.default_value, info.allowed, info.help);
    if (!t || PyList_Append(list, t)) {
      Py_XDECREF(t);
      Py_DECREF(list);
      return NULL;
    }
    Py_DECREF(t);
  }
  return list;
}

static PyMethodDef mod_methods[] = {
    {"version", mod_version, METH_NOARGS, "libsluice's version string."},
    {"_augment_apply", py_augment_apply, METH_VARARGS,
     "sl_augment_apply on a writable u8 buffer (sluice.augment.apply)."},
    {"_augment_draw", py_augment_draw, METH_VARARGS,
     "sl_augment_policy_draw (sluice.augment.draw)."},
    {"options", mod_options, METH_NOARGS,
     "Every config option as (key, type, default, allowed, help)."},
    {NULL, NULL, 0, NULL}};

static int add_type(PyObject *m, PyType_Spec *spec, PyTypeObject **out) {
  PyObject *t = PyType_FromModuleAndSpec(m, spec, NULL);
  if (!t)
    return -1;
  const char *dot = strrchr(spec->name, '.');
  if (PyModule_AddObjectRef(m, dot + 1, t)) {
    Py_DECREF(t);
    return -1;
  }
  *out = (PyTypeObject *)t;
  return 0;
}

static int mod_exec(PyObject *m) {
  module_state *s = PyModule_GetState(m);
  s->error = PyErr_NewExceptionWithDoc(
      "sluice.Error", "A libsluice call failed; .status is the sl_status.",
      NULL, NULL);
  if (!s->error || PyModule_AddObjectRef(m, "Error", s->error))
    return -1;
  static const struct {
    sl_status st;
    const char *name;
  } subs[] = {{SL_EINVAL, "InvalidArgumentError"},
              {SL_ENOMEM, "OutOfMemoryError"},
              {SL_EIO, "IOError"},
              {SL_ECONFIG, "ConfigError"},
              {SL_EFORMAT, "FormatError"},
              {SL_EDECODE, "DecodeError"},
              {SL_EUNSUPPORTED, "UnsupportedError"},
              {SL_ETOOBIG, "TooBigError"},
              {SL_ESTATE, "StateError"},
              {SL_ENOTFOUND, "NotFoundError"},
              {SL_ECUDA, "CudaError"},
              {SL_ENODEV, "NoDeviceError"},
              {SL_ETHREAD, "ThreadError"},
              {SL_ESAMPLE, "SampleError"}};
  for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
    char full[64];
    snprintf(full, sizeof full, "sluice.%s", subs[i].name);
    PyObject *e = PyErr_NewExceptionWithDoc(full, sl_strerror(subs[i].st),
                                            s->error, NULL);
    if (!e || PyModule_AddObjectRef(m, subs[i].name, e))
      return -1;
    s->by_status[subs[i].st] = e;
  }
  if (add_type(m, &Loader_spec, &s->loader_type) ||
      add_type(m, &Batch_spec, &s->batch_type) ||
      add_type(m, &Tensor_spec, &s->tensor_type) ||
      add_type(m, &Dataset_spec, &s->dataset_type) ||
      add_type(m, &Writer_spec, &s->writer_type))
    return -1;
  if (PyModule_AddIntConstant(m, "STATE_BYTES", SL_LOADER_STATE_BYTES))
    return -1;
  return 0;
}

static PyModuleDef_Slot mod_slots[] = {{Py_mod_exec, mod_exec}, {0, NULL}};

static struct PyModuleDef mod_def = {PyModuleDef_HEAD_INIT,
                                     "_sluice",
                                     "The C binding of libsluice.",
                                     sizeof(module_state),
                                     mod_methods,
                                     mod_slots,
                                     NULL,
                                     NULL,
                                     NULL};

PyMODINIT_FUNC PyInit__sluice(void);
PyMODINIT_FUNC PyInit__sluice(void) {
  return PyModuleDef_Init(&mod_def);
}
