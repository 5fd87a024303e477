/* threadtime._core's trace reader: the core's own parser (src/trace_read.c)
 * and trace model (src/trace_model.c: owners, tracks, pairs) behind a
 * Python face, so Python sees exactly what `threadtime dump` sees, with the
 * same checks, the same pairs and the same messages for a damaged file.
 *
 * _trace_open(path) checks the file's header on its first 64 KiB, then
 * reads the whole file into memory (a snapshot: a live
 * crash-safe file may grow, shrink or be rewritten meanwhile, which a
 * mapping would turn into SIGBUS) and parses it once. Events are decoded
 * on access by an Events sequence per thread, so opening a 10-million-event
 * trace builds no per-event object; _trace_columns() fills flat arrays for
 * to_pandas() in one pass. Everything here is immutable once built, so it
 * needs no lock with or without the GIL.
 */
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_model.h"
#include "util.h"

static PyTypeObject *event_type;  /* Event(t_ns, kind, id, value, text, cpu_user_ns, cpu_system_ns, seq,
                                    name, vthread, thrown) */
static PyTypeObject *data_type;   /* TraceData: the file's bytes and the parse */
static PyTypeObject *events_type; /* Events: one thread's events, decoded on access */
/* Kind names by TT__KIND_* value, made once: every Event shares them
 * (end_thrown among them, though the reader shows such records as ends). */
#define KINDS (TT__KIND_RUN_WAIT + 1)
static PyObject *kind_names[KINDS];

/* An event's value: a 'value' event's, a run_wait's wait so far, or the
 * figure an end_cpu_total or end_mounted carries. Returns whether it has
 * one. */
static int event_value(const tt__trace_event *ev, uint64_t *v)
{
    int64_t ns;
    if (ev->kind == TT__KIND_VALUE || ev->kind == TT__KIND_RUN_WAIT) {
        *v = ev->p0;
        return 1;
    }
    if (tt__event_measured(ev, &ns)) {
        *v = (uint64_t)ns;
        return 1;
    }
    *v = 0;
    return 0;
}

/* A pair's figure measured by its caller, if its end is of kind k. */
static PyObject *measured_of(const tt__step *end, unsigned k)
{
    int64_t ns;
    if (end->ev.kind != k || !tt__event_measured(&end->ev, &ns))
        return Py_NewRef(Py_None);
    return PyLong_FromLongLong(ns);
}

/* ---- TraceData ---- */

typedef struct {
    PyObject_HEAD
    unsigned char *buf;
    size_t len;
    tt__trace t;
    Py_ssize_t events; /* committed events in all threads, counted by events_make */
} DataObject;

static void data_dealloc(PyObject *o)
{
    PyTypeObject *type = Py_TYPE(o);
    DataObject *d = (DataObject *)o;
    tt__trace_close(&d->t);
    free(d->buf);
    ((freefunc)PyType_GetSlot(type, Py_tp_free))(o);
    Py_DECREF(type);
}

static PyType_Slot data_slots[] = {
    {Py_tp_dealloc, data_dealloc},
    {Py_tp_doc, "The bytes of a trace file and the core's parse of them (internal)."},
    {0, NULL},
};

static PyType_Spec data_spec = {
    "threadtime._core.TraceData", sizeof(DataObject), 0, Py_TPFLAGS_DEFAULT, data_slots,
};

/* ---- Events: a thread's committed events ---- */

typedef struct {
    PyObject_HEAD
    DataObject *data;
    const tt__trace_thread *th;
    Py_ssize_t count;
    uint64_t *pos; /* record k of each committed event, or NULL when none is missing */
    tt__vwindow *windows; /* by position, or NULL when the thread carried no virtual thread */
    size_t nwindows;
} EventsObject;

static void events_dealloc(PyObject *o)
{
    PyTypeObject *type = Py_TYPE(o);
    EventsObject *e = (EventsObject *)o;
    free(e->pos);
    free(e->windows);
    Py_XDECREF(e->data);
    ((freefunc)PyType_GetSlot(type, Py_tp_free))(o);
    Py_DECREF(type);
}

static Py_ssize_t events_len(PyObject *o) { return ((EventsObject *)o)->count; }

static PyObject *opt_u64(int present, uint64_t v) { return present ? PyLong_FromUnsignedLongLong(v) : Py_NewRef(Py_None); }

/* The name of an event's id as str, or None (markers have none). */
static PyObject *event_name(const tt__trace *t, const tt__trace_event *ev)
{
    size_t len;
    const char *name = tt__trace_name_of(t, ev->id, &len);
    if (name == NULL || ev->kind == TT__KIND_MOUNT || ev->kind == TT__KIND_UNMOUNT)
        return Py_NewRef(Py_None);
    return PyUnicode_DecodeUTF8(name, (Py_ssize_t)len, "strict"); /* the reader checked it */
}

