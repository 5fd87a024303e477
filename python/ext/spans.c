/* threadtime._core's OpenTelemetry span hooks (threadtime.otel wraps them).
 *
 * The SDK calls a processor's on_start on the thread that starts a span,
 * and shows the processor the span again only once it is read-only. So a
 * SpanClock (the processor's on_start) reads the figures where the span
 * starts and puts a SpanEnd on the span as its end(); that reads them
 * again, sets the attributes through the span's own set_attribute (the
 * SDK's checks and limits apply), takes itself off the span and calls the
 * end() that was there before. Both are C calls: a span costs the
 * processor no Python frame, and the SDK's own attribute calls stay the
 * largest part of what it adds (docs/python-async.md has the figures).
 *
 * Where a span starts decides what it is charged:
 *   - inside a counted asyncio step (tasks.c): that task's own CPU and
 *     run-queue wait, its other steps between start and end included, its
 *     neighbours' steps not;
 *   - in an asyncio task that is not counted: nothing (NO_CLOCK);
 *   - elsewhere on a thread: the thread's CPU (the fast clock, or with
 *     split the consistent user/system split of tt_self_times) and its
 *     run-queue wait.
 * A span that ends in another task, on another thread or in another
 * process gets nothing (OTHER_THREAD).
 *
 * Deferred (a SpanClock made with pending > 0), the end does not set the
 * attributes: it files the figures under the span's context (the object
 * itself: the read-only span the SDK hands on carries the same one), and
 * the exporter's thread takes them with take(context) when the span is
 * exported. The table is C memory, so that filing allocates no object: a
 * ring of the newest 2 * pending filings (the figures of a span that is
 * never exported, dropped by a full queue, are overwritten 2 * pending
 * ends later), and an index from a context's address to its slot (open
 * addressing, linear probing, at most half full). An entry holds its
 * context, whose address is the key: no other context can take that
 * address while the entry waits.
 */
#include "core.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "internal.h" /* tt__fast_ns_run: the fast clock with its run of anchors */

enum { OTHER_THREAD = 0, NO_CLOCK = 1, REASONS = 2 };
enum { TOTAL = 0, USER = 1, SYSTEM = 2, WAIT = 3, NAMES = 4 };

/* One filing of the deferred table. */
struct entry {
    PyObject *context;  /* a reference; NULL: free */
    int64_t figures[4]; /* total, user, system, wait; -1: not read */
};

typedef struct {
    PyObject_HEAD
    PyObject *names[NAMES];     /* the attributes' names */
    PyObject *get_running_loop; /* asyncio._get_running_loop */
    PyObject *current_task;     /* asyncio.current_task */
    int split, run_wait;
    struct entry *ring;         /* deferred: the newest filings; NULL: not deferred */
    size_t ring_size;           /* 2 * pending */
    size_t head;                /* filings so far: the next one goes to head % ring_size */
    size_t live;                /* entries waiting */
    uint32_t *index;            /* slot + 1 of the entry whose context hashes here, 0: empty */
    size_t index_mask;          /* index size - 1 (a power of two, >= 2 * ring_size) */
    Py_ssize_t unmeasured[REASONS]; /* spans left without figures, by reason; atomic */
} ClockObject;

/* What a span is charged, read at its start and at its end. */
typedef struct {
    int64_t cpu, user, system; /* user and system: -1 when not split */
    int64_t wait;              /* < 0: unknown (-errno, or TTPY_WAIT_OFF) */
} figures;

typedef struct {
    PyObject_HEAD
    ClockObject *clock;
    PyObject *span;
    PyObject *owner;    /* the TaskCoro the span started in, or NULL: the thread */
    PyObject *previous; /* span.end when this one was put on: the span's own, or another hook */
    int own;            /* previous is the span's own end(), bound to it */
    pthread_t thread;
    unsigned fork_gen;
    int ran;            /* 1 once it has measured and taken itself off, 2 once it called end() */
    figures start;
} EndObject;

static PyTypeObject *clock_type, *end_type;
static PyObject *str_end, *str_self, *str_parent_context, *str_set_attribute, *str_context;
static PyTypeObject *method_type; /* types.MethodType */

static void count(ClockObject *c, int reason) { __atomic_fetch_add(&c->unmeasured[reason], 1, __ATOMIC_RELAXED); }

