/* threadtime._core: the Python face of the core, compiled together with it.
 *
 * Every function is a thin call into the public C API. The calling thread's
 * clocks are METH_NOARGS functions that keep the GIL: the read is one system
 * call of ~200-650 ns. Dropping and retaking the GIL around it made the call
 * 10-37% slower uncontended, and with one other thread busy in Python each
 * call then waited for the GIL's switch interval: ~49 us instead of ~0.5 us
 * (measured here; see python/README.md). The calls that do I/O (/proc, the
 * trace dump) release it, since their ~10 us is worth handing over.
 *
 * Errors: the core returns -errno; raise_code() turns that into the OSError
 * subclass Python picks for the errno (ProcessLookupError for ESRCH, ...),
 * with tt_strerror()'s text.
 *
 * Built against the limited API (abi3), except on a free-threaded CPython
 * (Py_GIL_DISABLED), whose headers refuse it; there the module declares
 * that it needs no GIL (Py_mod_gil), and the one piece of shared mutable
 * state, the handle cache, is guarded by a critical section on its dict
 * (everything else is set once at import or immutable). The state is
 * static because the core itself is process-wide: one interpreter per
 * process may import the module.
 */
#include "core.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "prim/thread.h"
#include "threadtime/threadtime.h"

static PyTypeObject *times_type;    /* Times(user_ns, system_ns, total_ns) */
static PyTypeObject *procstat_type; /* ProcStat(user_ns, system_ns, state, name) */
static PyTypeObject *loginfo_type;  /* LogInfo(running, clock, ...) */
static PyTypeObject *clock_type;    /* ThreadClock */
static PyTypeObject *interval_type; /* interval(id): begin/end events */
/* native_id -> ThreadClock, for thread_times(). Guarded by the GIL (no
 * function that touches it releases the GIL), and without one by a
 * critical section on the dict: CACHE_LOCKED(...). */
static PyObject *clock_cache;
#ifdef Py_GIL_DISABLED
#define CACHE_LOCKED(code)                      \
    do {                                        \
        Py_BEGIN_CRITICAL_SECTION(clock_cache); \
        code;                                   \
        Py_END_CRITICAL_SECTION();              \
    } while (0)
#else
#define CACHE_LOCKED(code) \
    do {                   \
        code;              \
    } while (0)
#endif
/* The cache is swept for exited threads when it reaches this size; the
 * limit then doubles over what survived, so sweeps cost O(1) per insert. */
#define CACHE_SWEEP_MIN 64
static Py_ssize_t cache_sweep_at = CACHE_SWEEP_MIN;

/* ---- errors and conversions ---- */

/* Raises the OSError subclass Python maps errno e to (ProcessLookupError
 * for ESRCH, FileNotFoundError for ENOENT, ...), naming path if not NULL. */
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

static PyObject *raise_code_path(int64_t code, PyObject *path)
{
    return ttpy_raise_errno((int)(code < 0 ? -code : code), tt_strerror(code), path);
}

static PyObject *raise_code(int64_t code) { return raise_code_path(code, NULL); }

static PyObject *ns_result(int64_t r) { return r < 0 ? raise_code(r) : PyLong_FromLongLong(r); }

/* A pid or tid argument: an int (or __index__; not a bool, which would pass as 0 or 1)
 * from 0 to the largest pid_t. A negative id is a caller's mistake, not
 * something the kernel should judge: ValueError, as for any bad argument. */
static int as_id(PyObject *o, pid_t *out)
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

/* The optional pid of the process_ calls: absent means 0, this process. */
static int opt_id(PyObject *const *args, Py_ssize_t nargs, const char *fname, pid_t *out)
{
    *out = 0;
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 1 argument (%zd given)", fname, nargs);
        return -1;
    }
    return nargs == 1 ? as_id(args[0], out) : 0;
}

/* A struct sequence of type holding n items, whose references it takes. A
 * NULL item means its conversion failed: the result is then NULL, with the
 * conversion's error set. */
static PyObject *struct_new(PyTypeObject *type, PyObject **items, Py_ssize_t n)
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

static PyObject *times_new(const tt_times *t)
{
    PyObject *items[3] = {
        PyLong_FromLongLong(t->user_ns), PyLong_FromLongLong(t->system_ns), PyLong_FromLongLong(t->total_ns),
    };
    return struct_new(times_type, items, 3);
}