static PyObject *event_new(const tt__trace *t, const tt__trace_event *ev, uint64_t vthread)
{
    PyObject *o = PyStructSequence_New(event_type);
    if (o == NULL)
        return NULL;
    /* Texts are at most 16 bytes (255 for a literal), cut where the writer
     * cut them, possibly inside a UTF-8 sequence: surrogateescape keeps it. */
    uint64_t value;
    int has_value = event_value(ev, &value);
    PyObject *items[11] = {
        PyLong_FromLongLong(tt__trace_rebase(t, ev)),
        Py_NewRef(kind_names[ev->kind]),
        PyLong_FromUnsignedLong(ev->id),
        opt_u64(has_value, value),
        ev->text ? PyUnicode_DecodeUTF8(ev->text, (Py_ssize_t)ev->text_len, "surrogateescape") : Py_NewRef(Py_None),
        opt_u64(tt__event_has_cpu(ev), ev->p0),
        opt_u64(tt__event_has_cpu(ev), ev->p1),
        PyLong_FromUnsignedLongLong(ev->index),
        event_name(t, ev),
        opt_u64(vthread != 0, vthread),
        PyBool_FromLong(ev->thrown),
    };
    int failed = 0;
    for (Py_ssize_t i = 0; i < 11; i++) {
        failed |= items[i] == NULL;
        if (items[i] != NULL)
            PyStructSequence_SetItem(o, i, items[i]);
    }
    if (failed)
        Py_CLEAR(o);
    return o;
}

static PyObject *events_item(PyObject *o, Py_ssize_t k)
{
    EventsObject *e = (EventsObject *)o;
    if (k < 0 || k >= e->count) {
        PyErr_SetString(PyExc_IndexError, "event index out of range");
        return NULL;
    }
    tt__trace_event ev;
    uint64_t at = e->pos ? e->pos[k] : (uint64_t)k;
    /* Cannot fail: the constructor kept only records that decode. */
    tt__trace_event_at(&e->data->t, e->th, at, &ev);
    return event_new(&e->data->t, &ev, tt__window_of(e->windows, e->nwindows, at));
}

static PyObject *events_subscript(PyObject *o, PyObject *key)
{
    EventsObject *e = (EventsObject *)o;
    if (PySlice_Check(key)) {
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(key, &start, &stop, &step) < 0)
            return NULL;
        Py_ssize_t n = PySlice_AdjustIndices(e->count, &start, &stop, step);
        PyObject *list = PyList_New(n);
        for (Py_ssize_t i = 0; list != NULL && i < n; i++) {
            PyObject *item = events_item(o, start + i * step);
            if (item == NULL)
                Py_CLEAR(list);
            else
                PyList_SetItem(list, i, item);
        }
        return list;
    }
    Py_ssize_t k = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (k == -1 && PyErr_Occurred())
        return NULL;
    return events_item(o, k < 0 ? k + e->count : k);
}

/* [start, stop) of a Sequence.index call, clamped like list.index. */
static void events_range(const EventsObject *e, Py_ssize_t *start, Py_ssize_t *stop)
{
    if (*start < 0)
        *start = *start + e->count < 0 ? 0 : *start + e->count;
    if (*stop < 0)
        *stop = *stop + e->count < 0 ? 0 : *stop + e->count;
    if (*stop > e->count)
        *stop = e->count;
}

/* Sequence.index and Sequence.count: the events equal to value (Event is a
 * tuple, compared field by field), decoded one at a time. */
static PyObject *events_index(PyObject *o, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"value", "start", "stop", NULL};
    EventsObject *e = (EventsObject *)o;
    PyObject *value;
    Py_ssize_t start = 0, stop = PY_SSIZE_T_MAX;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|nn:index", kw, &value, &start, &stop))
        return NULL;
    events_range(e, &start, &stop);
    for (Py_ssize_t k = start; k < stop; k++) {
        PyObject *item = events_item(o, k);
        int same = item == NULL ? -1 : PyObject_RichCompareBool(item, value, Py_EQ);
        Py_XDECREF(item);
        if (same < 0)
            return NULL;
        if (same)
            return PyLong_FromSsize_t(k);
    }
    PyErr_SetString(PyExc_ValueError, "Events.index(x): x not in the events");
    return NULL;
}

static PyObject *events_count(PyObject *o, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"value", NULL};
    EventsObject *e = (EventsObject *)o;
    PyObject *value;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:count", kw, &value))
        return NULL;
    Py_ssize_t n = 0;
    for (Py_ssize_t k = 0; k < e->count; k++) {
        PyObject *item = events_item(o, k);
        int same = item == NULL ? -1 : PyObject_RichCompareBool(item, value, Py_EQ);
        Py_XDECREF(item);
        if (same < 0)
            return NULL;
        n += same;
    }
    return PyLong_FromSsize_t(n);
}

static PyMethodDef events_methods[] = {
    {"index", (PyCFunction)(void (*)(void))events_index, METH_VARARGS | METH_KEYWORDS,
     "index($self, /, value, start=0, stop=sys.maxsize)\n--\n\nThe first position of an event equal to value in [start, stop); ValueError if none."},
    {"count", (PyCFunction)(void (*)(void))events_count, METH_VARARGS | METH_KEYWORDS,
     "count($self, /, value)\n--\n\nHow many events equal value."},
    {NULL, NULL, 0, NULL},
};

