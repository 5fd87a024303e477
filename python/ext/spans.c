/* threadtime._core's OpenTelemetry span hooks (threadtime.otel's
 * ThreadTimeSpanProcessor is a subclass of SpanClock).
 *
 * A SpanClock is a span processor's hooks: its on_start reads the figures
 * on the thread that starts a span, the span's end reads them again, and
 * the differences go on the span as int attributes. It may wrap another
 * processor (the exporter's), whose hooks it calls from its own: the SDK
 * then calls one processor's hooks per span instead of two. Two paths;
 * threadtime.otel picks one when it makes the processor, by trying the
 * SDK's shape once:
 *
 *   - on_ending: the SDK's Span.end() (1.40+) sets the end time, makes the
 *     attributes read-only and then calls every processor's _on_ending on
 *     the live span, before any on_end. on_start leaves a SpanStart on the
 *     span (an instance attribute: it lives and dies with the span, however
 *     long the span stays open, and holds no reference at all);
 *     _on_ending finds it, reads the clocks and puts the figures straight
 *     into the span's attribute dict (BoundedAttributes._dict), under
 *     BoundedAttributes' own rules for its limit. The exporter's on_end
 *     sees them whatever order the processors were added in. The SDK lets
 *     one end() per span past its lock, and a SpanStart is used once
 *     besides (a compare-and-swap), so an ended span's figures never
 *     change. No set_attribute and no hook: the SDK's own set_attribute
 *     costs a fresh span more than all this path adds (docs/benchmarks.md).
 *   - end_hook, for any other shape: on_start puts a SpanEnd on the span
 *     as its end(); that reads the figures, sets them through the span's
 *     own set_attribute (the SDK's checks and limits apply), takes itself
 *     off the span and calls the end() that was there before.
 * All are C calls: a span costs the processor no Python frame.
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
 */
#include "core.h"

#include <pthread.h>

#include "internal.h" /* tt__fast_ns_run: the fast clock with its run of anchors */

enum { OTHER_THREAD = 0, NO_CLOCK = 1, REASONS = 2 };
enum { TOTAL = 0, USER = 1, SYSTEM = 2, WAIT = 3, NAMES = 4 };

typedef struct {
    PyObject_HEAD
    PyObject *names[NAMES];     /* the attributes' names */
    PyObject *get_running_loop; /* asyncio._get_running_loop */
    PyObject *current_task;     /* asyncio.current_task */
    PyObject *attributes_type;  /* on_ending: the SDK's BoundedAttributes; NULL: end_hook */
    /* The wrapped processor's on_start and _on_ending (bound methods),
     * each NULL where it has none that does anything. */
    PyObject *then_start, *then_ending;
    int split, run_wait;
    uint64_t id; /* this clock's number, never reused in the process; 0 until configured (atomic) */
    Py_ssize_t unmeasured[REASONS]; /* spans left without figures, by reason; atomic */
} ClockObject;

static uint64_t clocks_made; /* atomic */

/* 0, or -1 with an error set where __init__ never configured c. */
static int configured(ClockObject *c)
{
    if (__atomic_load_n(&c->id, __ATOMIC_ACQUIRE) != 0)
        return 0;
    PyErr_SetString(PyExc_TypeError, "SpanClock: not configured (its __init__ was not called)");
    return -1;
}

/* What a span is charged, read at its start and at its end. */
typedef struct {
    int64_t cpu, user, system; /* user and system: -1 when not split */
    int64_t wait;              /* < 0: unknown (-errno, or TTPY_WAIT_OFF) */
} figures;

/* Where a span started, and its figures there. */
typedef struct {
    uint64_t task; /* the counted task it started in (ttpy_task_id), or 0: a thread */
    pthread_t thread;
    unsigned fork_gen;
    figures at;
} span_start;

/* on_ending: what on_start leaves on a span. Not tracked by the cycle
 * collector: it holds no reference at all (its clock is named by number,
 * not held: the clock, a processor, may reach live spans through the
 * processor it wraps). */
typedef struct {
    PyObject_HEAD
    uint64_t clock; /* the id of the clock that made it */
    int used;       /* 1 once an _on_ending took it; atomic */
    span_start start;
} StartObject;

/* end_hook: the span's end() while it is on the span. */
typedef struct {
    PyObject_HEAD
    ClockObject *clock;
    PyObject *span;
    PyObject *previous; /* span.end when this one was put on: the span's own, or another hook */
    int own;            /* previous is the span's own end(), bound to it */
    int ran;            /* 1 once a caller won it, 2 once that caller's end() returned; atomic */
    span_start start;
} EndObject;

