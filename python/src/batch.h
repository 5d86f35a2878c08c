/* The state the binding's files share (_sluice.c: loader, batch, module;
 * tensor.c: the Tensor views and their DLPack exports): the DLPack ABI, a
 * loader's and a batch's reference-counted C state, and the objects over
 * them. See _sluice.c for the lifetimes. Not a public header. */
#ifndef SLUICE_PY_BATCH_H
#define SLUICE_PY_BATCH_H

#include "module.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

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

typedef struct {
  PyObject_HEAD struct core *core;
} LoaderObject;

typedef struct {
  PyObject_HEAD struct bcore *bc;
} BatchObject;

/* Which array of a batch a Tensor views. */
enum {
  T_IMAGES,
  T_LABELS,
  T_INDICES,
  T_TARGETS,
  T_BOXES,      /* (n, box_capacity, 4) float32 */
  T_BOX_LABELS, /* (n, box_capacity) int32 */
  T_BOX_COUNTS, /* (n,) int32 view of the uint32 counts (<= 65535) */
  T_OWNED
};

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

/* Drops a reference to a batch; the last queues its slot for release. Any
 * thread, GIL or not. */
void bcore_decref(struct bcore *bc);
/* The stream a batch's slot is released on, after joining the other
 * streams its exports named into it (tensor.c). */
void *release_stream(struct bcore *bc);
/* A Tensor viewing array `which` (T_IMAGES...) of a batch. */
PyObject *tensor_new(BatchObject *bo, int which);
extern PyType_Spec Tensor_spec;

#endif