static PyObject *events_repr(PyObject *o)
{
    EventsObject *e = (EventsObject *)o;
    return PyUnicode_FromFormat("<threadtime.Events of tid %u: %zd events>", (unsigned)e->th->tid, e->count);
}

static PyType_Slot events_slots[] = {
    {Py_tp_dealloc, events_dealloc},
    {Py_sq_length, events_len},
    {Py_sq_item, events_item},
    {Py_mp_length, events_len},
    {Py_mp_subscript, events_subscript},
    {Py_tp_repr, events_repr},
    {Py_tp_methods, events_methods},
    {Py_tp_doc, "One thread's events in the order it recorded them: a read-only sequence of\n"
                "Event, each decoded when asked for (a collections.abc.Sequence)."},
    {0, NULL},
};

static PyType_Spec events_spec = {
    "threadtime.Events", sizeof(EventsObject), 0, Py_TPFLAGS_DEFAULT, events_slots,
};

/* The events of thread th: counts what decodes and, only when some record
 * does not (cut off, or overwritten during a live read), keeps the
 * positions of those that do. */
static PyObject *events_make(DataObject *d, const tt__trace_thread *th, uint64_t *missing)
{
    uint64_t total = th->head - th->first, count = 0;
    uint64_t *pos = NULL;
    tt__vwindow *windows = NULL;
    size_t nwindows = 0;
    tt__trace_event ev;
    for (uint64_t k = 0; k < total; k++)
        count += (uint64_t)tt__trace_event_at(&d->t, th, k, &ev);
    if (count < total) {
        pos = malloc((size_t)(count ? count : 1) * sizeof *pos);
        if (pos == NULL)
            return PyErr_NoMemory();
        for (uint64_t k = 0, j = 0; k < total; k++)
            if (tt__trace_event_at(&d->t, th, k, &ev))
                pos[j++] = k;
    }
    if (tt__trace_windows(&d->t, th, &windows, &nwindows) != 0) {
        free(pos);
        return PyErr_NoMemory();
    }
    *missing = total - count;
    d->events += (Py_ssize_t)count;
    EventsObject *e = (EventsObject *)((allocfunc)PyType_GetSlot(events_type, Py_tp_alloc))(events_type, 0);
    if (e == NULL) {
        free(pos);
        free(windows);
        return NULL;
    }
    e->data = (DataObject *)Py_NewRef((PyObject *)d);
    e->th = th;
    e->count = (Py_ssize_t)count;
    e->pos = pos;
    e->windows = windows;
    e->nwindows = nwindows;
    return (PyObject *)e;
}

/* ---- _trace_open ---- */

static PyObject *thread_tuple(DataObject *d, const tt__trace_thread *th)
{
    uint64_t missing = 0;
    PyObject *events = events_make(d, th, &missing);
    if (events == NULL)
        return NULL;
    size_t name_len;
    const char *name = tt__trace_thread_name(th, &name_len);
    /* A whole name (1.2) is checked UTF-8; the kernel's 15 bytes may not be. */
    return Py_BuildValue("(INsKKNK)", (unsigned)th->tid,
                         PyUnicode_DecodeUTF8(name, (Py_ssize_t)name_len, th->full_name ? "strict" : "surrogateescape"),
                         th->state == TT__RING_EXITED ? "exited" : "live", (unsigned long long)th->overwritten,
                         (unsigned long long)missing, events, (unsigned long long)th->damaged);
}

/* {id: name} of n entries of a name table (UTF-8 the reader checked), or
 * NULL with an exception. */
static PyObject *name_dict(const tt__trace_name *names, uint32_t n)
{
    PyObject *dict = PyDict_New();
    for (uint32_t i = 0; dict != NULL && i < n; i++) {
        PyObject *k = PyLong_FromUnsignedLongLong(names[i].id);
        PyObject *v = PyUnicode_DecodeUTF8(names[i].text, (Py_ssize_t)names[i].len, "strict");
        if (k == NULL || v == NULL || PyDict_SetItem(dict, k, v) != 0)
            Py_CLEAR(dict);
        Py_XDECREF(k);
        Py_XDECREF(v);
    }
    return dict;
}

/* _trace_open(path) -> (error, header, threads, data)
 *   error: None, or the reader's text when the file is damaged; then
 *          header is None if nothing in it is usable;
 *   header: (format, pid, source, counter_hz, start_mono_ns,
 *            start_realtime_ns, end_mono_ns or None, threads_dropped,
 *            rings_recycled, crash_safe_layout, names {id: str},
 *            vthread_names {id: str});
 *   threads: [(tid, name, state, overwritten, incomplete, Events, damaged)];
 *   data: the TraceData the Events read from (for _trace_columns). */
/* What is read of a file before the rest: enough for any header a writer
 * makes (128 to 256 bytes), so the reader's header checks run on it. */
#define HEAD_BYTES 65536

/* Up to n bytes from fd's start (pread on a file, else read: a pipe or a
 * device), fewer only at its end; the count or -errno. */
