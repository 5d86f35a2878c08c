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
#include "batch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

module_state *state_of(PyObject *o) {
  return PyType_GetModuleState(Py_TYPE(o));
}

/* ---- Errors ------------------------------------------------------------- */
static PyObject *raise_in(module_state *ms, sl_status st, const char *msg);

PyObject *raise_status(PyObject *self, sl_status st, const char *msg) {
  module_state *ms = state_of(self);
  if (!ms)
    return NULL; /* PyType_GetModuleState set the error */
  return raise_in(ms, st, msg);
}

/* As raise_status, from the module's state itself. */
static PyObject *raise_in(module_state *ms, sl_status st, const char *msg) {
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
void bcore_decref(struct bcore *bc) {
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
  Py_BEGIN_ALLOW_THREADS
  pthread_mutex_lock(&c->op);
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
  Py_BEGIN_ALLOW_THREADS
  core_decref(c);
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
  Py_BEGIN_ALLOW_THREADS
  st = sl_loader_open(&ld, cfg);
  Py_END_ALLOW_THREADS
  if (st != SL_OK) {
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
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&c->op);
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
  Py_BEGIN_ALLOW_THREADS
  pthread_mutex_lock(&c->op);
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
  Py_END_ALLOW_THREADS
  if (st != SL_OK)
    return raise_status(o, st, msg);
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
  Py_BEGIN_ALLOW_THREADS
  pthread_mutex_lock(&c->op);
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
  Py_END_ALLOW_THREADS
  if (st == SL_OK && PyErr_CheckSignals() < 0) {
    /* A signal came during the wait and its handler raised (Ctrl-C:
     * KeyboardInterrupt). The batch goes back to the loader, so that a
     * state saved now does not count it and the next call returns it;
     * kept, it would be lost between here and the caller's loop. */
    op_lock_gil(c);
    if (sl_loader_unget(c->ld, &bc->b) != SL_OK)
      sl_batch_release(c->ld, &bc->b, NULL); /* another thread's next came
                                                between: it is delivered */
    pthread_mutex_unlock(&c->op);
    free(bc);
    core_leave(c);
    return NULL;
  }
  if (st == SL_END) {
    free(bc);
    core_leave(c);
    Py_RETURN_NONE;
  }
  if (st != SL_OK) {
    free(bc);
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
    core_leave(c); /* after the last read of c: it may free it */
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

static PyObject *Loader_epoch_batches(PyObject *o, PyObject *unused) {
  (void)unused;
  LoaderObject *self = (LoaderObject *)o;
  if (loader_check(self))
    return NULL;
  return PyLong_FromUnsignedLongLong(sl_loader_epoch_batches(self->core->ld));
}

static PyObject *Loader_sample_count(PyObject *o, PyObject *unused) {
  (void)unused;
  LoaderObject *self = (LoaderObject *)o;
  if (loader_check(self))
    return NULL;
  return PyLong_FromUnsignedLongLong(sl_loader_sample_count(self->core->ld));
}

static PyObject *Loader_source_count(PyObject *o, PyObject *unused) {
  (void)unused;
  LoaderObject *self = (LoaderObject *)o;
  if (loader_check(self))
    return NULL;
  return PyLong_FromUnsignedLong(sl_loader_source_count(self->core->ld));
}

static PyObject *Loader_source_of(PyObject *o, PyObject *arg) {
  LoaderObject *self = (LoaderObject *)o;
  if (loader_check(self))
    return NULL;
  unsigned long long i = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred())
    return NULL;
  uint64_t local = 0;
  uint32_t k = sl_loader_source_of(self->core->ld, i, &local);
  if (k == UINT32_MAX)
    return PyErr_Format(
        PyExc_IndexError, "sample %llu: the loader has %llu", i,
        (unsigned long long)sl_loader_sample_count(self->core->ld));
  return Py_BuildValue("(kK)", (unsigned long)k, (unsigned long long)local);
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

static int dict_put(PyObject *d, const char *k, PyObject *x) {
  if (!x)
    return -1;
  int r = PyDict_SetItemString(d, k, x);
  Py_DECREF(x);
  return r;
}

static int dict_u64(PyObject *d, const char *k, unsigned long long v) {
  return dict_put(d, k, PyLong_FromUnsignedLongLong(v));
}

static int dict_s(PyObject *d, const char *k, const char *v) {
  return dict_put(d, k, PyUnicode_FromString(v));
}

/* sl_loader_stats as a dict, from SL_LOADER_STATS_FIELDS: one row a field,
 * boxed by its type, shown as the list's comment says bindings show it. */
static PyObject *box_U64(const void *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return PyLong_FromUnsignedLongLong(v);
}
static PyObject *box_U32(const void *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return PyLong_FromUnsignedLong(v);
}
static PyObject *box_F64(const void *p) {
  double v;
  memcpy(&v, p, sizeof v);
  return PyFloat_FromDouble(v);
}
static PyObject *box_STR(const void *p) {
  const char *v;
  memcpy(&v, p, sizeof v);
  return PyUnicode_FromString(v ? v : "");
}

enum stat_kind { STAT_TOTAL, STAT_NOW, STAT_RECENT, STAT_LEN };
static const struct stat_row {
  const char *name;
  size_t offset, size, n; /* size: of one element */
  enum stat_kind kind;
  PyObject *(*box)(const void *p);
} k_stat_rows[] = {
#define STAT_ROW(type, name, count, kind)                                      \
  {#name,                                                                      \
   offsetof(sl_loader_stats, name),                                            \
   sizeof(((sl_loader_stats *)0)->name) / (count),                             \
   (count),                                                                    \
   STAT_##kind,                                                                \
   box_##type},
    SL_LOADER_STATS_FIELDS(STAT_ROW)
#undef STAT_ROW
};
enum { k_nstat_rows = sizeof k_stat_rows / sizeof k_stat_rows[0] };

/* Row i of k_stat_rows from s into d. */
static int stats_put(PyObject *d, const sl_loader_stats *s, int i) {
  const struct stat_row *r = &k_stat_rows[i];
  const char *at = (const char *)s + r->offset;
  if (r->kind == STAT_LEN) /* the length of the RECENT list before it */
    return 0;
  if (r->kind == STAT_RECENT) { /* its valid entries: the LEN row after it */
    uint32_t len = 0;
    if (i + 1 < k_nstat_rows && k_stat_rows[i + 1].kind == STAT_LEN)
      memcpy(&len, (const char *)s + k_stat_rows[i + 1].offset, sizeof len);
    PyObject *list = PyList_New(0);
    if (!list)
      return -1;
    for (size_t k = 0; k < len && k < r->n; k++) {
      PyObject *x = r->box(at + k * r->size);
      if (!x || PyList_Append(list, x)) {
        Py_XDECREF(x);
        Py_DECREF(list);
        return -1;
      }
      Py_DECREF(x);
    }
    return dict_put(d, r->name, list);
  }
  if (r->n == 1)
    return dict_put(d, r->name, r->box(at));
  /* An array: a key per index, after the first word (level1_decodes). */
  size_t word = strcspn(r->name, "_");
  for (size_t k = 0; k < r->n; k++) {
    char key[96];
    snprintf(key, sizeof key, "%.*s%zu%s", (int)word, r->name, k,
             r->name + word);
    if (dict_put(d, key, r->box(at + k * r->size)))
      return -1;
  }
  return 0;
}

static PyObject *Loader_stats(PyObject *o, PyObject *unused) {
  (void)unused;
  LoaderObject *self = (LoaderObject *)o;
  struct core *c = core_enter(self);
  if (!c)
    return NULL;
  sl_loader_stats s;
  sl_status st;
  char msg[1024], left_out[1024] = "";
  op_lock_gil(c);
  if (c->closed) {
    st = SL_ESTATE;
    snprintf(msg, sizeof msg, "%s", closed_msg);
  } else {
    st = sl_loader_stats_get(c->ld, &s);
    if (st != SL_OK)
      snprintf(msg, sizeof msg, "%s", sl_loader_errmsg(c->ld));
    snprintf(left_out, sizeof left_out, "%s", sl_loader_left_out(c->ld));
  }
  /* Read while the reference is held: a close() meanwhile makes
   * core_leave free c. */
  unsigned long long exports = atomic_load(&c->exports),
                     deleted = atomic_load(&c->deleted),
                     held = atomic_load(&c->outstanding),
                     prefetch = (unsigned long long)c->prefetch;
  pthread_mutex_unlock(&c->op);
  core_leave(c);
  if (st != SL_OK)
    return raise_status(o, st, msg);
  PyObject *d = PyDict_New();
  if (!d)
    return NULL;
  for (int i = 0; i < k_nstat_rows; i++)
    if (stats_put(d, &s, i))
      goto fail;
  if (dict_s(d, "left_out_files", left_out) ||
      dict_u64(d, "dlpack_exports", exports) ||
      dict_u64(d, "dlpack_deleted", deleted) ||
      dict_u64(d, "batches_held", held) || dict_u64(d, "prefetch", prefetch))
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
  Py_BEGIN_ALLOW_THREADS
  pthread_mutex_lock(&c->op);
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
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&view);
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
    {"epoch_batches", Loader_epoch_batches, METH_NOARGS,
     "sl_loader_epoch_batches."},
    {"sample_count", Loader_sample_count, METH_NOARGS, NULL},
    {"source_count", Loader_source_count, METH_NOARGS, NULL},
    {"source_of", Loader_source_of, METH_O, NULL},
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
/* The box arrays, or None for a dataset without boxes. */
static PyObject *batch_box_tensor(PyObject *o, int which) {
  BatchObject *b = (BatchObject *)o;
  if (!b->bc->b.boxes || b->bc->b.box_capacity == 0)
    Py_RETURN_NONE;
  return tensor_new(b, which);
}
static PyObject *Batch_boxes(PyObject *o, void *u) {
  (void)u;
  return batch_box_tensor(o, T_BOXES);
}
static PyObject *Batch_box_labels(PyObject *o, void *u) {
  (void)u;
  return batch_box_tensor(o, T_BOX_LABELS);
}
static PyObject *Batch_box_counts(PyObject *o, void *u) {
  (void)u;
  return batch_box_tensor(o, T_BOX_COUNTS);
}
static PyObject *Batch_valid(PyObject *o, void *u) {
  (void)u;
  return PyLong_FromUnsignedLong(((BatchObject *)o)->bc->b.valid);
}
/* A list: small (one int a sample), and datasets number at most 16. */
static PyObject *Batch_sources(PyObject *o, void *u) {
  (void)u;
  const struct bcore *bc = ((BatchObject *)o)->bc;
  PyObject *list = PyList_New((Py_ssize_t)bc->b.n);
  for (uint32_t j = 0; list && j < bc->b.n; j++) {
    uint32_t k = sl_loader_source_of(bc->core->ld, bc->b.indices[j], NULL);
    PyObject *v = PyLong_FromUnsignedLong(k);
    if (!v || PyList_SetItem(list, (Py_ssize_t)j, v) < 0) { /* steals v */
      Py_DECREF(list);
      return NULL;
    }
  }
  return list;
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
    {"boxes", Batch_boxes, NULL,
     "float32 (n, box_capacity, 4) detection boxes x0 y0 x1 y1 in output "
     "pixels (sample j's first box_counts[j] are real, the rest zero), or "
     "None for a dataset without boxes.",
     NULL},
    {"box_labels", Batch_box_labels, NULL,
     "int32 (n, box_capacity) classes of the boxes (-1 past the count), or "
     "None.",
     NULL},
    {"box_counts", Batch_box_counts, NULL,
     "int32 (n,) boxes of each sample, or None.", NULL},
    {"valid", Batch_valid, NULL, "Samples [0, valid) are real.", NULL},
    {"sources", Batch_sources, NULL,
     "The dataset of dataset.mix (0, 1, ...) each sample is from: a list of "
     "n ints, all 0 for a loader on one dataset.",
     NULL},
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

static PyObject *mod_index(PyObject *m, PyObject *arg) {
  PyObject *bytes = NULL;
  if (!PyUnicode_FSConverter(arg, &bytes))
    return NULL;
  const char *dir = PyBytes_AsString(bytes);
  if (!dir) {
    Py_DECREF(bytes);
    return NULL;
  }
  sl_index_report r;
  char msg[1024];
  sl_status st;
  /* Reads every new shard whole for its checksum: no GIL meanwhile. */
  Py_BEGIN_ALLOW_THREADS
  st = sl_dataset_index(dir, &r, msg, sizeof msg);
  Py_END_ALLOW_THREADS
  Py_DECREF(bytes);
  if (st != SL_OK)
    return raise_in(PyModule_GetState(m), st, msg);
  return Py_BuildValue("{sKsKsKsKsK}", "shards", (unsigned long long)r.shards,
                       "samples", (unsigned long long)r.samples, "shard_bytes",
                       (unsigned long long)r.shard_bytes, "index_bytes",
                       (unsigned long long)r.index_bytes, "checksummed",
                       (unsigned long long)r.checksummed);
}

/* sl_loader_state_info_get as a dict. */
static PyObject *mod_state_info(PyObject *m, PyObject *arg) {
  Py_buffer view;
  if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE))
    return NULL;
  sl_loader_state_info i;
  sl_status st = sl_loader_state_info_get(view.buf, (size_t)view.len, &i);
  PyBuffer_Release(&view);
  if (st != SL_OK)
    return raise_in(PyModule_GetState(m), st,
                    "not a readable sluice loader state (damaged, "
                    "truncated, or of a version this library does not "
                    "read)");
  return Py_BuildValue(
      "{sIsIsKsKsKsKsKsKsKsKsKsIsIsIsIsIsIsKsKsKsKsK}", "version", i.version,
      "mode", i.mode, "epoch", (unsigned long long)i.epoch, "batches",
      (unsigned long long)i.batches, "samples_read",
      (unsigned long long)i.samples_read, "samples_left",
      (unsigned long long)i.samples_left, "sample_count",
      (unsigned long long)i.sample_count, "batch_size",
      (unsigned long long)i.batch_size, "rank", (unsigned long long)i.rank,
      "world_size", (unsigned long long)i.world_size, "seed",
      (unsigned long long)i.seed, "order", i.order, "drop_last", i.drop_last,
      "dtype", i.dtype, "layout", i.layout, "channels", i.channels,
      "resumed_from_world", i.resumed_from_world, "resumed_from_batches",
      (unsigned long long)i.resumed_from_batches, "dataset_fingerprint",
      (unsigned long long)i.dataset_fingerprint, "schedule_fingerprint",
      (unsigned long long)i.schedule_fingerprint, "augment_fingerprint",
      (unsigned long long)i.augment_fingerprint, "resumes",
      (unsigned long long)i.resumes);
}

static PyMethodDef mod_methods[] = {
    {"_state_info", mod_state_info, METH_O,
     "sl_loader_state_info_get as a dict."},
    {"index", mod_index, METH_O,
     "sl_dataset_index: writes DIR/sluice.index (sluice.index)."},
    {"version", mod_version, METH_NOARGS, "libsluice's version string."},
    {"_augment_boxes", py_augment_boxes, METH_VARARGS,
     "sl_augment_boxes on a writable float32 (n, 4) buffer "
     "(sluice.augment.apply_boxes)."},
    {"_augment_ops", py_augment_ops, METH_NOARGS,
     "sl_augment_op_get's table: [(name, params, moves_boxes)] "
     "(sluice.augment.OPS, BOX_OPS)."},
    {"_augment_apply", py_augment_apply, METH_VARARGS,
     "sl_augment_apply on a writable u8 buffer (sluice.augment.apply)."},
    {"_augment_draw", py_augment_draw, METH_VARARGS,
     "sl_augment_policy_draw (sluice.augment.draw), or with recipe=True "
     "sl_augment_recipe_draw (sluice.augment.draw_recipe)."},
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
