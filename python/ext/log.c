/* threadtime._core's event log: start, stop, dump, the log's state, events
 * and the names of their ids.
 *
 * event() is the hot call: METH_FASTCALL, an int id straight through, a
 * str id one dict lookup (the name's hash is cached in the str). Every
 * argument is checked before the core is called, so a bad one changes
 * nothing; what a record cannot hold is refused, never cut silently,
 * except text beyond TT_EVENT_TEXT_MAX bytes, which the record format
 * truncates by design (documented).
 */
#include "core.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "threadtime/threadtime.h"

static PyTypeObject *loginfo_type; /* LogInfo(running, clock, ...) */
static PyObject *running_error;    /* LogRunningError */
/* Event names given to event()/interval() or event_name(): str -> id.
 * Touched only under TTPY_LOCKED(names). */
static PyObject *names;
/* The next id a new name gets: they are handed out from the top of the id
 * space down, away from the small ids programs number by hand. */
static uint32_t next_name_id = UINT32_MAX;

/* Names of tt_log_clock values, indexed by the value. */
static const char *const log_clock_names[] = {"auto", "counter", "monotonic"};
#define LOG_CLOCKS ((int)(sizeof log_clock_names / sizeof log_clock_names[0]))

/* The core reports "log not running" as ESRCH, whose general text speaks
 * of threads; the log calls say what it means here. */
static PyObject *raise_log_code(int rc)
{
    return rc == -ESRCH ? ttpy_raise_errno(ESRCH, "the event log is not running", NULL) : ttpy_raise_code(rc);
}

/* ---- ids, names, payloads ---- */

/* An int id: 0 to 2**32-1, not a bool. Anything else that is not an int
 * (a float, None) is named in the error, with the way to an int id. */
static int as_int_event_id(PyObject *o, uint32_t *out)
{
    if (PyBool_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "an event id must be an int or a str, not a bool");
        return -1;
    }
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError,
                     "an event id must be an int (0 to %lu) or a str name, not %R (%R)", (unsigned long)UINT32_MAX,
                     o, (PyObject *)Py_TYPE(o));
        return -1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow || v < 0 || v > (long long)UINT32_MAX) {
        if (overflow)
            PyErr_Format(PyExc_ValueError, "an event id must be 0 to %lu, not %R", (unsigned long)UINT32_MAX, o);
        else
            PyErr_Format(PyExc_ValueError, "an event id must be 0 to %lu, not %lld", (unsigned long)UINT32_MAX, v);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* UTF-8 of str s with its length, refusing an embedded NUL (what the core
 * takes is a C string). what names the argument in the error. */
static const char *utf8_no_nul(PyObject *s, Py_ssize_t *len, const char *what)
{
    const char *text = PyUnicode_AsUTF8AndSize(s, len);
    if (text != NULL && memchr(text, 0, (size_t)*len)) {
        PyErr_Format(PyExc_ValueError, "%s cannot hold a NUL character", what);
        return NULL;
    }
    return text;
}

/* A name as the core's event-name table takes it; NULL with the error set. */
static const char *as_event_name(PyObject *s, Py_ssize_t *len)
{
    const char *name = utf8_no_nul(s, len, "an event name");
    if (name != NULL && (*len == 0 || *len > TT_EVENT_NAME_MAX)) {
        PyErr_Format(PyExc_ValueError, "an event name must be 1 to %d bytes of UTF-8, not %zd", TT_EVENT_NAME_MAX,
                     *len);
        return NULL;
    }
    return name;
}

/* Points name at id in the names dict, dropping the names id had before
 * (the core's table holds one name per id). Dict locked. */
static int names_bind(PyObject *name, uint32_t id)
{
    PyObject *idobj = PyLong_FromUnsignedLong(id);
    PyObject *old = PyList_New(0);
    int rc = idobj == NULL || old == NULL ? -1 : 0;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (rc == 0 && PyDict_Next(names, &pos, &key, &value))
        if (PyObject_RichCompareBool(value, idobj, Py_EQ) == 1)
            rc = PyList_Append(old, key);
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_Size(old); i++)
        rc = PyDict_DelItem(names, PyList_GetItem(old, i));
    if (rc == 0)
        rc = PyDict_SetItem(names, name, idobj);
    Py_XDECREF(idobj);
    Py_XDECREF(old);
    return rc;
}