static ssize_t read_head(int fd, int seekable, unsigned char *head, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r;
        do
            r = seekable ? pread(fd, head + got, n - got, (off_t)got) : read(fd, head + got, n - got);
        while (r < 0 && errno == EINTR);
        if (r < 0)
            return -errno;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* The file's bytes into *buf (malloc'd), its header checked first: a file
 * that is no trace (a multi-GB file, /dev/zero) is refused after its first
 * HEAD_BYTES, with the reader's text in refused[]. 0, 1 (refused) or -errno. */
static int read_trace_file(int fd, unsigned char **buf, size_t *len, char *refused, size_t refused_size)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -errno;
    int seekable = S_ISREG(st.st_mode);
    unsigned char *head = malloc(HEAD_BYTES);
    if (head == NULL)
        return -ENOMEM;
    ssize_t n = read_head(fd, seekable, head, HEAD_BYTES);
    if (n < 0) {
        free(head);
        return (int)n;
    }
    tt__trace probe;
    int rc = tt__trace_open(&probe, head, (size_t)n);
    /* A header longer than the head is judged on the whole file, as before. */
    int refuse = rc == -EINVAL && ((size_t)n < HEAD_BYTES || strncmp(probe.error, "truncated", 9) != 0);
    if (refuse)
        snprintf(refused, refused_size, "%s", probe.error);
    tt__trace_close(&probe);
    if (rc == -ENOMEM || refuse) {
        free(head);
        return rc == -ENOMEM ? rc : 1;
    }
    if (seekable) { /* pread left the offset at 0: the whole file, from its start */
        free(head);
        return tt__read_all(fd, buf, len);
    }
    unsigned char *rest = NULL;
    size_t rest_len = 0;
    rc = (size_t)n < HEAD_BYTES ? 0 : tt__read_all(fd, &rest, &rest_len);
    unsigned char *whole = rc != 0 ? NULL : realloc(head, (size_t)n + rest_len + 1);
    if (whole != NULL && rest_len)
        memcpy(whole + n, rest, rest_len);
    free(rest);
    if (whole == NULL) {
        free(head);
        return rc != 0 ? rc : -ENOMEM;
    }
    *buf = whole;
    *len = (size_t)n + rest_len;
    return 0;
}

PyObject *ttpy_trace_open(PyObject *m, PyObject *arg)
{
    PyObject *path;
    if (!PyUnicode_FSConverter(arg, &path))
        return NULL;
    const char *p = PyBytes_AsString(path);
    unsigned char *buf = NULL;
    size_t len = 0;
    char refused[sizeof ((tt__trace *)0)->error];
    int rc;
    Py_BEGIN_ALLOW_THREADS /* open and read the file: I/O */
    /* O_NONBLOCK only for the open: a FIFO no one writes must not hang it. */
    int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    rc = fd < 0 ? -errno : fcntl(fd, F_SETFL, 0) != 0 ? -errno : read_trace_file(fd, &buf, &len, refused, sizeof refused);
    if (fd >= 0)
        close(fd);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (rc == 1)
        return Py_BuildValue("(sOOO)", refused, Py_None, Py_None, Py_None);
    if (rc != 0)
        return rc == -ENOMEM ? PyErr_NoMemory() : ttpy_raise_errno(-rc, strerror(-rc), arg);
    DataObject *d = (DataObject *)((allocfunc)PyType_GetSlot(data_type, Py_tp_alloc))(data_type, 0);
    if (d == NULL) {
        free(buf);
        return NULL;
    }
    d->buf = buf;
    d->len = len;
    rc = tt__trace_open(&d->t, buf, len);
    if (rc == -ENOMEM) {
        Py_DECREF(d);
        return PyErr_NoMemory();
    }
    const tt__trace *t = &d->t;
    if (rc != 0) {
        PyObject *r = Py_BuildValue("(sOOO)", t->error, Py_None, Py_None, Py_None);
        Py_DECREF(d);
        return r;
    }
    const tt__trace_header *h = &t->h;
    PyObject *end = (h->flags & TT__TRACE_END_ANCHOR) ? PyLong_FromLongLong(h->anchors[1].mono_ns) : Py_NewRef(Py_None);
    PyObject *names = name_dict(t->names, t->nnames);
    uint32_t nv;
    const tt__trace_name *vn = tt__trace_vthread_names(t, &nv);
    PyObject *vnames = names == NULL ? NULL : name_dict(vn, nv);
    PyObject *header = vnames == NULL ? NULL : Py_BuildValue(
        "(NIsdLLNIIOOO)", PyUnicode_FromFormat("%u.%u", (unsigned)h->version_major, (unsigned)h->version_minor),
        (unsigned)h->pid, tt__trace_source_name(h->source), h->counter_hz, (long long)h->anchors[0].mono_ns,
        (long long)h->anchors[0].real_ns, end, (unsigned)h->threads_dropped, (unsigned)h->rings_recycled,
        (h->flags & TT__TRACE_RING_LAYOUT) ? Py_True : Py_False, names, vnames);
    Py_XDECREF(names);
    Py_XDECREF(vnames);
    PyObject *threads = PyList_New(t->nthreads);
    for (uint32_t i = 0; threads != NULL && i < t->nthreads; i++) {
        PyObject *th = thread_tuple(d, &t->threads[i]);
        if (th == NULL)
            Py_CLEAR(threads);
        else
            PyList_SetItem(threads, i, th);
    }
    PyObject *r = NULL;
    if (header != NULL && threads != NULL)
        r = t->damaged ? Py_BuildValue("(sOOO)", t->error, header, threads, (PyObject *)d)
                       : Py_BuildValue("(OOOO)", Py_None, header, threads, (PyObject *)d);
    Py_XDECREF(header);
    Py_XDECREF(threads);
    Py_DECREF(d);
    return r;
}