/* The calling thread's figures. At a start the wait comes first (a read of
 * schedstat, when one is needed, stays before the CPU read); at an end,
 * last. 0 or -errno (the CPU clock). */
static int thread_figures(ClockObject *c, figures *out, int first)
{
    uint64_t run;
    int64_t ns = tt__fast_ns_run(&run);
    if (ns < 0)
        return (int)ns;
    out->wait = TTPY_WAIT_OFF;
    if (c->run_wait && first)
        out->wait = ttpy_wait_at(run, &ns, 1);
    out->cpu = ns;
    out->user = out->system = -1;
    if (c->split) {
        tt_times t;
        int rc = tt_self_times(&t);
        if (rc != 0)
            return rc;
        out->cpu = t.total_ns;
        out->user = t.user_ns;
        out->system = t.system_ns;
        if (c->run_wait && !first)
            ns = tt__fast_ns_run(&run); /* the run after the split's read */
    }
    if (c->run_wait && !first)
        out->wait = ttpy_wait_at(run, &ns, 0);
    return 0;
}

/* A task's figures; 0, or -1 without an error left set. */
static int task_figures(ClockObject *c, PyObject *owner, figures *out)
{
    if (ttpy_task_figures(owner, &out->cpu, &out->wait) != 0) {
        PyErr_Clear(); /* a fork child, or a failed clock read */
        return -1;
    }
    if (!c->run_wait)
        out->wait = TTPY_WAIT_OFF;
    out->user = out->system = -1;
    return 0;
}

/* 1 inside an asyncio task that is not counted, 0 outside any, -1. */
static int in_uncounted_task(ClockObject *c)
{
    PyObject *loop = PyObject_CallObject(c->get_running_loop, NULL);
    if (loop == NULL || loop == Py_None) {
        Py_XDECREF(loop);
        return loop == NULL ? -1 : 0;
    }
    PyObject *task = PyObject_CallFunctionObjArgs(c->current_task, loop, NULL);
    Py_DECREF(loop);
    if (task == NULL)
        return -1;
    int in_task = task != Py_None;
    Py_DECREF(task);
    return in_task;
}

/* 1 if end is the span's own end() (a method bound to it: the class's,
 * with no hook on the span), 0 if it is a hook, -1. The span's __dict__ is
 * never asked for: on CPython 3.11+ that turns its inline attributes into a
 * dict, and every attribute access of the SDK on the span then costs more. */
static int own_end(PyObject *span, PyObject *end)
{
    if (Py_TYPE(end) != method_type)
        return 0;
    PyObject *self = PyObject_GetAttr(end, str_self);
    if (self == NULL)
        return -1;
    Py_DECREF(self);
    return self == span;
}

/* ---- the deferred table (callers hold the object's lock) ---- */

