/* threadtime._core's thread handles: ThreadClock (a tt_thread handle), and
 * the cache of handles behind thread_times().
 *
 * A handle opened before fork() names a thread of the parent: in the child
 * its tid is another process's (or nobody's), and the core's reads would
 * disagree, a stale split from the handle's floor against EINVAL from the
 * total. So each handle remembers the fork generation it was opened in
 * (_core.c), and every read of an inherited one raises the same error,
 * which names fork; thread_times() drops such a cached handle and opens
 * one on the child's own thread.
 */
#include "core.h"

#include <errno.h>
#include <unistd.h>

#include "prim/thread.h"
#include "threadtime/threadtime.h"

static PyTypeObject *clock_type; /* ThreadClock */

typedef struct {
    PyObject_HEAD
    tt_thread *h;
    unsigned generation; /* ttpy_fork_generation() at open */
} ClockObject;

/* The handle of o for a read, or NULL with the error set when o was
 * opened before a fork() this process came out of. */
static tt_thread *live_handle(PyObject *o)
{
    ClockObject *self = (ClockObject *)o;
    if (self->generation == ttpy_fork_generation())
        return self->h;
    ttpy_raise_errno(EINVAL, "this ThreadClock was opened before fork(): it names a thread of the parent process; "
                     "open a new one in the child", NULL);
    return NULL;
}

static PyObject *clock_open(PyTypeObject *type, pid_t tid)
{
    tt_thread *h;
    int rc = tt_thread_open(tid, &h);
    if (rc != 0)
        return ttpy_raise_code(rc);
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    ClockObject *self = (ClockObject *)alloc(type, 0);
    if (self == NULL) {
        tt_thread_close(h);
        return NULL;
    }
    self->h = h;
    self->generation = ttpy_fork_generation();
    return (PyObject *)self;
}

/* A thread argument: a native id (int), or an object with an int
 * native_id attribute (threading.Thread, once started). 0 or -1. */
static int as_thread(PyObject *o, pid_t *out)
{
    if (PyLong_Check(o) || PyIndex_Check(o))
        return ttpy_as_id(o, out);
    PyObject *id = PyObject_GetAttrString(o, "native_id");
    if (id == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "a thread is a native id (int) or a threading.Thread, not %R",
                         (PyObject *)Py_TYPE(o));
        }
        return -1;
    }
    int rc;
    if (id == Py_None)
        rc = (PyErr_Format(PyExc_ValueError, "%R has not started: it has no native_id yet", o), -1);
    else
        rc = ttpy_as_id(id, out);
    Py_DECREF(id);
    return rc;
}

static PyObject *clock_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"native_id", NULL};
    PyObject *id = NULL;
    pid_t tid = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:ThreadClock", kwlist, &id) || (id && as_thread(id, &tid)))
        return NULL;
    return clock_open(type, tid);
}

static void clock_dealloc(PyObject *o)
{
    PyTypeObject *type = Py_TYPE(o);
    tt_thread_close(((ClockObject *)o)->h);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(o);
    Py_DECREF(type); /* instances of heap types own a reference to it */
}

static PyObject *clock_total_ns(PyObject *o, PyObject *unused)
{
    tt_thread *h = live_handle(o);
    return h ? ttpy_ns_result(tt_thread_total_ns(h)) : NULL;
}

static PyObject *clock_user_raw_ns(PyObject *o, PyObject *unused)
{
    tt_thread *h = live_handle(o);
    return h ? ttpy_ns_result(tt_thread_user_raw_ns(h)) : NULL;
}

static PyObject *clock_times(PyObject *o, PyObject *unused)
{
    tt_thread *h = live_handle(o);
    tt_times t;
    return h ? ttpy_times_result(tt_thread_times(h, &t), &t) : NULL;
}

static PyObject *clock_native_id(PyObject *o, void *closure)
{
    return PyLong_FromLong((long)tt_thread_tid(((ClockObject *)o)->h));
}

static PyObject *clock_repr(PyObject *o)
{
    return PyUnicode_FromFormat("<threadtime.ThreadClock native_id=%d>", (int)tt_thread_tid(((ClockObject *)o)->h));
}