/* ---- _trace_columns: every event of every thread, as flat arrays ---- */

/* A bytearray of n items of size bytes each; NULL with an error set. */
static PyObject *column(Py_ssize_t n, size_t size, void **data)
{
    PyObject *b = PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)size);
    if (b != NULL)
        *data = PyByteArray_AsString(b);
    return b;
}

/* Texts to codes: each distinct text once in a list, events point to it.
 * Event texts repeat (they are mostly literals), so a direct-mapped cache
 * of recent texts, compared by their bytes in the file, skips decoding and
 * the dict lookup for nearly every event. */
#define TEXT_CACHE 256
typedef struct texts {
    PyObject *list;  /* code -> str */
    PyObject *codes; /* str -> code */
    struct {
        const char *p;
        size_t len;
        int32_t code;
    } cache[TEXT_CACHE];
} texts;

static int32_t text_code(texts *tx, const char *p, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)p[i]) * 16777619u;
    h &= TEXT_CACHE - 1;
    if (tx->cache[h].p && tx->cache[h].len == len && memcmp(tx->cache[h].p, p, len) == 0)
        return tx->cache[h].code;
    PyObject *s = PyUnicode_DecodeUTF8(p, (Py_ssize_t)len, "surrogateescape");
    if (s == NULL)
        return -2;
    PyObject *known = PyDict_GetItemWithError(tx->codes, s);
    int32_t code;
    if (known != NULL) {
        code = (int32_t)PyLong_AsLong(known);
    } else if (PyErr_Occurred() || PyList_Size(tx->list) >= INT32_MAX) {
        Py_DECREF(s);
        return -2;
    } else {
        code = (int32_t)PyList_Size(tx->list);
        PyObject *c = PyLong_FromLong(code);
        int rc = c == NULL || PyList_Append(tx->list, s) || PyDict_SetItem(tx->codes, s, c);
        Py_XDECREF(c);
        if (rc) {
            Py_DECREF(s);
            return -2;
        }
    }
    Py_DECREF(s);
    tx->cache[h].p = p;
    tx->cache[h].len = len;
    tx->cache[h].code = code;
    return code;
}

/* _trace_columns(data) -> dict of str to bytearray (machine byte order)
 * or list: thread (uint32, the index into the thread list), seq
 * (uint64), t_ns (int64), kind (uint8, TT__KIND_*), id (uint32), value
 * (uint64) and has_value (uint8), cpu_user_ns, cpu_system_ns (uint64) and
 * has_cpu (uint8), text (int32: a code into texts, -1 for none), texts
 * (list of str), name (int32: the id's place in the trace's sorted name
 * table, -1 for none), vthread (uint64) and has_vthread (uint8), thrown
 * (uint8). */