static size_t home(const ClockObject *c, const PyObject *context)
{
    /* Objects are 16-byte aligned: the low bits say nothing. */
    return (size_t)((((uintptr_t)context >> 4) * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & c->index_mask;
}

/* The index slot of context's entry, or -1. */
static Py_ssize_t index_find(const ClockObject *c, const PyObject *context)
{
    for (size_t i = home(c, context);; i = (i + 1) & c->index_mask) {
        uint32_t at = c->index[i];
        if (at == 0)
            return -1;
        if (c->ring[at - 1].context == context)
            return (Py_ssize_t)i;
    }
}

/* Empties index slot i, moving back the entries after it that probing
 * would no longer reach (no tombstones). */
static void index_remove(ClockObject *c, size_t i)
{
    for (size_t j = (i + 1) & c->index_mask; c->index[j] != 0; j = (j + 1) & c->index_mask) {
        size_t k = home(c, c->ring[c->index[j] - 1].context);
        /* j's entry may fill the hole at i unless its home lies in (i, j]. */
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            c->index[i] = c->index[j];
            i = j;
        }
    }
    c->index[i] = 0;
}

/* Files figures under context (a new reference taken); answers the
 * context of the filing it overwrote (a reference for the caller to drop
 * once unlocked), or NULL. */
static PyObject *table_file(ClockObject *c, PyObject *context, const int64_t figures[4])
{
    size_t slot = c->head++ % c->ring_size;
    struct entry *e = &c->ring[slot];
    PyObject *old = e->context;
    if (old != NULL) {
        index_remove(c, (size_t)index_find(c, old));
        c->live--;
    }
    e->context = Py_NewRef(context);
    memcpy(e->figures, figures, sizeof e->figures);
    size_t i = home(c, context);
    while (c->index[i] != 0)
        i = (i + 1) & c->index_mask;
    c->index[i] = (uint32_t)slot + 1;
    c->live++;
    return old;
}

/* Takes context's figures off the table into figures; answers the entry's
 * context (a reference for the caller to drop once unlocked), or NULL when
 * none waits. */
static PyObject *table_take(ClockObject *c, PyObject *context, int64_t figures[4])
{
    Py_ssize_t i = c->ring == NULL ? -1 : index_find(c, context);
    if (i < 0)
        return NULL;
    struct entry *e = &c->ring[c->index[i] - 1];
    memcpy(figures, e->figures, sizeof e->figures);
    PyObject *old = e->context;
    e->context = NULL;
    index_remove(c, (size_t)i);
    c->live--;
    return old;
}

/* ---- SpanClock: the processor's on_start(span, parent_context=None) ---- */

/* A method, not the object's own call: the SDK passes parent_context by
 * keyword, and a builtin method takes it from the vectorcall's names where
 * a tp_call would first build a dict of it (~250 instructions a span). */
static PyObject *clock_on_start(PyObject *o, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    ClockObject *c = (ClockObject *)o;
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_Size(kwnames);
    if (nargs < 1 || nargs + nkw > 2 ||
        (nkw == 1 && PyUnicode_Compare(PyTuple_GetItem(kwnames, 0), str_parent_context) != 0)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "on_start(span, parent_context=None) takes the span");
        return NULL;
    }
    PyObject *span = args[0];
    PyObject *owner = ttpy_step_owner();
    figures start;
    if (owner != NULL) {
        if (task_figures(c, owner, &start) != 0) {
            count(c, NO_CLOCK);
            Py_RETURN_NONE;
        }
    } else {
        int uncounted = in_uncounted_task(c);
        if (uncounted != 0) {
            if (uncounted < 0)
                return NULL;
            count(c, NO_CLOCK);
            Py_RETURN_NONE;
        }
        int rc = thread_figures(c, &start, 1);
        if (rc != 0) {
            count(c, NO_CLOCK);
            Py_RETURN_NONE;
        }
    }
    PyObject *previous = PyObject_GetAttr(span, str_end);
    if (previous == NULL)
        return NULL;
    int own = own_end(span, previous);
    if (own < 0) {
        Py_DECREF(previous);
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(end_type, Py_tp_alloc);
    EndObject *e = (EndObject *)alloc(end_type, 0);
    if (e == NULL) {
        Py_XDECREF(previous);
        return NULL;
    }
    e->clock = (ClockObject *)Py_NewRef(o);
    e->span = Py_NewRef(span);
    e->owner = Py_XNewRef(owner);
    e->previous = previous;
    e->own = own;
    e->thread = pthread_self();
    e->fork_gen = ttpy_fork_generation();
    e->ran = 0;
    e->start = start;
    int rc = PyObject_SetAttr(span, str_end, (PyObject *)e);
    Py_DECREF(e);
    if (rc != 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *clock_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"total", "user", "system", "wait", "get_running_loop", "current_task", "split", "run_wait",
                         "pending", NULL};
    PyObject *names[NAMES], *get_running_loop, *current_task;
    int split, run_wait;
    Py_ssize_t pending = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UUUUOOpp|$n:SpanClock", kw, &names[TOTAL], &names[USER],
                                     &names[SYSTEM], &names[WAIT], &get_running_loop, &current_task, &split,
                                     &run_wait, &pending))
        return NULL;
    if (pending < 0) {
        PyErr_Format(PyExc_ValueError, "SpanClock: pending must be 0 (not deferred) or more, not %zd", pending);
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    ClockObject *c = (ClockObject *)alloc(type, 0);
    if (c == NULL)
        return NULL;
    if (pending > 0) {
        /* The index holds at least twice the ring: probes stay short. */
        size_t ring = 2 * (size_t)pending, index = 4;
        while (index < 2 * ring)
            index *= 2;
        c->ring = ring <= UINT32_MAX / 4 ? PyMem_Calloc(ring, sizeof *c->ring) : NULL;
        c->index = c->ring != NULL ? PyMem_Calloc(index, sizeof *c->index) : NULL;
        if (c->index == NULL) {
            Py_DECREF(c);
            return ring <= UINT32_MAX / 4 ? PyErr_NoMemory()
                                          : PyErr_Format(PyExc_ValueError, "SpanClock: pending %zd is too large",
                                                         pending);
        }
        c->ring_size = ring;
        c->index_mask = index - 1;
    }
    for (int i = 0; i < NAMES; i++)
        c->names[i] = Py_NewRef(names[i]);
    c->get_running_loop = Py_NewRef(get_running_loop);
    c->current_task = Py_NewRef(current_task);
    c->split = split;
    c->run_wait = run_wait;
    for (int i = 0; i < REASONS; i++)
        c->unmeasured[i] = 0;
    return (PyObject *)c;
}