static PyTypeObject *clock_type, *start_type, *end_type;
static PyObject *str_end, *str_self, *str_parent_context, *str_set_attribute, *str_start, *str_attributes, *str_dict,
    *str_maxlen, *str_dropped;
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
    PyObject *loop = PyObject_CallNoArgs(c->get_running_loop);
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


/* The figures where a span starts: 0, a reason + 1 when it gets none, or -1
 * with an error set. */
static int read_start(ClockObject *c, span_start *s)
{
    PyObject *owner = ttpy_step_owner();
    if (owner != NULL) {
        if (task_figures(c, owner, &s->at) != 0)
            return NO_CLOCK + 1;
        s->task = ttpy_task_id(owner);
    } else {
        int uncounted = in_uncounted_task(c);
        if (uncounted != 0)
            return uncounted < 0 ? -1 : NO_CLOCK + 1;
        if (thread_figures(c, &s->at, 1) != 0)
            return NO_CLOCK + 1;
        s->task = 0;
    }
    s->thread = pthread_self();
    s->fork_gen = ttpy_fork_generation();
    return 0;
}

/* The figures at a span's end less its start's: 0, or a reason + 1 when
 * it gets none. */
static int measure(ClockObject *c, const span_start *s, figures *out)
{
    PyObject *owner = ttpy_step_owner();
    if ((owner != NULL ? ttpy_task_id(owner) : 0) != s->task)
        return OTHER_THREAD + 1;
    if (owner != NULL) {
        if (task_figures(c, owner, out) != 0)
            return NO_CLOCK + 1;
    } else {
        if (!pthread_equal(s->thread, pthread_self()) || s->fork_gen != ttpy_fork_generation())
            return OTHER_THREAD + 1;
        if (thread_figures(c, out, 0) != 0)
            return NO_CLOCK + 1;
    }
    const figures *a = &s->at;
    out->cpu = out->cpu < a->cpu ? 0 : out->cpu - a->cpu; /* below 0 by the fast clock's bound at most */
    if (out->user >= 0) {
        out->user -= a->user;
        out->system -= a->system;
    }
    out->wait = out->wait >= 0 && a->wait >= 0 ? out->wait - a->wait : -1;
    return 0;
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

/* end_hook: puts a SpanEnd holding start on the span as its end(); 0 or -1. */
static int put_hook(ClockObject *c, PyObject *span, const span_start *start)
{
    PyObject *previous = PyObject_GetAttr(span, str_end);
    if (previous == NULL)
        return -1;
    int own = own_end(span, previous);
    if (own < 0) {
        Py_DECREF(previous);
        return -1;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(end_type, Py_tp_alloc);
    EndObject *e = (EndObject *)alloc(end_type, 0);
    if (e == NULL) {
        Py_DECREF(previous);
        return -1;
    }
    e->clock = (ClockObject *)Py_NewRef(c);
    e->span = Py_NewRef(span);
    e->previous = previous;
    e->own = own;
    e->ran = 0;
    e->start = *start;
    int rc = PyObject_SetAttr(span, str_end, (PyObject *)e);
    Py_DECREF(e);
    return rc;
}

/* ---- SpanClock: the processor's hooks ---- */

/* Calls a wrapped processor's hook as the SDK called this one's: the
 * span, and on_start's parent context by keyword, by position or not at
 * all. 0 or -1. */
static int call_then(PyObject *hook, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *r;
    if (kwnames == NULL || PyTuple_Size(kwnames) == 0) {
        r = PyObject_CallFunctionObjArgs(hook, args[0], nargs == 2 ? args[1] : NULL, NULL);
    } else {
        PyObject *pos = PyTuple_Pack(1, args[0]), *kw = PyDict_New();
        r = pos != NULL && kw != NULL && PyDict_SetItem(kw, str_parent_context, args[1]) == 0
                ? PyObject_Call(hook, pos, kw)
                : NULL;
        Py_XDECREF(pos);
        Py_XDECREF(kw);
    }
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* on_start(span, parent_context=None). A method of the type, not the
 * object's own call: the SDK passes parent_context by keyword, and a
 * builtin method takes it from the vectorcall's names where a tp_call would
 * first build a dict of it (~250 instructions a span); and the SDK's
 * `sp.on_start` finds it on the class, where its interpreter caches the
 * lookup (an instance attribute shadowing the class is looked up afresh at
 * every call). A wrapped processor's on_start runs first, so that its work
 * is not charged to the span; an error from it is raised as the SDK would. */
static PyObject *clock_on_start(PyObject *o, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    ClockObject *c = (ClockObject *)o;
    if (configured(c) != 0)
        return NULL;
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_Size(kwnames);
    if (nargs < 1 || nargs + nkw > 2 ||
        (nkw == 1 && PyUnicode_Compare(PyTuple_GetItem(kwnames, 0), str_parent_context) != 0)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "on_start(span, parent_context=None) takes the span");
        return NULL;
    }
    PyObject *span = args[0];
    if (c->then_start != NULL && call_then(c->then_start, args, nargs, kwnames) != 0)
        return NULL;
    span_start start;
    int got = read_start(c, &start);
    if (got < 0)
        return NULL;
    if (got > 0)
        count(c, got - 1);
    if (c->attributes_type == NULL) {
        if (got == 0 && put_hook(c, span, &start) != 0)
            return NULL;
        Py_RETURN_NONE;
    }
    /* on_ending: a span that gets no figure is marked with None, so that
     * its _on_ending finds the attribute (a missing one costs an
     * AttributeError). */
    PyObject *mark = Py_None;
    if (got == 0) {
        /* Not the type's tp_alloc (it zeroes and checks for the cycle
         * collector, which this type is not tracked by): every field is
         * set here. */
        StartObject *s = PyObject_Malloc(sizeof(StartObject));
        if (s == NULL)
            return PyErr_NoMemory();
        PyObject_Init((PyObject *)s, start_type);
        s->clock = c->id;
        s->used = 0;
        s->start = start;
        mark = (PyObject *)s;
    } else {
        Py_INCREF(mark);
    }
    int rc = PyObject_SetAttr(span, str_start, mark);
    Py_DECREF(mark);
    if (rc != 0)
        return NULL;
    Py_RETURN_NONE;
}

/* Puts one figure into an attribute dict as BoundedAttributes' own
 * __setitem__ puts an int (which it keeps as it is): a key already there
 * moves to the end; at maxlen (-1: no limit) the oldest item goes and
 * counts in *dropped; maxlen 0 keeps nothing and counts it. The SDK's
 * warning about a full dict is not logged. 0 or -1. */
static int put(PyObject *dict, PyObject *name, int64_t value, Py_ssize_t maxlen, Py_ssize_t *dropped)
{
    if (maxlen == 0) {
        ++*dropped;
        return 0;
    }
    Py_ssize_t size = PyDict_Size(dict);
    if (size == 0) { /* the span had none: nothing to move or drop */
    } else if (PyDict_GetItemWithError(dict, name) != NULL) {
        if (PyDict_DelItem(dict, name) != 0)
            return -1;
        size--;
    } else if (PyErr_Occurred()) {
        return -1;
    }
    PyObject *oldest, *unused;
    Py_ssize_t pos = 0;
    if (maxlen > 0 && size >= maxlen && PyDict_Next(dict, &pos, &oldest, &unused)) {
        Py_INCREF(oldest);
        int rc = PyDict_DelItem(dict, oldest);
        Py_DECREF(oldest);
        if (rc != 0)
            return -1;
        ++*dropped;
    }
    PyObject *v = PyLong_FromLongLong(value);
    if (v == NULL)
        return -1;
    int rc = PyDict_SetItem(dict, name, v);
    Py_DECREF(v);
    return rc;
}

/* Adds n to attributes.dropped; 0 or -1. */
static int add_dropped(PyObject *attributes, Py_ssize_t n)
{
    PyObject *was = PyObject_GetAttr(attributes, str_dropped);
    if (was == NULL)
        return -1;
    PyObject *more = PyLong_FromSsize_t(n);
    PyObject *now = more != NULL ? PyNumber_Add(was, more) : NULL;
    Py_DECREF(was);
    Py_XDECREF(more);
    int rc = now != NULL ? PyObject_SetAttr(attributes, str_dropped, now) : -1;
    Py_XDECREF(now);
    return rc;
}

/* on_ending: the figures into the span's attributes; 0 or -1. The SDK
 * itself changes them no more (it refuses every change once the span has
 * its end time); on a free-threaded build the dict's own lock keeps a
 * reader elsewhere from seeing it half-changed. */
static int put_figures(ClockObject *c, PyObject *span, const figures *f)
{
    PyObject *attributes = PyObject_GetAttr(span, str_attributes), *dict = NULL, *limit = NULL;
    int rc = -1;
    if (attributes == NULL)
        return -1;
    if (Py_TYPE(attributes) != (PyTypeObject *)c->attributes_type ||
        (dict = PyObject_GetAttr(attributes, str_dict)) == NULL || !PyDict_CheckExact(dict)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "threadtime.otel: this span's _attributes is not the SDK's "
                            "BoundedAttributes over a dict, as when the processor was made: no figure set");
        goto out;
    }
    if ((limit = PyObject_GetAttr(attributes, str_maxlen)) == NULL)
        goto out;
    Py_ssize_t maxlen = limit == Py_None ? -1 : PyLong_AsSsize_t(limit);
    if (maxlen < 0 && limit != Py_None) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "threadtime.otel: this span's attribute limit is negative");
        goto out;
    }
    int64_t values[NAMES] = {f->cpu, f->user, f->system, f->wait};
    int known[NAMES] = {1, f->user >= 0, f->user >= 0, f->wait >= 0};
    Py_ssize_t dropped = 0;
    rc = 0;
    TTPY_LOCKED(dict, {
        for (int i = 0; i < NAMES && rc == 0; i++)
            if (known[i])
                rc = put(dict, c->names[i], values[i], maxlen, &dropped);
    });
    if (dropped > 0) { /* what went, counted even when a later put failed */
        PyObject *type, *error, *tb;
        PyErr_Fetch(&type, &error, &tb);
        if (add_dropped(attributes, dropped) != 0 && rc == 0)
            rc = -1;
        else if (rc != 0)
            PyErr_Restore(type, error, tb);
    }