PyObject *ttpy_trace_columns(PyObject *m, PyObject *arg)
{
    if (!PyObject_TypeCheck(arg, data_type))
        return PyErr_Format(PyExc_TypeError, "_trace_columns() takes a TraceData, not %R", (PyObject *)Py_TYPE(arg));
    const tt__trace *t = &((DataObject *)arg)->t;
    Py_ssize_t n = ((DataObject *)arg)->events;
    tt__trace_event ev;
    static const struct { const char *name; size_t size; } spec[] = {
        {"thread", 4}, {"seq", 8}, {"t_ns", 8}, {"kind", 1}, {"id", 4}, {"value", 8},
        {"has_value", 1}, {"cpu_user_ns", 8}, {"cpu_system_ns", 8}, {"has_cpu", 1}, {"text", 4},
        {"name", 4}, {"vthread", 8}, {"has_vthread", 1}, {"thrown", 1},
    };
    enum { C_THREAD, C_INDEX, C_T, C_KIND, C_ID, C_VALUE, C_HASV, C_CU, C_CS, C_HASC, C_TEXT, C_NAME, C_VT, C_HASVT,
           C_THROWN, NCOL };
    PyObject *cols[NCOL] = {NULL};
    void *p[NCOL];
    texts *tx = calloc(1, sizeof *tx);
    PyObject *result = NULL;
    if (tx == NULL)
        return PyErr_NoMemory();
    tx->list = PyList_New(0);
    tx->codes = PyDict_New();
    if (tx->list == NULL || tx->codes == NULL)
        goto done;
    for (int c = 0; c < NCOL; c++)
        if ((cols[c] = column(n, spec[c].size, &p[c])) == NULL)
            goto done;
    Py_ssize_t row = 0;
    for (uint32_t i = 0; i < t->nthreads; i++) {
        const tt__trace_thread *th = &t->threads[i];
        tt__owner_walk walk = {0, 0};
        for (uint64_t k = 0; k < th->head - th->first; k++) {
            if (!tt__trace_event_at(t, th, k, &ev)) /* the same records events_make counted */
                continue;
            uint64_t markers, vthread = tt__shown_vthread(tt__owner_step(&walk, &ev, &markers), &ev);
            int marker = tt__kind_is_marker(ev.kind);
            uint64_t v;
            int cpu = tt__event_has_cpu(&ev), value = event_value(&ev, &v);
            int32_t text = ev.text ? text_code(tx, ev.text, ev.text_len) : -1;
            if (text == -2)
                goto done;
            ((uint32_t *)p[C_THREAD])[row] = i;
            ((uint64_t *)p[C_INDEX])[row] = ev.index;
            ((int64_t *)p[C_T])[row] = tt__trace_rebase(t, &ev);
            ((uint8_t *)p[C_KIND])[row] = (uint8_t)ev.kind;
            ((uint32_t *)p[C_ID])[row] = ev.id;
            ((uint64_t *)p[C_VALUE])[row] = v;
            ((uint8_t *)p[C_HASV])[row] = (uint8_t)value;
            ((uint64_t *)p[C_CU])[row] = cpu ? ev.p0 : 0;
            ((uint64_t *)p[C_CS])[row] = cpu ? ev.p1 : 0;
            ((uint8_t *)p[C_HASC])[row] = (uint8_t)cpu;
            ((int32_t *)p[C_TEXT])[row] = text;
            /* The code is the name's place in the trace's sorted table. */
            ((int32_t *)p[C_NAME])[row] = marker ? -1 : tt__trace_name_index(t, ev.id);
            ((uint64_t *)p[C_VT])[row] = vthread;
            ((uint8_t *)p[C_HASVT])[row] = vthread != 0;
            ((uint8_t *)p[C_THROWN])[row] = (uint8_t)ev.thrown;
            row++;
        }
    }
    result = PyDict_New();
    for (int c = 0; result != NULL && c < NCOL; c++)
        if (PyDict_SetItemString(result, spec[c].name, cols[c]) != 0)
            Py_CLEAR(result);
    if (result != NULL && PyDict_SetItemString(result, "texts", tx->list) != 0)
        Py_CLEAR(result);
    PyObject *names = PyList_New(t->nnames);
    for (uint32_t i = 0; names != NULL && i < t->nnames; i++) {
        PyObject *v = PyUnicode_DecodeUTF8(t->names[i].text, (Py_ssize_t)t->names[i].len, "strict");
        if (v == NULL)
            Py_CLEAR(names);
        else
            PyList_SetItem(names, i, v);
    }
    if (result != NULL && (names == NULL || PyDict_SetItemString(result, "names", names) != 0))
        Py_CLEAR(result);
    Py_XDECREF(names);
done:
    for (int c = 0; c < NCOL; c++)
        Py_XDECREF(cols[c]);
    Py_XDECREF(tx->list);
    Py_XDECREF(tx->codes);
    free(tx);
    return result;
}

/* ---- _trace_intervals: the trace model's pairs ---- */

typedef struct pairs_ctx {
    const tt__trace *t;
    PyObject *by_thread; /* list: per OS thread (index), the pairs whose begin it recorded */
    int failed;
} pairs_ctx;

static void pairs_event(void *ctx, const tt__track *tr, const tt__step *end, const tt__step *b)
{
    pairs_ctx *c = ctx;
    if (!b || c->failed)
        return;
    int64_t user = 0, sys = 0, wait = 0;
    int cpu = tt__pair_cpu(b, end, &user, &sys);
    int waited = tt__pair_wait(c->t, b, end, &wait);
    PyObject *text = b->ev.text ? PyUnicode_DecodeUTF8(b->ev.text, (Py_ssize_t)b->ev.text_len, "surrogateescape")
                                : Py_NewRef(Py_None);
    PyObject *item = text == NULL ? NULL : Py_BuildValue(
        "(INILLNNNONNN)", (unsigned)end->thread,
        tr->vthread ? PyLong_FromUnsignedLongLong(tr->vthread) : Py_NewRef(Py_None), (unsigned)end->ev.id,
        (long long)b->ns, (long long)end->ns, text,
        cpu ? PyLong_FromLongLong(user) : Py_NewRef(Py_None), cpu ? PyLong_FromLongLong(sys) : Py_NewRef(Py_None),
        end->ev.thrown ? Py_True : Py_False, measured_of(end, TT__KIND_END_CPU_TOTAL),
        measured_of(end, TT__KIND_END_MOUNTED), waited ? PyLong_FromLongLong(wait) : Py_NewRef(Py_None));
    if (item == NULL || PyList_Append(PyList_GetItem(c->by_thread, b->thread), item) != 0)
        c->failed = 1;
    Py_XDECREF(item);
}

