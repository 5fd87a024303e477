/* threadtime._core: the Python face of the core, compiled together with it.
 *
 * This file is the module: its init, and the errors and argument
 * conversions every domain file shares (core.h lists the files). Every
 * function is a thin call into the public C API.
 *
 * Errors: the core returns -errno; ttpy_raise_code() turns that into the
 * OSError subclass Python picks for the errno (ProcessLookupError for
 * ESRCH, ...), with tt_strerror()'s text.
 *
 * Built against the limited API (abi3), except on a free-threaded CPython
 * (Py_GIL_DISABLED), whose headers refuse it; there the module declares
 * that it needs no GIL (Py_mod_gil), and the shared mutable state (the
 * handle cache, the event names) is guarded by a critical section on its
 * dict (TTPY_LOCKED); everything else is set once at import or immutable.
 * The state is static because the core itself is process-wide: one
 * interpreter per process may import the module.
 */
#include "core.h"

#include <limits.h>
#include <pthread.h>

#include "threadtime/threadtime.h"

/* ---- errors and conversions ---- */

PyObject *ttpy_raise_errno(int e, const char *text, PyObject *path)
{
    PyObject *exc = path ? PyObject_CallFunction(PyExc_OSError, "isO", e, text, path)
                         : PyObject_CallFunction(PyExc_OSError, "is", e, text);
    if (exc != NULL) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
    return NULL;
}

PyObject *ttpy_raise_code_path(int64_t code, PyObject *path)
{
    return ttpy_raise_errno((int)(code < 0 ? -code : code), tt_strerror(code), path);
}

PyObject *ttpy_raise_code(int64_t code) { return ttpy_raise_code_path(code, NULL); }

PyObject *ttpy_ns_result(int64_t r) { return r < 0 ? ttpy_raise_code(r) : PyLong_FromLongLong(r); }

/* A negative id is a caller's mistake, not something the kernel should
 * judge: ValueError, as for any bad argument. A bool would pass as 0 or 1. */
int ttpy_as_id(PyObject *o, pid_t *out)
{
    if (PyBool_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "a thread or process id must be an int, not a bool");
        return -1;
    }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v > INT_MAX) {
        PyErr_SetString(PyExc_OverflowError, "thread or process id out of range");
        return -1;
    }
    if (v < 0) {
        PyErr_Format(PyExc_ValueError, "a thread or process id cannot be negative (got %ld)", v);
        return -1;
    }
    *out = (pid_t)v;
    return 0;
}

PyObject *ttpy_struct_new(PyTypeObject *type, PyObject **items, Py_ssize_t n)
{
    PyObject *o = PyStructSequence_New(type);
    int failed = o == NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        failed |= items[i] == NULL;
        if (o != NULL)
            PyStructSequence_SetItem(o, i, items[i]);
        else
            Py_XDECREF(items[i]);
    }
    if (failed)
        Py_CLEAR(o);
    return o;
}

int ttpy_add_type(PyObject *mod, const char *name, PyTypeObject *type)
{
    Py_INCREF(type);
    if (PyModule_AddObject(mod, name, (PyObject *)type) != 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

/* Bumped in every child of fork(), before any Python code runs there. */
static unsigned fork_generation;

static void after_fork_in_child(void) { __atomic_add_fetch(&fork_generation, 1, __ATOMIC_RELAXED); }

unsigned ttpy_fork_generation(void) { return __atomic_load_n(&fork_generation, __ATOMIC_RELAXED); }

/* ---- the module ---- */

/* The trace reader's functions stay here, beside its init (trace.c). */
static PyMethodDef core_methods[] = {
    {"_trace_open", ttpy_trace_open, METH_O, "_trace_open($module, path, /)\n--\n\nParses a trace file with the core's reader (threadtime.read_trace wraps it)."},
    {"_trace_columns", ttpy_trace_columns, METH_O, "_trace_columns($module, data, /)\n--\n\nEvery event of a parsed trace as flat columns (for Trace.to_pandas)."},
    {NULL, NULL, 0, NULL},
};

/* The interpreter that made the static state; another one may not share it. */
static int64_t owner_interp = -1;

static int core_exec(PyObject *mod)
{
    int64_t interp = PyInterpreterState_GetID(PyInterpreterState_Get());
    if (owner_interp >= 0 && owner_interp != interp) {
        PyErr_SetString(PyExc_ImportError, "threadtime._core can be imported by one interpreter per process");
        return -1;
    }
    if (owner_interp < 0) {
        int rc = pthread_atfork(NULL, NULL, after_fork_in_child);
        if (rc != 0)
            return ttpy_raise_errno(rc, "cannot register the fork handler", NULL), -1;
    }
    /* Each init makes its static types once (owner_interp < 0) and adds
     * them to mod. */
    if (ttpy_clocks_init(mod) || ttpy_handles_init(mod) || ttpy_log_init(mod) || ttpy_interval_init(mod) ||
        ttpy_trace_init(mod) || ttpy_tasks_init(mod) || ttpy_spans_init(mod) ||
        PyModule_AddStringConstant(mod, "__version__", tt_version()) != 0)
        return -1;
    owner_interp = interp;
    return 0;
}

static PyModuleDef_Slot core_slots[] = {
    {Py_mod_exec, core_exec},
#ifdef Py_mod_multiple_interpreters /* 3.12+ outside the 3.10 limited API */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#ifdef Py_GIL_DISABLED
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "threadtime._core", "The C extension behind threadtime.", 0, core_methods, core_slots,
    NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&core_module); }