/* The id of a name, giving it a new one (named in the core) at first use.
 * Dict locked. */
static int name_id(PyObject *name, uint32_t *out)
{
    PyObject *known = PyDict_GetItemWithError(names, name);
    if (known != NULL) {
        *out = (uint32_t)PyLong_AsUnsignedLong(known);
        return 0;
    }
    if (PyErr_Occurred())
        return -1;
    Py_ssize_t len;
    const char *text = as_event_name(name, &len);
    if (text == NULL)
        return -1;
    uint32_t id = next_name_id;
    int rc = tt_event_name(id, text);
    if (rc != 0)
        return ttpy_raise_code(rc), -1;
    if (names_bind(name, id) != 0)
        return -1;
    next_name_id--;
    *out = id;
    return 0;
}

int ttpy_event_id(PyObject *o, uint32_t *out)
{
    if (!PyUnicode_Check(o))
        return as_int_event_id(o, out);
    int rc;
    TTPY_LOCKED(names, rc = name_id(o, out));
    return rc;
}

/* event(id), event(id, "text"), event(id, b"text"), event(id, value). */
static PyObject *py_event(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    uint32_t id;
    if (nargs < 1 || nargs > 2)
        return PyErr_Format(PyExc_TypeError, "event() takes 1 or 2 arguments (%zd given)", nargs);
    if (ttpy_event_id(args[0], &id))
        return NULL;
    PyObject *payload = nargs == 2 ? args[1] : Py_None;
    if (payload == Py_None) {
        tt_event(id);
    } else if (PyUnicode_Check(payload)) {
        /* A record ends its text at the first NUL, so one inside would cut
         * what follows: refused. Beyond TT_EVENT_TEXT_MAX bytes the text is
         * truncated (the record's size). */
        Py_ssize_t len;
        const char *text = utf8_no_nul(payload, &len, "event text");
        if (text == NULL)
            return NULL;
        tt_event_text(id, text);
    } else if (PyBytes_Check(payload)) {
        /* Any bytes but NUL are kept; the reader gives them back as a str
         * decoded with surrogateescape. */
        const char *text = PyBytes_AsString(payload);
        if (memchr(text, 0, (size_t)PyBytes_Size(payload)))
            return PyErr_Format(PyExc_ValueError, "event bytes cannot hold a NUL byte");
        tt_event_text(id, text);
    } else if (PyLong_Check(payload)) {
        int overflow;
        long long s = PyLong_AsLongLongAndOverflow(payload, &overflow);
        if (s == -1 && PyErr_Occurred())
            return NULL;
        unsigned long long v = (unsigned long long)s;
        if (overflow > 0) {
            v = PyLong_AsUnsignedLongLong(payload);
            if (v == (unsigned long long)-1 && PyErr_Occurred()) {
                PyErr_Clear();
                overflow = -1; /* reported below */
            }
        }
        if (overflow < 0 || (overflow == 0 && s < 0))
            return PyErr_Format(PyExc_ValueError, "an event value must be 0 to 2**64-1, not %R", payload);
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
    if (as_int_event_id(args[0], &id))
        return NULL;
    if (!PyUnicode_Check(args[1]))
        return PyErr_Format(PyExc_TypeError, "event name must be str, not %R", (PyObject *)Py_TYPE(args[1]));
    Py_ssize_t len;
    const char *name = as_event_name(args[1], &len);
    if (name == NULL)
        return NULL;
    int rc, bound;
    /* Bound under the lock with the core's call, so that event(name)
     * always names the id the core has that name for. */
    TTPY_LOCKED(names, rc = tt_event_name(id, name); bound = rc == 0 ? names_bind(args[1], id) : 0);
    if (rc != 0)
        return ttpy_raise_code(rc);
    return bound != 0 ? NULL : Py_NewRef(Py_None);
}

/* ---- control ---- */

/* O& converter: None stays NULL, anything else becomes fs-encoded bytes. */
static int opt_path(PyObject *o, void *out)
{
    if (o == Py_None) {
        *(PyObject **)out = NULL;
        return 1;
    }
    return PyUnicode_FSConverter(o, out);
}

/* A count option: 0 (the environment's value, else the default) or min to
 * max, as event.h states them. 0 or -1 with a ValueError naming it. */
static int count_option(PyObject *o, const char *name, unsigned long min, unsigned long max, uint32_t *out)
{
    if (o == NULL) {
        *out = 0;
        return 0;
    }
    if (PyBool_Check(o) || !PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError, "start_log(): %s must be an int, not %R", name, (PyObject *)Py_TYPE(o));
        return -1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow || (v != 0 && (v < (long long)min || v > (long long)max))) {
        PyErr_Format(PyExc_ValueError, "start_log(): %s must be 0 (the default) or %lu to %lu, not %R", name, min,
                     max, o);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* An EINVAL of tt_log_start once every argument passed: an environment
 * variable the options left to it holds a bad value, which the core names
 * (tt_log_error: the variable, and what it allows). */
static PyObject *raise_bad_environment(void)
{
    const char *why = tt_log_error();
    return PyErr_Format(PyExc_ValueError, "start_log(): %s (a value out of range; see docs/events.md)",
                        *why ? why : "an environment variable holds a value out of range");
}

static void raise_running(void)
{
    PyObject *args = Py_BuildValue("(is)", EALREADY, "the event log is already running: stop_log() first");
    if (args != NULL) {
        PyErr_SetObject(running_error, args);
        Py_DECREF(args);
    }
}

/* Every failure of a start with a crash file but ENOMEM is making that
 * file: the error names it. */
static void raise_crash_file(int rc, PyObject *path_bytes)
{
    PyObject *name = PyUnicode_DecodeFSDefault(PyBytes_AsString(path_bytes));
    if (name != NULL) {
        ttpy_raise_code_path(rc, name);
        Py_DECREF(name);
    }
}

static PyObject *py_start_log(PyObject *m, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"ring_records", "crash_file", "exit_dump_path", "cpu_on_intervals",
                             "max_threads", "clock", NULL};
    PyObject *ring = NULL, *threads = NULL;
    PyObject *crash = NULL, *exit_dump = NULL;
    int cpu = 0;
    const char *clock = "auto";
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OO&O&pOs:start_log", kwlist, &ring, opt_path, &crash,
                                     opt_path, &exit_dump, &cpu, &threads, &clock))
        return NULL;
    tt_log_options o = {.size = sizeof o};
    o.cpu_on_intervals = cpu;
    o.crash_file = crash ? PyBytes_AsString(crash) : NULL;
    o.exit_dump_path = exit_dump ? PyBytes_AsString(exit_dump) : NULL;
    int c = 0;
    while (c < LOG_CLOCKS && strcmp(clock, log_clock_names[c]) != 0)
        c++;
    PyObject *result = NULL;
    if (count_option(ring, "ring_records", 1, TT_LOG_RING_MAX, &o.ring_records) ||
        count_option(threads, "max_threads", 1, TT_LOG_THREADS_MAX, &o.max_threads)) {
        /* the error is set */
    } else if ((o.crash_file && !*o.crash_file) || (o.exit_dump_path && !*o.exit_dump_path)) {
        PyErr_Format(PyExc_ValueError, "start_log(): %s is empty (None: no file)",
                     o.crash_file && !*o.crash_file ? "crash_file" : "exit_dump_path");
    } else if (c == LOG_CLOCKS) {
        PyErr_Format(PyExc_ValueError, "start_log(): unknown clock '%s' (auto, counter or monotonic)", clock);
    } else {
        o.clock = (tt_log_clock)c;
        int rc;
        Py_BEGIN_ALLOW_THREADS /* the first start calibrates the counter: ~10 ms */
        rc = tt_log_start(&o);
        Py_END_ALLOW_THREADS
        if (rc == 0)
            result = Py_NewRef(Py_None);
        else if (rc == -EALREADY)
            raise_running();
        else if (rc == -EINVAL)
            raise_bad_environment();
        else if (crash && rc != -ENOMEM)
            raise_crash_file(rc, crash);
        else
            ttpy_raise_code(rc);
    }
    Py_XDECREF(crash);
    Py_XDECREF(exit_dump);
    return result;
}