static PyObject *times_result(int rc, const tt_times *t) { return rc != 0 ? raise_code(rc) : times_new(t); }

/* ---- the calling thread ---- */

static PyObject *py_total_ns(PyObject *m, PyObject *unused) { return ns_result(tt_self_total_ns()); }
static PyObject *py_user_raw_ns(PyObject *m, PyObject *unused) { return ns_result(tt_self_user_raw_ns()); }
static PyObject *py_system_raw_ns(PyObject *m, PyObject *unused) { return ns_result(tt_self_system_raw_ns()); }

static PyObject *py_times(PyObject *m, PyObject *unused)
{
    tt_times t;
    return times_result(tt_self_times(&t), &t);
}

/* ---- another thread, by native id ---- */

static PyObject *py_thread_total_ns(PyObject *m, PyObject *arg)
{
    pid_t tid;
    return as_id(arg, &tid) ? NULL : ns_result(tt_tid_total_ns(tid));
}

static PyObject *py_thread_user_raw_ns(PyObject *m, PyObject *arg)
{
    pid_t tid;
    return as_id(arg, &tid) ? NULL : ns_result(tt_tid_user_raw_ns(tid));
}

static PyObject *py_thread_system_raw_ns(PyObject *m, PyObject *arg)
{
    pid_t tid;
    return as_id(arg, &tid) ? NULL : ns_result(tt_tid_system_raw_ns(tid));
}

/* ---- ThreadClock: a tt_thread handle ---- */

typedef struct {
    PyObject_HEAD
    tt_thread *h;
} ClockObject;

static PyObject *clock_open(PyTypeObject *type, pid_t tid)
{
    tt_thread *h;
    int rc = tt_thread_open(tid, &h);
    if (rc != 0)
        return raise_code(rc);
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    ClockObject *self = (ClockObject *)alloc(type, 0);
    if (self == NULL) {
        tt_thread_close(h);
        return NULL;
    }
    self->h = h;
    return (PyObject *)self;
}

static PyObject *clock_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"native_id", NULL};
    PyObject *id = NULL;
    pid_t tid = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:ThreadClock", kwlist, &id) || (id && as_id(id, &tid)))
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
    return ns_result(tt_thread_total_ns(((ClockObject *)o)->h));
}

static PyObject *clock_user_raw_ns(PyObject *o, PyObject *unused)
{
    return ns_result(tt_thread_user_raw_ns(((ClockObject *)o)->h));
}

static PyObject *clock_times(PyObject *o, PyObject *unused)
{
    tt_times t;
    return times_result(tt_thread_times(((ClockObject *)o)->h, &t), &t);
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
                "A handle on one thread of this process. Opened with 0 (or the\n"
                "caller's own native_id) by the thread itself, it notices that\n"
                "thread's exit: every later read raises ProcessLookupError, even\n"
                "if the kernel has given the id to a new thread."},
    {0, NULL},
};

static PyType_Spec clock_spec = {
    "threadtime.ThreadClock", sizeof(ClockObject), 0, Py_TPFLAGS_DEFAULT, clock_slots,
};

