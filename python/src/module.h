/* Shared by the binding's files: the module's state and error helper. */
#ifndef SLUICE_PY_MODULE_H
#define SLUICE_PY_MODULE_H

#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "sluice.h"

typedef struct {
  PyObject *error;
  PyObject *by_status[32];
  PyTypeObject *loader_type, *batch_type, *tensor_type, *dataset_type,
      *writer_type;
} module_state;

/* The state of the module that made o's type (every type of the module is
 * a heap type made with PyType_FromModuleAndSpec and cannot be
 * subclassed): no process-wide state, so each interpreter that imports the
 * module has its own. */
module_state *state_of(PyObject *o);

/* Raises the sluice.Error subclass of st with msg (sl_strerror when empty),
 * from the state of self's module (self: an object of the module's
 * types); returns NULL. */
PyObject *raise_status(PyObject *self, sl_status st, const char *msg);

/* A Tensor of u8 HWC pixels owned by the bytearray owner (a new
 * reference is taken); self gives the module. */
PyObject *tensor_owned(PyObject *self, PyObject *owner, uint32_t h, uint32_t w,
                       uint32_t c);

/* Frees an instance of a heap type (its tp_free) and drops the instance's
 * reference to its type: the end of every dealloc. */
void instance_free(PyObject *o);

extern PyType_Spec Dataset_spec, Writer_spec;

/* sluice.augment's functions (augment.c), in the module's method table. */
PyObject *py_augment_ops(PyObject *m, PyObject *unused);
PyObject *py_augment_apply(PyObject *m, PyObject *args);
PyObject *py_augment_boxes(PyObject *m, PyObject *args);
PyObject *py_augment_draw(PyObject *m, PyObject *args);

#endif