static PyObject *clock_unmeasured(PyObject *o, PyObject *unused)
{
    ClockObject *c = (ClockObject *)o;
    return Py_BuildValue("(nn)", __atomic_load_n(&c->unmeasured[OTHER_THREAD], __ATOMIC_RELAXED),
                         __atomic_load_n(&c->unmeasured[NO_CLOCK], __ATOMIC_RELAXED));
}

/* take(context): the figures filed for the span of this context, taken
 * off the table, as (total, user, system, wait) with -1 for a figure not
 * read; None when none wait for it. */
static PyObject *clock_take(PyObject *o, PyObject *context)
{
    ClockObject *c = (ClockObject *)o;
    if (c->ring_size == 0) {
        PyErr_SetString(PyExc_ValueError, "take(): this SpanClock is not deferred");
        return NULL;
    }
    int64_t f[4];
    PyObject *taken;
    TTPY_LOCKED(c, taken = table_take(c, context, f));
    if (taken == NULL)
        Py_RETURN_NONE;
    Py_DECREF(taken);
    return Py_BuildValue("(LLLL)", (long long)f[0], (long long)f[1], (long long)f[2], (long long)f[3]);
}

/* pending(): the figures waiting for their span's export. */
static PyObject *clock_pending(PyObject *o, PyObject *unused)
{
    ClockObject *c = (ClockObject *)o;
    size_t n;
    TTPY_LOCKED(c, n = c->live);
    return PyLong_FromSize_t(n);
}

static int clock_traverse(PyObject *o, visitproc visit, void *arg)
{
    ClockObject *c = (ClockObject *)o;
    for (int i = 0; i < NAMES; i++)
        Py_VISIT(c->names[i]);
    Py_VISIT(c->get_running_loop);
    Py_VISIT(c->current_task);
    for (size_t i = 0; c->ring != NULL && i < c->ring_size; i++)
        Py_VISIT(c->ring[i].context);
    Py_VISIT(Py_TYPE(o));
    return 0;
}

static int clock_clear(PyObject *o)
{
    ClockObject *c = (ClockObject *)o;
    for (int i = 0; i < NAMES; i++)
        Py_CLEAR(c->names[i]);
    Py_CLEAR(c->get_running_loop);
    Py_CLEAR(c->current_task);
    /* The table goes whole: a cleared clock files and finds nothing. */
    struct entry *ring = c->ring;
    size_t size = c->ring_size;
    c->ring = NULL;
    c->live = 0;
    PyMem_Free(c->index);
    c->index = NULL;
    for (size_t i = 0; ring != NULL && i < size; i++)
        Py_XDECREF(ring[i].context);
    PyMem_Free(ring);
    return 0;
}

/* on_end(span) and _on_ending(span): nothing to do there (the figures are
 * set in the span's end(), before it is read-only); a builtin method costs
 * the SDK's call less than SpanProcessor's Python ones. */
static PyObject *clock_ignore(PyObject *o, PyObject *span) { Py_RETURN_NONE; }