/* A second stop, or one before any start, has nothing to do. */
static PyObject *py_stop_log(PyObject *m, PyObject *unused)
{
    int rc = tt_log_stop();
    return rc != 0 && rc != -ESRCH ? raise_log_code(rc) : Py_NewRef(Py_None);
}

/* A trace is written to "<path>.tmp<pid>" beside path, then renamed over
 * it (a device or pipe is written through an unnamed file): when path
 * exists, ENOENT or EACCES came from that file, not from path. */
static PyObject *raise_dump_error(int rc, PyObject *path, const char *p)
{
    struct stat sb;
    if ((rc == -ENOENT || rc == -EACCES || rc == -EROFS) && stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) {
        char *copy = strdup(p);
        if (copy == NULL)
            return PyErr_NoMemory();
        PyObject *dir = PyUnicode_DecodeFSDefault(dirname(copy));
        free(copy);
        if (dir == NULL)
            return NULL;
        PyObject *text = PyUnicode_FromFormat("cannot write a trace over %R: it is written to a temporary file "
                                              "in %R first, which that directory refuses (%s)",
                                              path, dir, tt_strerror(rc));
        Py_DECREF(dir);
        if (text == NULL)
            return NULL;
        PyObject *exc = PyObject_CallFunction(PyExc_OSError, "iOO", -rc, text, path);
        Py_DECREF(text);
        if (exc != NULL) {
            PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
            Py_DECREF(exc);
        }
        return NULL;
    }
    return rc == -ESRCH ? raise_log_code(rc) : ttpy_raise_code_path(rc, path);
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
    PyObject *result = rc != 0 ? raise_dump_error(rc, arg, p) : Py_NewRef(Py_None);
    Py_DECREF(path);
    return result;
}