/* Removes the handles of threads that have exited (cache locked). */
static int cache_sweep(void)
{
    PyObject *dead = PyList_New(0);
    if (dead == NULL)
        return -1;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(clock_cache, &pos, &key, &value)) {
        if (tt_thread_total_ns(((ClockObject *)value)->h) < 0 && PyList_Append(dead, key) != 0) {
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
 * caller's own id opens a self handle, which notices the thread's exit.
 * Called with the cache locked. */
static PyObject *cache_get(PyObject *key, pid_t tid)
{
    PyObject *clock = PyDict_GetItemWithError(clock_cache, key);
    if (clock != NULL)
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
    if (as_id(arg, &tid))
        return NULL;
    if (tid == 0)
        tid = tt__gettid();
    PyObject *key = PyLong_FromLong((long)tid);
    if (key == NULL)
        return NULL;
    PyObject *clock;
    CACHE_LOCKED(clock = cache_get(key, tid));
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
        CACHE_LOCKED(gone = PyDict_DelItem(clock_cache, key));
    if (gone != 0)
        PyErr_Clear(); /* the read's own error is the one to report */
    Py_DECREF(key);
    return times_result(rc, &t);
}

static PyObject *py_cache_size(PyObject *m, PyObject *unused) { return PyLong_FromSsize_t(PyDict_Size(clock_cache)); }

/* ---- processes ---- */

static PyObject *py_process_total_ns(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    pid_t pid;
    return opt_id(args, nargs, "process_total_ns", &pid) ? NULL : ns_result(tt_process_total_ns(pid));
}

static PyObject *py_process_user_raw_ns(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    pid_t pid;
    return opt_id(args, nargs, "process_user_raw_ns", &pid) ? NULL : ns_result(tt_process_user_raw_ns(pid));
}

static PyObject *py_process_prof_raw_ns(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    pid_t pid;
    return opt_id(args, nargs, "process_prof_raw_ns", &pid) ? NULL : ns_result(tt_process_prof_raw_ns(pid));
}

static PyObject *py_process_times(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    pid_t pid;
    if (opt_id(args, nargs, "process_times", &pid))
        return NULL;
    tt_times t;
    int rc;
    if (pid == 0 || pid == getpid()) {
        rc = tt_process_times(pid, &t); /* getrusage(): one short syscall */
    } else {
        Py_BEGIN_ALLOW_THREADS /* another process: a /proc read, ~10 us */
        rc = tt_process_times(pid, &t);
        Py_END_ALLOW_THREADS
    }
    return times_result(rc, &t);
}

/* ---- the /proc reader ---- */

static PyObject *py_procfs_read(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    pid_t ids[2] = {0, 0};
    if (nargs > 2) {
        PyErr_Format(PyExc_TypeError, "procfs_read() takes at most 2 arguments (%zd given)", nargs);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        if (as_id(args[i], &ids[i]))
            return NULL;
    tt_procfs_stat st;
    int rc;
    Py_BEGIN_ALLOW_THREADS /* open, read, close: ~10 us */
    rc = tt_procfs_read(ids[0], ids[1], &st);
    Py_END_ALLOW_THREADS
    if (rc != 0)
        return raise_code(rc);
    /* A name is at most 15 bytes, cut where the kernel cut it: possibly in
     * the middle of a UTF-8 sequence, which surrogateescape keeps. */
    PyObject *items[4] = {
        PyLong_FromLongLong(st.user_ns),
        PyLong_FromLongLong(st.system_ns),
        PyUnicode_FromStringAndSize(&st.state, 1),
        PyUnicode_DecodeFSDefault(st.name),
    };
    return struct_new(procstat_type, items, 4);
}

/* ---- method selection ---- */

static PyObject *py_set_method(PyObject *m, PyObject *arg)
{
    if (!PyUnicode_Check(arg))
        return PyErr_Format(PyExc_TypeError,
                            "set_method() takes a method name: 'auto', 'clockid', 'getrusage' or 'procfs', not %R",
                            arg);
    const char *name = PyUnicode_AsUTF8AndSize(arg, NULL);
    if (name == NULL)
        return NULL;
    for (int i = TT_METHOD_AUTO; i <= TT_METHOD_PROCFS; i++) {
        if (strcmp(name, tt_method_name((tt_method)i)) == 0) {
            int rc = tt_method_set((tt_method)i);
            if (rc != 0)
                return raise_code(rc);
            Py_RETURN_NONE;
        }
    }
    return PyErr_Format(PyExc_ValueError, "unknown method %R (auto, clockid, getrusage or procfs)", arg);
}

static PyObject *py_method(PyObject *m, PyObject *unused)
{
    return PyUnicode_FromString(tt_method_name(tt_method_active()));
}

/* ---- the event log ---- */

/* Names of tt_log_clock values, indexed by the value. */
static const char *const log_clock_names[] = {"auto", "counter", "monotonic"};
#define LOG_CLOCKS ((int)(sizeof log_clock_names / sizeof log_clock_names[0]))

/* The core reports "log not running" as ESRCH, whose general text speaks
 * of threads; the log calls say what it means here. */
static PyObject *raise_log_code(int rc)
{
    return rc == -ESRCH ? ttpy_raise_errno(ESRCH, "the event log is not running", NULL) : raise_code(rc);
}

/* O& converter: None stays NULL, anything else becomes fs-encoded bytes. */
static int opt_path(PyObject *o, void *out)
{
    if (o == Py_None) {
        *(PyObject **)out = NULL;
        return 1;
    }
    return PyUnicode_FSConverter(o, out);
}

/* A uint32 option; out of range goes to the core, which refuses it. */
static uint32_t as_u32_option(long v) { return v < 0 || (unsigned long)v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

static PyObject *py_start_log(PyObject *m, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"ring_records", "crash_file", "exit_dump_path", "cpu_on_intervals",
                             "max_threads", "clock", NULL};
    long ring = 0, threads = 0;
    PyObject *crash = NULL, *exit_dump = NULL;
    int cpu = 0;
    const char *clock = "auto";
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$lO&O&pls:start_log", kwlist, &ring, opt_path, &crash,
                                     opt_path, &exit_dump, &cpu, &threads, &clock))
        return NULL;
    tt_log_options o = {.size = sizeof o};
    o.ring_records = as_u32_option(ring);
    o.max_threads = as_u32_option(threads);
    o.cpu_on_intervals = cpu;
    o.crash_file = crash ? PyBytes_AsString(crash) : NULL;
    o.exit_dump_path = exit_dump ? PyBytes_AsString(exit_dump) : NULL;
    int c = 0;
    while (c < LOG_CLOCKS && strcmp(clock, log_clock_names[c]) != 0)
        c++;
    PyObject *result = NULL;
    if (c == LOG_CLOCKS) {
        PyErr_Format(PyExc_ValueError, "unknown clock '%s' (auto, counter or monotonic)", clock);
    } else {
        o.clock = (tt_log_clock)c;
        int rc;
        Py_BEGIN_ALLOW_THREADS /* the first start calibrates the counter: ~10 ms */
        rc = tt_log_start(&o);
        Py_END_ALLOW_THREADS
        result = rc != 0 ? raise_log_code(rc) : Py_NewRef(Py_None);
    }
    Py_XDECREF(crash);
    Py_XDECREF(exit_dump);
    return result;
}

static PyObject *py_stop_log(PyObject *m, PyObject *unused)
{
    int rc = tt_log_stop();
    return rc != 0 ? raise_log_code(rc) : Py_NewRef(Py_None);
}

static PyObject *py_dump(PyObject *m, PyObject *arg)
{
    PyObject *path;
    if (!PyUnicode_FSConverter(arg, &path))
        return NULL;
    int rc;
    const char *p = PyBytes_AsString(path);
    Py_BEGIN_ALLOW_THREADS /* writes every ring to a file */
    rc = tt_log_dump(p);
    Py_END_ALLOW_THREADS
    PyObject *result = rc != 0 ? (rc == -ESRCH ? raise_log_code(rc) : raise_code_path(rc, arg)) : Py_NewRef(Py_None);
    Py_DECREF(path);
    return result;
}

static PyObject *py_log_thread_name(PyObject *m, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8AndSize(arg, NULL);
    if (name == NULL)
        return NULL;
    int rc = tt_log_thread_name(name);
    return rc != 0 ? raise_log_code(rc) : Py_NewRef(Py_None);
}

static PyObject *py_log_info(PyObject *m, PyObject *unused)
{
    tt_log_info info = {.size = sizeof info};
    int rc = tt_log_info_get(&info);
    if (rc != 0)
        return raise_log_code(rc);
    const char *clock = (unsigned)info.source < (unsigned)LOG_CLOCKS ? log_clock_names[info.source] : "?";
    PyObject *items[6] = {
        PyBool_FromLong(info.running),      PyUnicode_FromString(clock),
        PyFloat_FromDouble(info.counter_hz), PyLong_FromUnsignedLong(info.ring_records),
        PyLong_FromUnsignedLong(info.max_threads), PyBool_FromLong(info.crash_safe),
    };
    return struct_new(loginfo_type, items, 6);
}

static int as_event_id(PyObject *o, uint32_t *out)
{
    unsigned long v = PyLong_AsUnsignedLong(o);
    if (v == (unsigned long)-1 && PyErr_Occurred())
        return -1;
    if (v > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "event id must fit in 32 bits");
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* event(id), event(id, "text"), event(id, b"text"), event(id, value). */
static PyObject *py_event(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    uint32_t id;
    if (nargs < 1 || nargs > 2)
        return PyErr_Format(PyExc_TypeError, "event() takes 1 or 2 arguments (%zd given)", nargs);
    if (as_event_id(args[0], &id))
        return NULL;
    PyObject *payload = nargs == 2 ? args[1] : Py_None;
    if (payload == Py_None) {
        tt_event(id);
    } else if (PyUnicode_Check(payload)) {
        /* Kept up to TT_EVENT_TEXT_MAX bytes of UTF-8, or to a NUL. */
        const char *text = PyUnicode_AsUTF8AndSize(payload, NULL);
        if (text == NULL)
            return NULL;
        tt_event_text(id, text);
    } else if (PyBytes_Check(payload)) {
        tt_event_text(id, PyBytes_AsString(payload));
    } else if (PyLong_Check(payload)) {
        unsigned long long v = PyLong_AsUnsignedLongLong(payload);
        if (v == (unsigned long long)-1 && PyErr_Occurred())
            return NULL;
        tt_event_value(id, (uint64_t)v);
    } else {
        return PyErr_Format(PyExc_TypeError, "event payload must be str, bytes or int, not %R",
                            (PyObject *)Py_TYPE(payload));
    }
    Py_RETURN_NONE;
}

/* event_name(id, name): names an id in every trace written afterwards. */
static PyObject *py_event_name(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    uint32_t id;
    if (nargs != 2)
        return PyErr_Format(PyExc_TypeError, "event_name() takes 2 arguments (%zd given)", nargs);
    if (as_event_id(args[0], &id))
        return NULL;
    if (!PyUnicode_Check(args[1]))
        return PyErr_Format(PyExc_TypeError, "event name must be str, not %R", (PyObject *)Py_TYPE(args[1]));
    Py_ssize_t len;
    const char *name = PyUnicode_AsUTF8AndSize(args[1], &len);
    if (name == NULL)
        return NULL;
    /* The core would stop at an embedded NUL and keep a shorter name. */
    if (memchr(name, 0, (size_t)len))
        return PyErr_Format(PyExc_ValueError, "event name contains a NUL character");
    if (len == 0 || len > TT_EVENT_NAME_MAX)
        return PyErr_Format(PyExc_ValueError, "event name must be 1 to %d bytes of UTF-8, not %zd",
                            TT_EVENT_NAME_MAX, len);
    int rc = tt_event_name(id, name);
    return rc != 0 ? raise_code(rc) : Py_NewRef(Py_None);
}

/* ---- interval: begin on enter, end on exit ---- */

typedef struct {
    PyObject_HEAD
    uint32_t id;
    int cpu;
} IntervalObject;

static PyObject *interval_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"id", "cpu", NULL};
    PyObject *id_obj;
    int cpu = 0;
    uint32_t id;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$p:interval", kwlist, &id_obj, &cpu) ||
        as_event_id(id_obj, &id))
        return NULL;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    IntervalObject *self = (IntervalObject *)alloc(type, 0);
    if (self != NULL) {
        self->id = id;
        self->cpu = cpu;
    }
    return (PyObject *)self;
}