static PyMethodDef clock_methods[] = {
    {"on_start", (PyCFunction)(void (*)(void))clock_on_start, METH_FASTCALL | METH_KEYWORDS,
     "on_start($self, span, /, parent_context=None)\n--\n\nThe processor's on_start: reads the figures where the "
     "span starts and puts a SpanEnd on it as its end()."},
    {"ignore", clock_ignore, METH_O,
     "ignore($self, span, /)\n--\n\nThe processor's on_end and _on_ending: does nothing."},
    {"unmeasured", clock_unmeasured, METH_NOARGS,
     "unmeasured($self, /)\n--\n\n(other_thread, no_clock): the spans left without figures, by reason."},
    {"take", clock_take, METH_O,
     "take($self, context, /)\n--\n\nDeferred: the figures filed for the span of this context, taken off the "
     "table: (total, user, system, wait), -1 for one not read; None when none wait."},
    {"pending", clock_pending, METH_NOARGS,
     "pending($self, /)\n--\n\nDeferred: how many spans' figures wait for their export."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot clock_slots[] = {
    {Py_tp_doc, "SpanClock(total, user, system, wait, get_running_loop, current_task, split, run_wait, *, "
                "pending=0)\n--\n\n"
                "A span processor's hooks: on_start reads the figures where the span starts and puts a SpanEnd on "
                "it as its end(). threadtime.otel.ThreadTimeSpanProcessor makes one."},
    {Py_tp_new, clock_new},
    {Py_tp_dealloc, ttpy_gc_dealloc},
    {Py_tp_traverse, clock_traverse},
    {Py_tp_clear, clock_clear},
    {Py_tp_methods, clock_methods},
    {0, NULL},
};

static PyType_Spec clock_spec = {
    "threadtime.SpanClock", sizeof(ClockObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, clock_slots,
};

/* ---- SpanEnd: the span's end(end_time=None) while it is on the span ---- */

/* The figures at the end, against the start's; 0, or the reason none are
 * given. */
static int measure(EndObject *e, figures *out)
{
    ClockObject *c = e->clock;
    PyObject *owner = ttpy_step_owner();
    if (owner != e->owner)
        return OTHER_THREAD + 1;
    if (owner != NULL) {
        if (task_figures(c, owner, out) != 0)
            return NO_CLOCK + 1;
    } else {
        if (!pthread_equal(e->thread, pthread_self()) || e->fork_gen != ttpy_fork_generation())
            return OTHER_THREAD + 1;
        if (thread_figures(c, out, 0) != 0)
            return NO_CLOCK + 1;
    }
    figures *s = &e->start;
    out->cpu -= s->cpu;
    if (out->user >= 0) {
        out->user -= s->user;
        out->system -= s->system;
    }
    out->wait = out->wait >= 0 && s->wait >= 0 ? out->wait - s->wait : -1;
    return 0;
}

/* Files a span's figures for the exporter; 0 or -1. */
static int defer(ClockObject *c, PyObject *span, const figures *f)
{
    PyObject *context = PyObject_GetAttr(span, str_context);
    if (context == NULL)
        return -1;
    int64_t values[4] = {f->cpu < 0 ? 0 : f->cpu, f->user, f->system, f->wait >= 0 ? f->wait : -1};
    PyObject *old = NULL;
    TTPY_LOCKED(c, {
        if (c->ring != NULL)
            old = table_file(c, context, values);
    });
    Py_XDECREF(old);
    Py_DECREF(context);
    return 0;
}

static int set_attribute(PyObject *span, PyObject *name, int64_t value)
{
    PyObject *v = PyLong_FromLongLong(value);
    if (v == NULL)
        return -1;
    PyObject *r = PyObject_CallMethodObjArgs(span, str_set_attribute, name, v, NULL);
    Py_DECREF(v);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* Measures, sets the attributes and takes the hook off the span; 0, or -1
 * with an error set. A span ended already (through its class, past the
 * hook) gets the SDK's warnings, as a second end() does. */
static int finish(EndObject *e)
{
    ClockObject *c = e->clock;
    PyObject *span = e->span;
    figures f;
    int reason = measure(e, &f) - 1, rc = 0;
    if (reason >= 0)
        count(c, reason);
    else if (c->ring_size > 0)
        rc = defer(c, span, &f);
    else
        rc = set_attribute(span, c->names[TOTAL], f.cpu < 0 ? 0 : f.cpu) ||
             (f.user >= 0 && (set_attribute(span, c->names[USER], f.user) ||
                              set_attribute(span, c->names[SYSTEM], f.system))) ||
             (f.wait >= 0 && set_attribute(span, c->names[WAIT], f.wait));
    /* Off the span, whatever happened: the class's end() again (no cycle
     * left behind), or the hook that was there before. */
    PyObject *error = NULL, *tb = NULL, *type = NULL;
    if (rc != 0)
        PyErr_Fetch(&type, &error, &tb);
    int off = e->own ? PyObject_DelAttr(span, str_end) : PyObject_SetAttr(span, str_end, e->previous);
    if (rc != 0)
        PyErr_Restore(type, error, tb);
    else if (off != 0)
        rc = -1;
    return rc;
}

static PyObject *end_call(PyObject *o, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"end_time", NULL};
    EndObject *e = (EndObject *)o;
    PyObject *end_time = Py_None;
    /* end() with no argument, as `with` calls it, skips the parser. */
    if ((PyTuple_Size(args) != 0 || kwargs != NULL) &&
        !PyArg_ParseTupleAndKeywords(args, kwargs, "|O:end", kw, &end_time))
        return NULL;
    if (!e->ran) {
        e->ran = 1;
        /* The figures are the processor's: a failure is reported, never
         * raised into the code that ends the span, which still ends. */
        if (finish(e) != 0)
            PyErr_WriteUnraisable(o);
    }
    /* Once it ran, a call through a reference kept to it is a call of the
     * span's end() as it is now. */
    PyObject *end = e->ran == 1 ? Py_NewRef(e->previous) : PyObject_GetAttr(e->span, str_end);
    if (end == NULL)
        return NULL;
    e->ran = 2;
    PyObject *r = end_time == Py_None ? PyObject_CallObject(end, NULL)
                                      : PyObject_CallFunctionObjArgs(end, end_time, NULL);
    Py_DECREF(end);
    return r;
}

static int end_traverse(PyObject *o, visitproc visit, void *arg)
{
    EndObject *e = (EndObject *)o;
    Py_VISIT(e->clock);
    Py_VISIT(e->span);
    Py_VISIT(e->owner);
    Py_VISIT(e->previous);
    Py_VISIT(Py_TYPE(o));
    return 0;
}

static int end_clear(PyObject *o)
{
    EndObject *e = (EndObject *)o;
    Py_CLEAR(e->clock);
    Py_CLEAR(e->span);
    Py_CLEAR(e->owner);
    Py_CLEAR(e->previous);
    return 0;
}

static PyType_Slot end_slots[] = {
    {Py_tp_doc, "SpanEnd(end_time=None)\n--\n\nA span's end() while threadtime measures it: sets the span's "
                "figures, takes itself off the span and calls the end() that was there before."},
    {Py_tp_call, end_call},
    {Py_tp_dealloc, ttpy_gc_dealloc},
    {Py_tp_traverse, end_traverse},
    {Py_tp_clear, end_clear},
    {0, NULL},
};

static PyType_Spec end_spec = {
    "threadtime.SpanEnd", sizeof(EndObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, end_slots,
};

int ttpy_spans_init(PyObject *mod)
{
    if (clock_type == NULL) {
        clock_type = (PyTypeObject *)PyType_FromSpec(&clock_spec);
        end_type = (PyTypeObject *)PyType_FromSpec(&end_spec);
        PyObject *types = PyImport_ImportModule("types");
        if (types == NULL)
            return -1;
        method_type = (PyTypeObject *)PyObject_GetAttrString(types, "MethodType");
        Py_DECREF(types);
        str_end = PyUnicode_InternFromString("end");
        str_self = PyUnicode_InternFromString("__self__");
        str_parent_context = PyUnicode_InternFromString("parent_context");
        str_set_attribute = PyUnicode_InternFromString("set_attribute");
        str_context = PyUnicode_InternFromString("context");
        if (method_type == NULL || clock_type == NULL || end_type == NULL || str_end == NULL || str_self == NULL ||
            str_parent_context == NULL || str_set_attribute == NULL || str_context == NULL)
            return -1;
    }
    return ttpy_add_type(mod, "SpanClock", clock_type) || ttpy_add_type(mod, "SpanEnd", end_type);
}