static PyObject *py_log_thread_name(PyObject *m, PyObject *arg)
{
    if (!PyUnicode_Check(arg))
        return PyErr_Format(PyExc_TypeError, "log_thread_name() takes a str, not %R", (PyObject *)Py_TYPE(arg));
    Py_ssize_t len;
    const char *name = utf8_no_nul(arg, &len, "a thread name");
    if (name == NULL)
        return NULL;
    int rc = tt_log_thread_name(name);
    return rc != 0 ? raise_log_code(rc) : Py_NewRef(Py_None);
}

static PyObject *py_log_info(PyObject *m, PyObject *unused)
{
    tt_log_info info = {.size = sizeof info};
    int rc = tt_log_info_get(&info);
    if (rc == -ESRCH) /* never started: nothing is set yet */
        info = (tt_log_info){.size = sizeof info, .source = TT_LOG_CLOCK_AUTO};
    else if (rc != 0)
        return raise_log_code(rc);
    const char *clock = (unsigned)info.source < (unsigned)LOG_CLOCKS ? log_clock_names[info.source] : "?";
    PyObject *items[6] = {
        PyBool_FromLong(info.running),      PyUnicode_FromString(clock),
        PyFloat_FromDouble(info.counter_hz), PyLong_FromUnsignedLong(info.ring_records),
        PyLong_FromUnsignedLong(info.max_threads), PyBool_FromLong(info.crash_safe),
    };
    return ttpy_struct_new(loginfo_type, items, 6);
}

