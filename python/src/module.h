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

/* Set at module exec: types and exceptions (one interpreter). */
extern module_state *g_state;

/* Raises the sluice.Error subclass of st with msg (sl_strerror when empty);
 * returns NULL. */
PyObject *raise_status(sl_status st, const char *msg);

/* A Tensor of u8 HWC pixels owned by the bytearray owner (a new
 * reference is taken). */
PyObject *tensor_owned(PyObject *owner, uint32_t h, uint32_t w, uint32_t c);

/* Frees an instance of a heap type (its tp_free) and drops the instance's
 * reference to its type: the end of every dealloc. */
void instance_free(PyObject *o);

extern PyType_Spec Dataset_spec, Writer_spec;

#endif