/* _trace_intervals(data) -> [[(end_thread, vthread, id, start_ns, end_ns,
 *   text, cpu_user_ns, cpu_system_ns, thrown, cpu_total_ns, mounted_ns,
 *   run_wait_ns)] per thread]: every pair the trace model finds (the pairs
 * `threadtime dump` draws), listed under the thread that recorded the
 * begin, in pairing order. cpu_user/system: None unless the pair's CPU is
 * its own (tt__pair_cpu); cpu_total, mounted: the figure an end_cpu_total
 * or end_mounted carries, else None; run_wait: the pair's run-queue wait
 * where the log recorded it (tt__pair_wait), else None. */
static PyObject *ttpy_trace_intervals(PyObject *m, PyObject *arg)
{
    (void)m;
    if (!PyObject_TypeCheck(arg, data_type))
        return PyErr_Format(PyExc_TypeError, "_trace_intervals() takes a TraceData, not %R", (PyObject *)Py_TYPE(arg));
    const tt__trace *t = &((DataObject *)arg)->t;
    pairs_ctx c = {t, PyList_New(t->nthreads), 0};
    for (uint32_t i = 0; c.by_thread != NULL && i < t->nthreads; i++) {
        PyObject *l = PyList_New(0);
        if (l == NULL)
            Py_CLEAR(c.by_thread);
        else
            PyList_SetItem(c.by_thread, i, l);
    }
    if (c.by_thread == NULL)
        return NULL;
    const tt__walk_ops ops = {NULL, pairs_event, NULL, NULL};
    int rc = tt__trace_walk(t, &ops, &c);
    if (rc != 0 || c.failed) {
        Py_DECREF(c.by_thread);
        return rc != 0 && !PyErr_Occurred() ? PyErr_NoMemory() : NULL;
    }
    return c.by_thread;
}

/* ---- _pair_events: the same rule on events a caller picked ---- */

typedef struct picked_ctx {
    PyObject *out;          /* list of pairs */
    const uint64_t *vthread; /* per step: its Event's vthread (0: None) */
    int failed;
} picked_ctx;

static void picked_event(void *ctx, const tt__track *tr, const tt__step *end, const tt__step *b)
{
    picked_ctx *c = ctx;
    (void)tr;
    if (!b || c->failed)
        return;
    int64_t user = 0, sys = 0;
    int cpu = tt__pair_cpu(b, end, &user, &sys);
    uint64_t v = c->vthread[b->k];
    PyObject *item = Py_BuildValue("(LLINNNONN)", (long long)b->ns, (long long)end->ns, (unsigned)end->ev.id,
                                   cpu ? PyLong_FromLongLong(user) : Py_NewRef(Py_None),
                                   cpu ? PyLong_FromLongLong(sys) : Py_NewRef(Py_None),
                                   v ? PyLong_FromUnsignedLongLong(v) : Py_NewRef(Py_None),
                                   end->ev.thrown ? Py_True : Py_False, measured_of(end, TT__KIND_END_CPU_TOTAL),
                                   measured_of(end, TT__KIND_END_MOUNTED));
    if (item == NULL || PyList_Append(c->out, item) != 0)
        c->failed = 1;
    Py_XDECREF(item);
}

/* One Event as a step of a track; markers counts the mount/unmount events
 * so far. Returns 0, or -1 with an exception set. */
static int step_of(PyObject *o, Py_ssize_t k, uint64_t *markers, tt__step *st, uint64_t *vthread)
{
    if (!PyObject_TypeCheck(o, event_type)) {
        PyErr_Format(PyExc_TypeError, "pair_intervals() takes Event items, not %R", (PyObject *)Py_TYPE(o));
        return -1;
    }
    PyObject *kind = PyStructSequence_GetItem(o, 1);
    unsigned code = 0;
    for (unsigned c = 1; c < KINDS && !code; c++)
        if (kind == kind_names[c] || PyUnicode_Compare(kind, kind_names[c]) == 0)
            code = c;
    memset(st, 0, sizeof *st);
    st->ev.kind = code;
    st->ev.id = (uint32_t)PyLong_AsUnsignedLong(PyStructSequence_GetItem(o, 2));
    st->ns = PyLong_AsLongLong(PyStructSequence_GetItem(o, 0));
    PyObject *user = PyStructSequence_GetItem(o, 5), *sys = PyStructSequence_GetItem(o, 6);
    /* No stamp reads as the core's "unreadable" (negative); a measured
     * end's figure is its value. */
    PyObject *value = PyStructSequence_GetItem(o, 3);
    if (tt__kind_is_measured(code)) {
        st->ev.p0 = value == Py_None ? UINT64_MAX : PyLong_AsUnsignedLongLong(value);
    } else {
        st->ev.p0 = user == Py_None ? UINT64_MAX : PyLong_AsUnsignedLongLong(user);
        st->ev.p1 = sys == Py_None ? 0 : PyLong_AsUnsignedLongLong(sys);
    }
    st->ev.thrown = PyObject_IsTrue(PyStructSequence_GetItem(o, 10)) == 1;
    PyObject *v = PyStructSequence_GetItem(o, 9);
    *vthread = v == Py_None ? 0 : PyLong_AsUnsignedLongLong(v);
    *markers += tt__kind_is_marker(code);
    st->markers = *markers;
    st->k = (uint64_t)k;
    return PyErr_Occurred() ? -1 : 0;
}