static PyMethodDef log_methods[] = {
    {"start_log", (PyCFunction)(void (*)(void))py_start_log, METH_VARARGS | METH_KEYWORDS,
     "start_log($module, /, *, ring_records=0, crash_file=None, exit_dump_path=None, cpu_on_intervals=False, "
     "max_threads=0, clock='auto')\n--\n\n"
     "Starts the event log: from now on event() and interval() record into a\n"
     "ring per thread. 0 or None leaves an option to its THREADTIME_*\n"
     "environment variable, else the default.\n\n"
     "ring_records: records per thread ring, 1 to 8388608, rounded up to a\n"
     "  power of two of at least 16 (default 16384: 512 KiB per thread).\n"
     "crash_file: keep the rings in this file, a trace that survives a crash.\n"
     "exit_dump_path: write a trace here when the process exits.\n"
     "cpu_on_intervals: every interval bound also records the thread's CPU time.\n"
     "max_threads: rings at most, 1 to 65536 (default 256).\n"
     "clock: what stamps events: 'auto', 'counter' or 'monotonic'.\n\n"
     "The rings of an earlier run are discarded. The first start calibrates\n"
     "the counter (~10 ms, GIL released). Raises LogRunningError if the log\n"
     "runs already, ValueError for an option out of range, OSError (with\n"
     "the file name) if the crash file cannot be made."},
    {"stop_log", py_stop_log, METH_NOARGS, "stop_log($module, /)\n--\n\nStops recording; the rings stay readable by dump(). Does nothing if the log is not running."},
    {"dump", py_dump, METH_O, "dump($module, path, /)\n--\n\nWrites every thread's ring to a trace file."},
    {"log_thread_name", py_log_thread_name, METH_O, "log_thread_name($module, name, /)\n--\n\nNames the calling thread in the trace: 1 to 255 bytes of UTF-8, kept whole (format 1.2). Needs a running log."},
    {"log_info", py_log_info, METH_NOARGS, "log_info($module, /)\n--\n\nWhat the running (or last) log uses: LogInfo. Before the first start_log(): running=False, clock='auto' and zeros."},
    {"event", (PyCFunction)(void (*)(void))py_event, METH_FASTCALL, "event($module, id, payload=None, /)\n--\n\nRecords an event. id: an int (0 to 2**32-1) or a str, a name that gets an id of its own. payload: None, str or bytes (16 bytes kept, no NUL) or an int (0 to 2**64-1). Records nothing while the log is stopped."},
    {"event_name", (PyCFunction)(void (*)(void))py_event_name, METH_FASTCALL, "event_name($module, id, name, /)\n--\n\nNames an event id (1 to 255 bytes of UTF-8) in every trace written afterwards; naming it again replaces the name, and event(name) then records this id. Works whether or not the log runs."},
    {NULL, NULL, 0, NULL},
};

static PyStructSequence_Field loginfo_fields[] = {
    {"running", "True while recording"},
    {"clock", "what stamps events: 'counter' or 'monotonic' ('auto' before the first start)"},
    {"counter_hz", "calibrated counter frequency (0.0 with 'monotonic')"},
    {"ring_records", "records per thread ring"},
    {"max_threads", "rings at most"},
    {"crash_safe", "True if the rings live in a file"},
    {NULL, NULL},
};

static PyStructSequence_Desc loginfo_desc = {
    "threadtime.LogInfo", "What the running (or last) event log uses.", loginfo_fields, 6,
};

int ttpy_log_init(PyObject *mod)
{
    if (loginfo_type == NULL) {
        loginfo_type = PyStructSequence_NewType(&loginfo_desc);
        running_error = PyErr_NewExceptionWithDoc(
            "threadtime.LogRunningError",
            "start_log() while the event log runs already (errno EALREADY): stop_log() first.", PyExc_OSError, NULL);
        names = PyDict_New();
        if (loginfo_type == NULL || running_error == NULL || names == NULL)
            return -1;
    }
    return PyModule_AddFunctions(mod, log_methods) || ttpy_add_type(mod, "LogInfo", loginfo_type) ||
           ttpy_add_type(mod, "LogRunningError", (PyTypeObject *)running_error);
}