static void interval_dealloc(PyObject *o)
{
    PyTypeObject *type = Py_TYPE(o);
    ((freefunc)PyType_GetSlot(type, Py_tp_free))(o);
    Py_DECREF(type);
}

static PyObject *interval_enter(PyObject *o, PyObject *unused)
{
    IntervalObject *self = (IntervalObject *)o;
    if (self->cpu)
        tt_event_begin_cpu(self->id);
    else
        tt_event_begin(self->id);
    return Py_NewRef(o);
}

static PyObject *interval_exit(PyObject *o, PyObject *const *args, Py_ssize_t nargs)
{
    IntervalObject *self = (IntervalObject *)o;
    if (self->cpu)
        tt_event_end_cpu(self->id);
    else
        tt_event_end(self->id);
    Py_RETURN_FALSE; /* exceptions propagate */
}

static PyObject *interval_id(PyObject *o, void *closure) { return PyLong_FromUnsignedLong(((IntervalObject *)o)->id); }

static PyMethodDef interval_methods[] = {
    {"__enter__", interval_enter, METH_NOARGS, "__enter__($self, /)\n--\n\nRecords the interval's begin event."},
    {"__exit__", (PyCFunction)(void (*)(void))interval_exit, METH_FASTCALL,
     "__exit__($self, exc_type, exc, tb, /)\n--\n\nRecords its end event."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef interval_getset[] = {
    {"id", interval_id, NULL, "The event id of both bounds.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot interval_slots[] = {
    {Py_tp_new, interval_new},
    {Py_tp_dealloc, interval_dealloc},
    {Py_tp_methods, interval_methods},
    {Py_tp_getset, interval_getset},
    {Py_tp_doc, "interval(id, *, cpu=False)\n--\n\n"
                "A context manager recording a begin event on entry and an end\n"
                "event on exit, both with this id, on the calling thread. With\n"
                "cpu=True both also record the thread's user and system CPU time\n"
                "(one getrusage call each). Reusable and re-entrant: it holds only\n"
                "the id."},
    {0, NULL},
};

static PyType_Spec interval_spec = {
    "threadtime.interval", sizeof(IntervalObject), 0, Py_TPFLAGS_DEFAULT, interval_slots,
};

/* ---- the module ---- */

static PyMethodDef core_methods[] = {
    {"total_ns", py_total_ns, METH_NOARGS, "total_ns($module, /)\n--\n\nPrecise CPU time of the calling thread, ns (one clock read)."},
    {"user_raw_ns", py_user_raw_ns, METH_NOARGS, "user_raw_ns($module, /)\n--\n\nRaw tick-sampled user time of the calling thread, ns; may exceed total_ns()."},
    {"system_raw_ns", py_system_raw_ns, METH_NOARGS, "system_raw_ns($module, /)\n--\n\nRaw tick-sampled system time of the calling thread, ns (two clock reads)."},
    {"times", py_times, METH_NOARGS, "times($module, /)\n--\n\nConsistent split of the calling thread's CPU time: Times(user_ns, system_ns, total_ns)."},
    {"thread_total_ns", py_thread_total_ns, METH_O, "thread_total_ns($module, native_id, /)\n--\n\nPrecise CPU time of a thread of this process, ns."},
    {"thread_user_raw_ns", py_thread_user_raw_ns, METH_O, "thread_user_raw_ns($module, native_id, /)\n--\n\nRaw tick-sampled user time of a thread of this process, ns."},
    {"thread_system_raw_ns", py_thread_system_raw_ns, METH_O, "thread_system_raw_ns($module, native_id, /)\n--\n\nRaw tick-sampled system time of a thread of this process, ns."},
    {"thread_times", py_thread_times, METH_O, "thread_times($module, native_id, /)\n--\n\nConsistent split of a thread's CPU time, monotonic per thread (a cached handle)."},
    {"process_total_ns", (PyCFunction)(void (*)(void))py_process_total_ns, METH_FASTCALL, "process_total_ns($module, pid=0, /)\n--\n\nPrecise CPU time of a process (0: this one), ns."},
    {"process_user_raw_ns", (PyCFunction)(void (*)(void))py_process_user_raw_ns, METH_FASTCALL, "process_user_raw_ns($module, pid=0, /)\n--\n\nRaw tick-sampled user time of a process, ns."},
    {"process_prof_raw_ns", (PyCFunction)(void (*)(void))py_process_prof_raw_ns, METH_FASTCALL, "process_prof_raw_ns($module, pid=0, /)\n--\n\nRaw tick-sampled user + system time of a process, ns."},
    {"process_times", (PyCFunction)(void (*)(void))py_process_times, METH_FASTCALL, "process_times($module, pid=0, /)\n--\n\nConsistent split of a process's CPU time."},
    {"procfs_read", (PyCFunction)(void (*)(void))py_procfs_read, METH_FASTCALL, "procfs_read($module, pid=0, tid=0, /)\n--\n\nParses /proc/<pid>/task/<tid>/stat: ProcStat(user_ns, system_ns, state, name)."},
    {"set_method", py_set_method, METH_O, "set_method($module, name, /)\n--\n\nHow clocks are read: 'auto', 'clockid', 'getrusage' or 'procfs'."},
    {"method", py_method, METH_NOARGS, "method($module, /)\n--\n\nThe method clocks are read with now."},
    {"_cache_size", py_cache_size, METH_NOARGS, "_cache_size($module, /)\n--\n\nHandles thread_times() holds (for tests)."},
    {"start_log", (PyCFunction)(void (*)(void))py_start_log, METH_VARARGS | METH_KEYWORDS, "start_log($module, /, *, ring_records=0, crash_file=None, exit_dump_path=None, cpu_on_intervals=False, max_threads=0, clock='auto')\n--\n\nStarts the event log."},
    {"stop_log", py_stop_log, METH_NOARGS, "stop_log($module, /)\n--\n\nStops recording; the rings stay readable by dump()."},
    {"dump", py_dump, METH_O, "dump($module, path, /)\n--\n\nWrites every thread's ring to a trace file."},
    {"log_thread_name", py_log_thread_name, METH_O, "log_thread_name($module, name, /)\n--\n\nNames the calling thread in the trace (15 bytes kept)."},
    {"log_info", py_log_info, METH_NOARGS, "log_info($module, /)\n--\n\nWhat the running (or last) log uses: LogInfo."},
    {"event", (PyCFunction)(void (*)(void))py_event, METH_FASTCALL, "event($module, id, payload=None, /)\n--\n\nRecords an event; payload: None, str or bytes (16 bytes kept) or an int (64 bits). Records nothing while the log is stopped."},
    {"event_name", (PyCFunction)(void (*)(void))py_event_name, METH_FASTCALL, "event_name($module, id, name, /)\n--\n\nNames an event id (1 to 255 bytes of UTF-8) in every trace written afterwards; naming it again replaces the name. Works whether or not the log runs."},
    {"_trace_open", ttpy_trace_open, METH_O, "_trace_open($module, path, /)\n--\n\nParses a trace file with the core's reader (threadtime.read_trace wraps it)."},
    {"_trace_columns", ttpy_trace_columns, METH_O, "_trace_columns($module, data, /)\n--\n\nEvery event of a parsed trace as flat columns (for Trace.to_pandas)."},
    {NULL, NULL, 0, NULL},
};

static PyStructSequence_Field times_fields[] = {
    {"user_ns", "user-mode CPU time, ns"},
    {"system_ns", "kernel-mode CPU time, ns"},
    {"total_ns", "user_ns + system_ns, exactly"},
    {NULL, NULL},
};

static PyStructSequence_Desc times_desc = {
    "threadtime.Times", "A consistent split of CPU time: user_ns + system_ns == total_ns.", times_fields, 3,
};

static PyStructSequence_Field procstat_fields[] = {
    {"user_ns", "utime, clock ticks converted to ns"},
    {"system_ns", "stime, clock ticks converted to ns"},
    {"state", "the task state letter ('R', 'S', ...)"},
    {"name", "the task name as the kernel holds it (at most 15 bytes)"},
    {NULL, NULL},
};

static PyStructSequence_Desc procstat_desc = {
    "threadtime.ProcStat", "One parsed /proc stat line.", procstat_fields, 4,
};

static PyStructSequence_Field loginfo_fields[] = {
    {"running", "True while recording"},
    {"clock", "what stamps events: 'counter' or 'monotonic'"},
    {"counter_hz", "calibrated counter frequency (0.0 with 'monotonic')"},
    {"ring_records", "records per thread ring"},
    {"max_threads", "rings at most"},
    {"crash_safe", "True if the rings live in a file"},
    {NULL, NULL},
};

static PyStructSequence_Desc loginfo_desc = {
    "threadtime.LogInfo", "What the running (or last) event log uses.", loginfo_fields, 6,
};

int ttpy_add_type(PyObject *mod, const char *name, PyTypeObject *type)
{
    Py_INCREF(type);
    if (PyModule_AddObject(mod, name, (PyObject *)type) != 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

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
        times_type = PyStructSequence_NewType(&times_desc);
        procstat_type = PyStructSequence_NewType(&procstat_desc);
        loginfo_type = PyStructSequence_NewType(&loginfo_desc);
        clock_type = (PyTypeObject *)PyType_FromSpec(&clock_spec);
        interval_type = (PyTypeObject *)PyType_FromSpec(&interval_spec);
        clock_cache = PyDict_New();
        if (times_type == NULL || procstat_type == NULL || loginfo_type == NULL || clock_type == NULL ||
            interval_type == NULL || clock_cache == NULL)
            return -1;
        owner_interp = interp;
    }
    if (ttpy_add_type(mod, "Times", times_type) || ttpy_add_type(mod, "ProcStat", procstat_type) ||
        ttpy_add_type(mod, "LogInfo", loginfo_type) || ttpy_add_type(mod, "ThreadClock", clock_type) ||
        ttpy_add_type(mod, "interval", interval_type) || ttpy_trace_init(mod) ||
        PyModule_AddStringConstant(mod, "__version__", tt_version()) != 0)
        return -1;
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