out:
    Py_DECREF(attributes);
    Py_XDECREF(dict);
    Py_XDECREF(limit);
    return rc;
}

/* The on_ending path's work: the figures into the span's attributes. It
 * never raises into the span's end(): a failure is reported as unraisable,
 * and the span ends. */
static void set_figures(ClockObject *c, PyObject *span)
{
    PyObject *o = (PyObject *)c;
    PyObject *found = PyObject_GetAttr(span, str_start);
    if (found == NULL) { /* a span that started before the processor was added */
        if (PyErr_ExceptionMatches(PyExc_AttributeError))
            PyErr_Clear();
        else
            PyErr_WriteUnraisable(o);
        return;
    }
    /* None: on_start gave it no figure. Another clock's: two of threadtime's
     * processors on one provider, where the later one's start replaced
     * this one's, and the span gets that one's figures. */
    StartObject *s = (StartObject *)found;
    int unused = 0;
    if (Py_TYPE(found) == start_type && s->clock == c->id &&
        __atomic_compare_exchange_n(&s->used, &unused, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
        figures f;
        int reason = measure(c, &s->start, &f) - 1;
        if (reason >= 0)
            count(c, reason);
        else if (put_figures(c, span, &f) != 0)
            PyErr_WriteUnraisable(o);
    }
    Py_DECREF(found);
}

/* _on_ending(span): on the on_ending path the figures go into the span
 * (on the end_hook path its end() has set them already); then the wrapped
 * processor's _on_ending, which sees them. */
static PyObject *clock_on_ending(PyObject *o, PyObject *span)
{
    ClockObject *c = (ClockObject *)o;
    if (configured(c) != 0)
        return NULL;
    if (c->attributes_type != NULL)
        set_figures(c, span);
    if (c->then_ending != NULL && call_then(c->then_ending, &span, 1, NULL) != 0)
        return NULL;
    Py_RETURN_NONE;
}

/* on_end(span): nothing to do; a builtin method costs the SDK's call less
 * than SpanProcessor's Python one. (A wrapping processor's on_end is the
 * wrapped one's own, put on the instance: the SDK's interpreter calls it
 * for less than a call from here would cost.) */
static PyObject *clock_on_end(PyObject *o, PyObject *span) { Py_RETURN_NONE; }

/* SpanClock.__init__: configures a clock once (its tp_new, the generic
 * one, leaves it unconfigured: a subclass's __init__ passes its own
 * arguments on to this). 0 or -1. */
static int clock_init(PyObject *o, PyObject *args, PyObject *kwargs)
{
    ClockObject *c = (ClockObject *)o;
    static char *kw[] = {"total", "user", "system", "wait", "get_running_loop", "current_task", "split", "run_wait",
                         "attributes_type", "then_on_start", "then_on_ending", NULL};
    PyObject *names[NAMES], *get_running_loop, *current_task, *attributes_type = Py_None;
    PyObject *then[2] = {Py_None, Py_None};
    int split, run_wait;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UUUUOOpp|$OOO:SpanClock", kw, &names[TOTAL], &names[USER],
                                     &names[SYSTEM], &names[WAIT], &get_running_loop, &current_task, &split,
                                     &run_wait, &attributes_type, &then[0], &then[1]))
        return -1;
    if (attributes_type != Py_None && !PyType_Check(attributes_type)) {
        PyErr_SetString(PyExc_TypeError, "SpanClock: attributes_type must be the SDK's BoundedAttributes class or None");
        return -1;
    }
    for (int i = 0; i < 2; i++)
        if (then[i] != Py_None && !PyCallable_Check(then[i])) {
            PyErr_Format(PyExc_TypeError, "SpanClock: %s must be callable or None", kw[9 + i]);
            return -1;
        }
    if (c->id != 0) { /* hooks may be running on other threads: nothing changes under them */
        PyErr_SetString(PyExc_RuntimeError, "SpanClock: already configured (__init__ runs once)");
        return -1;
    }
    for (int i = 0; i < NAMES; i++)
        c->names[i] = Py_NewRef(names[i]);
    c->get_running_loop = Py_NewRef(get_running_loop);
    c->current_task = Py_NewRef(current_task);
    c->attributes_type = attributes_type == Py_None ? NULL : Py_NewRef(attributes_type);
    c->then_start = then[0] == Py_None ? NULL : Py_NewRef(then[0]);
    c->then_ending = then[1] == Py_None ? NULL : Py_NewRef(then[1]);
    c->split = split;
    c->run_wait = run_wait;
    for (int i = 0; i < REASONS; i++)
        c->unmeasured[i] = 0;
    /* Last, and the hooks check it first: configured. */
    __atomic_store_n(&c->id, __atomic_add_fetch(&clocks_made, 1, __ATOMIC_RELAXED), __ATOMIC_RELEASE);
    return 0;
}

