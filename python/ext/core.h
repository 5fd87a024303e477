/* Shared by the files of threadtime._core (_core.c, trace.c). Only
 * PyInit__core leaves the extension (exports.map), so these names are
 * private to it. */
#ifndef TTPY_CORE_H
#define TTPY_CORE_H

#include <Python.h>

/* Raises the OSError subclass Python maps errno e to, with text, naming
 * path if not NULL; returns NULL. */
PyObject *ttpy_raise_errno(int e, const char *text, PyObject *path);

/* Adds type to mod under name (a new reference for the module); 0 or -1. */
int ttpy_add_type(PyObject *mod, const char *name, PyTypeObject *type);

/* The trace reader (trace.c): its types, and two module functions. */
int ttpy_trace_init(PyObject *mod);
PyObject *ttpy_trace_open(PyObject *m, PyObject *path);
PyObject *ttpy_trace_columns(PyObject *m, PyObject *data);

#endif /* TTPY_CORE_H */