static PyMethodDef clock_methods[] = {
    {"total_ns", clock_total_ns, METH_NOARGS, "total_ns($self, /)\n--\n\nThe thread's precise CPU time, ns."},
    {"user_raw_ns", clock_user_raw_ns, METH_NOARGS, "user_raw_ns($self, /)\n--\n\nThe thread's raw tick-sampled user time, ns."},
    {"times", clock_times, METH_NOARGS, "times($self, /)\n--\n\nConsistent split of the thread's CPU time, monotonic per handle."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef clock_getset[] = {
    {"native_id", clock_native_id, NULL, "The kernel thread id the handle names.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot clock_slots[] = {
    {Py_tp_new, clock_new},
    {Py_tp_dealloc, clock_dealloc},
    {Py_tp_repr, clock_repr},
    {Py_tp_methods, clock_methods},
    {Py_tp_getset, clock_getset},
    {Py_tp_doc, "ThreadClock(native_id=0)\n--\n\n"
                "A handle on one thread of this process, named by its native id or\n"
                "by a started threading.Thread. Opened with 0 (or the caller's own\n"
                "native_id) by the thread itself, it notices that thread's exit:\n"
                "every later read raises ProcessLookupError, even if the kernel has\n"
                "given the id to a new thread. In a child of fork() every read of a\n"
                "handle opened before the fork raises OSError (EINVAL) naming fork."},
    {0, NULL},
};

static PyType_Spec clock_spec = {
    "threadtime.ThreadClock", sizeof(ClockObject), 0, Py_TPFLAGS_DEFAULT, clock_slots,
};

/* ---- the cache behind thread_times() ---- */

/* native_id -> ThreadClock. Touched only under TTPY_LOCKED(clock_cache). */
static PyObject *clock_cache;
/* The cache is swept for exited threads when it reaches this size; the
 * limit then doubles over what survived, so sweeps cost O(1) per insert. */
#define CACHE_SWEEP_MIN 64
static Py_ssize_t cache_sweep_at = CACHE_SWEEP_MIN;

/* Whether a cached handle can no longer answer: its thread exited, or it
 * came across a fork. */
static int cache_stale(PyObject *clock)
{
    ClockObject *c = (ClockObject *)clock;
    return c->generation != ttpy_fork_generation() || tt_thread_total_ns(c->h) < 0;
}

/* Removes the handles that can no longer answer (cache locked). */
static int cache_sweep(void)
{
    PyObject *dead = PyList_New(0);
    if (dead == NULL)
        return -1;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(clock_cache, &pos, &key, &value)) {
        if (cache_stale(value) && PyList_Append(dead, key) != 0) {
            Py_DECREF(dead);
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < PyList_Size(dead); i++) {
        if (PyDict_DelItem(clock_cache, PyList_GetItem(dead, i)) != 0) {
            Py_DECREF(dead);
            return -1;
        }
    }
    Py_DECREF(dead);
    Py_ssize_t live = PyDict_Size(clock_cache);
    cache_sweep_at = live * 2 > CACHE_SWEEP_MIN ? live * 2 : CACHE_SWEEP_MIN;
    return 0;
}

/* The cached handle for tid (a new reference), opening it if needed. The
 * caller's own id opens a self handle, which notices the thread's exit. A
 * handle from before a fork is replaced. Called with the cache locked. */
static PyObject *cache_get(PyObject *key, pid_t tid)
{
    PyObject *clock = PyDict_GetItemWithError(clock_cache, key);
    if (clock != NULL && ((ClockObject *)clock)->generation == ttpy_fork_generation())
        return Py_NewRef(clock);
    if (PyErr_Occurred())
        return NULL;
    clock = clock_open(clock_type, tid == tt__gettid() ? 0 : tid);
    if (clock != NULL && PyDict_Size(clock_cache) >= cache_sweep_at && cache_sweep() != 0)
        Py_CLEAR(clock);
    if (clock != NULL && PyDict_SetItem(clock_cache, key, clock) != 0)
        Py_CLEAR(clock);
    return clock;
}

static PyObject *py_thread_times(PyObject *m, PyObject *arg)
{
    pid_t tid;
    if (as_thread(arg, &tid))
        return NULL;
    if (tid == 0)
        tid = tt__gettid();
    PyObject *key = PyLong_FromLong((long)tid);
    if (key == NULL)
        return NULL;
    PyObject *clock;
    TTPY_LOCKED(clock_cache, clock = cache_get(key, tid));
    if (clock == NULL) {
        Py_DECREF(key);
        return NULL;
    }
    tt_times t;
    int rc = tt_thread_times(((ClockObject *)clock)->h, &t);
    Py_DECREF(clock);
    /* A failed read means the thread is gone (ESRCH) or its id now names a
     * task of another process (EINVAL): forget the handle; the next call
     * opens a fresh one or fails for good. */
    int gone = 0;
    if (rc != 0)
        TTPY_LOCKED(clock_cache, gone = PyDict_DelItem(clock_cache, key));
    if (gone != 0)
        PyErr_Clear(); /* the read's own error is the one to report */
    Py_DECREF(key);
    return ttpy_times_result(rc, &t);
}

static PyObject *py_cache_size(PyObject *m, PyObject *unused) { return PyLong_FromSsize_t(PyDict_Size(clock_cache)); }

static PyMethodDef handles_methods[] = {
    {"thread_times", py_thread_times, METH_O, "thread_times($module, thread, /)\n--\n\nConsistent split of a thread's CPU time, monotonic per thread (a cached handle). thread: a native id (0: the caller) or a started threading.Thread."},
    {"_cache_size", py_cache_size, METH_NOARGS, "_cache_size($module, /)\n--\n\nHandles thread_times() holds (for tests)."},
    {NULL, NULL, 0, NULL},
};

int ttpy_handles_init(PyObject *mod)
{
    if (clock_type == NULL) {
        clock_type = (PyTypeObject *)PyType_FromSpec(&clock_spec);
        clock_cache = PyDict_New();
        if (clock_type == NULL || clock_cache == NULL)
            return -1;
    }
    return PyModule_AddFunctions(mod, handles_methods) || ttpy_add_type(mod, "ThreadClock", clock_type);
}