static PyObject *clock_unmeasured(PyObject *o, PyObject *unused)
{
    ClockObject *c = (ClockObject *)o;
    return Py_BuildValue("(nn)", __atomic_load_n(&c->unmeasured[OTHER_THREAD], __ATOMIC_RELAXED),
                         __atomic_load_n(&c->unmeasured[NO_CLOCK], __ATOMIC_RELAXED));
}

static int clock_traverse(PyObject *o, visitproc visit, void *arg)
{
    ClockObject *c = (ClockObject *)o;
    for (int i = 0; i < NAMES; i++)
        Py_VISIT(c->names[i]);
    Py_VISIT(c->get_running_loop);
    Py_VISIT(c->current_task);
    Py_VISIT(c->attributes_type);
    Py_VISIT(c->then_start);
    Py_VISIT(c->then_ending);
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
    Py_CLEAR(c->attributes_type);
    Py_CLEAR(c->then_start);
    Py_CLEAR(c->then_ending);
    return 0;
}

static PyMethodDef clock_methods[] = {
    {"on_start", (PyCFunction)(void (*)(void))clock_on_start, METH_FASTCALL | METH_KEYWORDS,
     "on_start($self, span, /, parent_context=None)\n--\n\nThe processor's on_start: the wrapped processor's, "
     "then reads the figures where the span starts and leaves them on the span (on_ending), or puts a SpanEnd on "
     "it as its end() (end_hook)."},
    {"_on_ending", clock_on_ending, METH_O,
     "_on_ending($self, span, /)\n--\n\nThe processor's _on_ending: on the on_ending path reads the figures "
     "again and puts the differences into the span's attributes; then the wrapped processor's."},
    {"on_end", clock_on_end, METH_O,
     "on_end($self, span, /)\n--\n\nThe processor's on_end: does nothing."},
    {"_unmeasured_counts", clock_unmeasured, METH_NOARGS,
     "_unmeasured_counts($self, /)\n--\n\n(other_thread, no_clock): the spans left without figures, by reason."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot clock_slots[] = {
    {Py_tp_doc, "SpanClock(total, user, system, wait, get_running_loop, current_task, split, run_wait, *, "
                "attributes_type=None, then_on_start=None, then_on_ending=None)\n--\n\n"
                "A span processor's hooks. With attributes_type (the SDK's BoundedAttributes) the on_ending path: "
                "on_start leaves the start's figures on the span and _on_ending puts the span's figures into its "
                "attributes; without, the end_hook path: on_start puts a SpanEnd on the span as its end(). The "
                "then_* hooks are a wrapped processor's, called from this one's. "
                "threadtime.otel.ThreadTimeSpanProcessor is its subclass."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, clock_init},
    {Py_tp_dealloc, ttpy_gc_dealloc},
    {Py_tp_traverse, clock_traverse},
    {Py_tp_clear, clock_clear},
    {Py_tp_methods, clock_methods},
    {0, NULL},
};

static PyType_Spec clock_spec = {
    "threadtime.SpanClock", sizeof(ClockObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    clock_slots,
};

/* ---- SpanStart: what on_ending's on_start leaves on a span ---- */

static void start_dealloc(PyObject *o)
{
    PyTypeObject *type = Py_TYPE(o);
    PyObject_Free(o); /* as on_start allocated it */
    Py_DECREF(type);
}

static PyType_Slot start_slots[] = {
    {Py_tp_doc, "Where a span started and threadtime's figures there; its _on_ending reads them."},
    {Py_tp_dealloc, start_dealloc},
    {0, NULL},
};

static PyType_Spec start_spec = {
    "threadtime.SpanStart", sizeof(StartObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    start_slots,
};

/* ---- SpanEnd: the span's end(end_time=None) while it is on the span ---- */

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
 * with an error set. */
static int finish(EndObject *e)
{
    ClockObject *c = e->clock;
    PyObject *span = e->span;
    figures f;
    int reason = measure(c, &e->start, &f) - 1, rc = 0;
    if (reason >= 0)
        count(c, reason);
    else
        rc = set_attribute(span, c->names[TOTAL], f.cpu) ||
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
    PyObject *end;
    int idle = 0;
    if (__atomic_compare_exchange_n(&e->ran, &idle, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        /* The one caller that ends the span. The figures are the
         * processor's: a failure is reported, never raised into the code
         * that ends the span, which still ends. */
        if (finish(e) != 0)
            PyErr_WriteUnraisable(o);
        end = Py_NewRef(e->previous);
    } else if (idle == 1) {
        /* Another caller is ending the span through this hook, its figures
         * not all set yet: it ends it, as the SDK's own end() lets one
         * caller through. Ending it here would leave them off. */
        Py_RETURN_NONE;
    } else {
        /* Through a reference kept to the hook: the span's end() as it is
         * now. */
        end = PyObject_GetAttr(e->span, str_end);
        if (end == NULL)
            return NULL;
    }
    PyObject *r = end_time == Py_None ? PyObject_CallObject(end, NULL)
                                      : PyObject_CallFunctionObjArgs(end, end_time, NULL);
    Py_DECREF(end);
    __atomic_store_n(&e->ran, 2, __ATOMIC_RELEASE);
    return r;
}

static int end_traverse(PyObject *o, visitproc visit, void *arg)
{
    EndObject *e = (EndObject *)o;
    Py_VISIT(e->clock);
    Py_VISIT(e->span);
    Py_VISIT(e->previous);
    Py_VISIT(Py_TYPE(o));
    return 0;
}

static int end_clear(PyObject *o)
{
    EndObject *e = (EndObject *)o;
    Py_CLEAR(e->clock);
    Py_CLEAR(e->span);
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
    "threadtime.SpanEnd", sizeof(EndObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, end_slots,
};

int ttpy_spans_init(PyObject *mod)
{
    if (clock_type == NULL) {
        clock_type = (PyTypeObject *)PyType_FromSpec(&clock_spec);
        start_type = (PyTypeObject *)PyType_FromSpec(&start_spec);
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
        str_start = PyUnicode_InternFromString("_threadtime_start");
        str_attributes = PyUnicode_InternFromString("_attributes");
        str_dict = PyUnicode_InternFromString("_dict");
        str_maxlen = PyUnicode_InternFromString("maxlen");
        str_dropped = PyUnicode_InternFromString("dropped");
        if (method_type == NULL || clock_type == NULL || start_type == NULL || end_type == NULL || str_end == NULL ||
            str_self == NULL || str_parent_context == NULL || str_set_attribute == NULL || str_start == NULL ||
            str_attributes == NULL || str_dict == NULL || str_maxlen == NULL || str_dropped == NULL)
            return -1;
    }
    return ttpy_add_type(mod, "SpanClock", clock_type) || ttpy_add_type(mod, "SpanEnd", end_type);
}