/* _pair_events(events) -> [(start_ns, end_ns, id, cpu_user_ns, cpu_system_ns,
 * vthread, thrown, cpu_total_ns, mounted_ns)]: the trace model's pairing (tt__pair_track) over events
 * a caller picked, seen as one track on one thread, in pairing order. */
static PyObject *ttpy_pair_events(PyObject *m, PyObject *arg)
{
    (void)m;
    PyObject *list = PySequence_List(arg);
    if (list == NULL)
        return NULL;
    Py_ssize_t n = PyList_Size(list);
    tt__step *steps = malloc((size_t)(n ? n : 1) * sizeof *steps);
    uint64_t *vthread = malloc((size_t)(n ? n : 1) * sizeof *vthread);
    picked_ctx c = {PyList_New(0), vthread, 0};
    PyObject *result = NULL;
    if (steps == NULL || vthread == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    uint64_t markers = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (step_of(PyList_GetItem(list, i), i, &markers, &steps[i], &vthread[i]) != 0)
            goto done;
    const tt__walk_ops ops = {NULL, picked_event, NULL, NULL};
    if (c.out != NULL && tt__pair_track(steps, (size_t)n, &ops, &c) != 0)
        PyErr_NoMemory();
    else if (c.out != NULL && !c.failed)
        result = Py_NewRef(c.out);
done:
    Py_XDECREF(c.out);
    free(steps);
    free(vthread);
    Py_DECREF(list);
    return result;
}

static PyMethodDef trace_methods[] = {
    {"_pair_events", ttpy_pair_events, METH_O,
     "_pair_events(events, /)\n--\n\nThe trace model's pairing over a list of Event, as one track (internal)."},
    {"_trace_intervals", ttpy_trace_intervals, METH_O,
     "_trace_intervals(data, /)\n--\n\nThe trace model's begin/end pairs, per thread that recorded the begin (internal)."},
    {NULL, NULL, 0, NULL},
};

/* _KINDS: the kind names by TT__KIND_* value - 1, from the core. */
static int add_kinds(PyObject *mod)
{
    PyObject *kinds = PyTuple_New(KINDS - 1);
    if (kinds == NULL)
        return -1;
    for (unsigned k = 1; k < KINDS; k++)
        PyTuple_SetItem(kinds, k - 1, Py_NewRef(kind_names[k]));
    int rc = PyModule_AddObject(mod, "_KINDS", kinds);
    if (rc != 0)
        Py_DECREF(kinds);
    return rc;
}

/* ---- module setup ---- */

static PyStructSequence_Field event_fields[] = {
    {"t_ns", "ns since the trace started (CLOCK_MONOTONIC_RAW)"},
    {"kind", "'instant', 'text', 'value', 'begin', 'end', 'begin_cpu', 'end_cpu', 'literal', 'mount', 'unmount',\n"
             "'end_cpu_total' or 'end_mounted'"},
    {"id", "the event id (32 bits)"},
    {"value", "the 64-bit value of a 'value' event; the call's CPU ns at an 'end_cpu_total', its time\n"
              "mounted at an 'end_mounted' (None there if the thread's account was unreadable); else None"},
    {"text", "the text of a 'text' or 'literal' event, else None"},
    {"cpu_user_ns", "the thread's user CPU time at a 'begin_cpu' or 'end_cpu' event, else None"},
    {"cpu_system_ns", "the thread's system CPU time at a 'begin_cpu' or 'end_cpu' event, else None"},
    {"seq", "the record's sequence number in its thread's ring (the CLI's index column)"},
    {"name", "the name the trace gives the event's id, else None (markers have none)"},
    {"vthread", "the virtual thread the event belongs to (the one a mount marker started on this\n"
                "carrier thread; a marker's own), else None"},
    {"thrown", "True for the end of a probe whose call exited by an exception"},
    {NULL, NULL},
};

static PyStructSequence_Desc event_desc = {
    "threadtime.Event", "One event of a trace file.", event_fields, 11,
};

int ttpy_trace_init(PyObject *mod)
{
    if (event_type != NULL) /* a second module instance shares the types */
        return ttpy_add_type(mod, "Event", event_type) || ttpy_add_type(mod, "Events", events_type) ||
               PyModule_AddFunctions(mod, trace_methods) || add_kinds(mod);
    for (unsigned k = 1; k < KINDS; k++)
        if ((kind_names[k] = PyUnicode_InternFromString(tt__trace_kind_name(k))) == NULL)
            return -1;
    event_type = PyStructSequence_NewType(&event_desc);
    data_type = (PyTypeObject *)PyType_FromSpec(&data_spec);
    events_type = (PyTypeObject *)PyType_FromSpec(&events_spec);
    if (event_type == NULL || data_type == NULL || events_type == NULL)
        return -1;
    return ttpy_add_type(mod, "Event", event_type) || ttpy_add_type(mod, "Events", events_type) ||
           PyModule_AddFunctions(mod, trace_methods) || add_kinds(mod);
}
