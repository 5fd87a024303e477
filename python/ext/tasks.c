/* threadtime._core's asyncio accounting: the CPU each task's own steps use.
 *
 * asyncio runs a task as a series of steps; each step resumes the task's
 * coroutine once (send or throw) and lasts until it next suspends. Tasks
 * share the loop's thread, so its CPU clock charges every task with its
 * neighbours' steps. Here each step is bracketed by two reads of the fast
 * clock (tt_self_fast_ns, ~10-25 ns each) on the thread that runs it, and
 * the difference goes to that task alone.
 *
 * The bracket is a TaskCoro: a coroutine-protocol object (am_send, send,
 * throw, close) around the user's coroutine, which the task steps instead of
 * the coroutine itself. asyncio's C Task steps it through PyIter_Send, which
 * calls am_send directly: no Python frame is added per step, and none shows
 * in a traceback (C calls make no frames). The task factory (TaskFactory,
 * installed by threadtime.asyncio.install) builds the TaskCoro and a Task
 * subclass whose get_coro() answers the user's coroutine again.
 *
 * A step may run inside another one on the same thread: an eager task's
 * first step runs inside the step that created it, and a coroutine may be
 * closed from another task's step. Each step therefore keeps a frame on the
 * C stack, linked from a thread-local top; a step's time, nested steps
 * included, is added to the frame below, which subtracts it from its own.
 *
 * Only the thread running a step writes its task's total (a coroutine cannot
 * run on two threads at once), so with a GIL the total is a relaxed load and
 * store; any thread reads it atomically.
 */
#include "core.h"

#include <errno.h>

#include "internal.h" /* tt__fast_ns_run, tt__run_wait_at: the fast clock's run of anchors, and the wait kept under it */

typedef struct {
    PyObject_HEAD
    PyObject *coro;     /* the user's coroutine */
    int64_t total_ns;   /* the finished steps' CPU; written by the running thread only */
    int clock_error;    /* the first failed clock read's -errno, or 0 */
    unsigned generation; /* ttpy_fork_generation() at creation */
    int run_wait;       /* the run-queue wait is counted too */
    int wait_error;     /* the first failed schedstat read's -errno, or 0 */
    int64_t wait_ns;    /* the finished steps' run-queue wait; as total_ns */
    uint64_t id;        /* no other TaskCoro of the process has it; never 0 */
} TaskCoroObject;

/* One step in progress on this thread; lives on the C stack of the call
 * that runs it. */
typedef struct step_frame {
    struct step_frame *below;
    TaskCoroObject *owner;
    int64_t begin_ns;  /* the fast clock at the start, or < 0 (-errno) */
    int64_t nested_ns; /* steps that ran inside this one, ended so far */
    int64_t begin_wait;  /* the thread's run-queue wait at the start, or < 0 (-errno) */
    int64_t nested_wait; /* the wait of the nested steps, ended so far */
} step_frame;

/* initial-exec: this file is dlopened, and the core's TLS uses the same
 * model (a surplus glibc reserves for it); one pointer, no call to reach it. */
static __thread step_frame *t_top __attribute__((tls_model("initial-exec")));

static PyTypeObject *taskcoro_type;
static PyTypeObject *factory_type;
static PyObject *coroutine_type; /* types.CoroutineType */
static uint64_t last_id;         /* the newest TaskCoro's id */
static PyObject *str_attached;   /* "_threadtime_coro" */
static PyObject *str_loop, *str_eager_start, *str_throw, *str_close, *str_get_coro;

/* Adds ns to *total: only the thread running the step writes it. */
static void charge(int64_t *total, int64_t ns)
{
#ifdef Py_GIL_DISABLED
    /* Without a GIL, a thread that tries to step a coroutine another thread
     * is running gets an error from it after a short bracket of its own. */
    __atomic_fetch_add(total, ns, __ATOMIC_RELAXED);
#else
    int64_t t = __atomic_load_n(total, __ATOMIC_RELAXED);
    __atomic_store_n(total, t + ns, __ATOMIC_RELAXED);
#endif
}

/* ---- the thread's run-queue wait, read once per run of fast-clock anchors ----
 *
 * schedstat's run_delay grows only while the thread is off its CPU: it is
 * booked when the thread gets a CPU back. The fast clock's anchors follow
 * one another in an unbroken run while nothing switches the thread out
 * (the kernel clears the thread's rseq field at every preemption,
 * migration and signal, and the clock is only fast on kernels that clear
 * it when the thread blocks too; an anchor that merely expired after
 * TT_FAST_BOUND_NS starts no new run), so one figure read under a run
 * holds for as long as the run does (the core's tt__run_wait_at keeps it).
 * A step or a span then reads schedstat (a pread, ~0.4 us) only at its
 * first boundary after the thread was switched back in, not at every
 * boundary nor every 50 us of running. Where the fast clock answers from
 * no anchor (turned off, or unsupported), every boundary reads schedstat. */
int64_t ttpy_wait_at(uint64_t run, int64_t *ns, int first)
{
    int64_t after = *ns;
    int64_t w = tt__run_wait_at(run, &after);
    if (first)
        *ns = after;
    return w;
}

static void step_enter(step_frame *f, TaskCoroObject *self)
{
    f->below = t_top;
    f->owner = self;
    f->nested_ns = 0;
    f->nested_wait = 0;
    t_top = f;
    uint64_t run;
    int64_t ns = tt__fast_ns_run(&run);
    f->begin_wait = self->run_wait ? ttpy_wait_at(run, &ns, 1) : 0;
    f->begin_ns = ns;
}

/* Records the first error of a step's reads. */
static void keep_error(int *slot, int64_t code)
{
    int none = 0;
    __atomic_compare_exchange_n(slot, &none, (int)code, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static void step_exit(step_frame *f)
{
    uint64_t run;
    int64_t end = tt__fast_ns_run(&run);
    TaskCoroObject *self = f->owner;
    int64_t waited = 0;
    if (self->run_wait) {
        int64_t unused, now = ttpy_wait_at(run, &unused, 0);
        int64_t bad = f->begin_wait < 0 ? f->begin_wait : now < 0 ? now : 0;
        if (bad != 0) {
            keep_error(&self->wait_error, bad);
        } else {
            waited = now - f->begin_wait;
            int64_t own = waited - f->nested_wait;
            charge(&self->wait_ns, own > 0 ? own : 0);
        }
    }
    t_top = f->below;
    int64_t spent = 0;
    int64_t bad = f->begin_ns < 0 ? f->begin_ns : end < 0 ? end : 0;
    if (bad != 0) {
        keep_error(&self->clock_error, bad);
    } else {
        spent = end - f->begin_ns;
        /* The fast clock is monotonic per thread, so a nested step never
         * outlasts this one; only a fork() inside the step (the child's
         * clock restarts) breaks that, and such a task refuses reads. */
        int64_t own = spent - f->nested_ns;
        charge(&self->total_ns, own > 0 ? own : 0);
    }
    if (f->below != NULL) {
        f->below->nested_ns += spent;
        f->below->nested_wait += waited;
    }
}

/* ---- the coroutine protocol, delegated ---- */

static PySendResult taskcoro_am_send(PyObject *o, PyObject *arg, PyObject **result)
{
    TaskCoroObject *self = (TaskCoroObject *)o;
    step_frame f;
    step_enter(&f, self);
    PySendResult r = PyIter_Send(self->coro, arg, result);
    step_exit(&f);
    return r;
}

/* A finished send as Python sees it: StopIteration carrying the value. */
static PyObject *returned(PyObject *value)
{
    if (value == Py_None) {
        Py_DECREF(value);
        PyErr_SetNone(PyExc_StopIteration);
        return NULL;
    }
    /* Built as an instance so a tuple value is not taken for arguments. */
    PyObject *exc = PyObject_CallFunctionObjArgs(PyExc_StopIteration, value, NULL);
    Py_DECREF(value);
    if (exc != NULL) {
        PyErr_SetObject(PyExc_StopIteration, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

static PyObject *taskcoro_send(PyObject *o, PyObject *arg)
{
    PyObject *result;
    PySendResult r = taskcoro_am_send(o, arg, &result);
    if (r == PYGEN_RETURN)
        return returned(result);
    return r == PYGEN_NEXT ? result : NULL;
}

static PyObject *taskcoro_iternext(PyObject *o)
{
    PyObject *result;
    PySendResult r = taskcoro_am_send(o, Py_None, &result);
    if (r == PYGEN_NEXT)
        return result;
    if (r == PYGEN_RETURN && result == Py_None) {
        Py_DECREF(result); /* NULL without an error: a plain stop */
        return NULL;
    }
    return r == PYGEN_RETURN ? returned(result) : NULL;
}

/* Calls the coroutine's method name with args inside a step. */
static PyObject *delegate(PyObject *o, PyObject *name, PyObject *args)
{
    TaskCoroObject *self = (TaskCoroObject *)o;
    PyObject *method = PyObject_GetAttr(self->coro, name);
    if (method == NULL)
        return NULL;
    step_frame f;
    step_enter(&f, self);
    PyObject *r = PyObject_Call(method, args, NULL);
    step_exit(&f);
    Py_DECREF(method);
    return r;
}

static PyObject *taskcoro_throw(PyObject *o, PyObject *args) { return delegate(o, str_throw, args); }
static PyObject *taskcoro_close(PyObject *o, PyObject *unused)
{
    PyObject *args = PyTuple_New(0);
    if (args == NULL)
        return NULL;
    PyObject *r = delegate(o, str_close, args);
    Py_DECREF(args);
    return r;
}

static PyObject *taskcoro_iter(PyObject *o) { return Py_NewRef(o); }
static PyObject *taskcoro_await(PyObject *o, PyObject *unused) { return taskcoro_iter(o); }

/* Attributes it does not have itself (cr_frame, cr_code, __qualname__, ...)
 * are the coroutine's, so a task made by another factory, whose get_coro()
 * answers this object, still shows its coroutine in repr() and get_stack(). */
static PyObject *taskcoro_getattro(PyObject *o, PyObject *name)
{
    PyObject *r = PyObject_GenericGetAttr(o, name);
    if (r == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        r = PyObject_GetAttr(((TaskCoroObject *)o)->coro, name);
    }
    return r;
}

static PyObject *taskcoro_repr(PyObject *o)
{
    return PyUnicode_FromFormat("<threadtime TaskCoro of %R>", ((TaskCoroObject *)o)->coro);
}

static int taskcoro_traverse(PyObject *o, visitproc visit, void *arg)
{
    Py_VISIT(((TaskCoroObject *)o)->coro);
    Py_VISIT(Py_TYPE(o)); /* a heap type's instances own a reference to it */
    return 0;
}

static int taskcoro_clear(PyObject *o)
{
    Py_CLEAR(((TaskCoroObject *)o)->coro);
    return 0;
}

void ttpy_gc_dealloc(PyObject *o)
{
    PyTypeObject *type = Py_TYPE(o);
    PyObject_GC_UnTrack(o);
    ((inquiry)PyType_GetSlot(type, Py_tp_clear))(o);
    ((freefunc)PyType_GetSlot(type, Py_tp_free))(o);
    Py_DECREF(type);
}

/* A new TaskCoro around coro (a new reference), or NULL. */
static PyObject *taskcoro_wrap(PyObject *coro, int run_wait)
{
    allocfunc alloc = (allocfunc)PyType_GetSlot(taskcoro_type, Py_tp_alloc);
    TaskCoroObject *self = (TaskCoroObject *)alloc(taskcoro_type, 0);
    if (self == NULL)
        return NULL;
    self->coro = Py_NewRef(coro);
    self->total_ns = 0;
    self->clock_error = 0;
    self->generation = ttpy_fork_generation();
    self->run_wait = run_wait;
    self->wait_error = 0;
    self->wait_ns = 0;
    self->id = __atomic_add_fetch(&last_id, 1, __ATOMIC_RELAXED);
    return (PyObject *)self;
}

static PyObject *taskcoro_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"", "run_wait", NULL};
    PyObject *coro;
    int run_wait = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$p:TaskCoro", names, &coro, &run_wait))
        return NULL;
    return taskcoro_wrap(coro, run_wait);
}

static PyObject *taskcoro_get_coro(PyObject *o, void *unused) { return Py_NewRef(((TaskCoroObject *)o)->coro); }

int ttpy_task_figures(PyObject *coro, int64_t *cpu, int64_t *wait)
{
    TaskCoroObject *self = (TaskCoroObject *)coro;
    if (self->generation != ttpy_fork_generation()) {
        ttpy_raise_errno(EINVAL, "this task was counted in the parent process before fork(): its steps ran on a "
                         "thread of the parent; tasks created in the child are counted afresh", NULL);
        return -1;
    }
    int error = __atomic_load_n(&self->clock_error, __ATOMIC_RELAXED);
    if (error != 0) {
        ttpy_raise_code(error);
        return -1;
    }
    int64_t total = __atomic_load_n(&self->total_ns, __ATOMIC_RELAXED);
    int64_t waited = __atomic_load_n(&self->wait_ns, __ATOMIC_RELAXED);
    int64_t wait_error = self->run_wait ? __atomic_load_n(&self->wait_error, __ATOMIC_RELAXED) : TTPY_WAIT_OFF;
    step_frame *above = NULL;
    for (step_frame *f = t_top; f != NULL; above = f, f = f->below) {
        if (f->owner != self || f->begin_ns < 0)
            continue;
        /* Up to the start of the step running above it, or to now. */
        int64_t upto = above != NULL ? above->begin_ns : -1, wait_upto = above != NULL ? above->begin_wait : -1;
        if (above == NULL) {
            uint64_t run;
            upto = tt__fast_ns_run(&run);
            if (upto >= 0 && wait_error == 0)
                wait_upto = ttpy_wait_at(run, &(int64_t){0}, 0);
        }
        if (upto < 0) {
            ttpy_raise_code(upto);
            return -1;
        }
        int64_t own = upto - f->begin_ns - f->nested_ns;
        total += own > 0 ? own : 0;
        if (wait_error == 0) {
            int64_t bad = f->begin_wait < 0 ? f->begin_wait : wait_upto < 0 ? wait_upto : 0;
            if (bad != 0) {
                wait_error = bad;
            } else {
                own = wait_upto - f->begin_wait - f->nested_wait;
                waited += own > 0 ? own : 0;
            }
        }
        break; /* a coroutine runs at most once on a thread's stack */
    }
    *cpu = total;
    *wait = wait_error != 0 ? wait_error : waited;
    return 0;
}

PyObject *ttpy_step_owner(void) { return t_top != NULL ? (PyObject *)t_top->owner : NULL; }

uint64_t ttpy_task_id(PyObject *coro) { return ((TaskCoroObject *)coro)->id; }

static PyObject *taskcoro_cpu(PyObject *o, void *unused)
{
    int64_t ns, wait;
    return ttpy_task_figures(o, &ns, &wait) ? NULL : PyLong_FromLongLong(ns);
}

/* The wait as an int, or its error raised (TTPY_WAIT_OFF: LookupError). */
static PyObject *wait_result(PyObject *task, int64_t wait)
{
    if (wait == TTPY_WAIT_OFF)
        return PyErr_Format(PyExc_LookupError, "%R's run-queue wait is not counted: install(run_wait=False), or "
                            "the default where the fast clock is off", task);
    return ttpy_ns_result(wait);
}

static PyObject *taskcoro_wait(PyObject *o, void *unused)
{
    int64_t ns, wait;
    return ttpy_task_figures(o, &ns, &wait) ? NULL : wait_result(o, wait);
}

static PyMethodDef taskcoro_methods[] = {
    {"send", taskcoro_send, METH_O, "send($self, value, /)\n--\n\nResumes the coroutine with value, counting the step."},
    {"throw", taskcoro_throw, METH_VARARGS, "throw($self, exc, /)\n--\n\nRaises exc inside the coroutine, counting the step."},
    {"close", taskcoro_close, METH_NOARGS, "close($self, /)\n--\n\nCloses the coroutine, counting what its finally blocks run."},
    {"__await__", taskcoro_await, METH_NOARGS, "__await__($self, /)\n--\n\nThis object, which is its own iterator."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef taskcoro_getset[] = {
    {"coro", taskcoro_get_coro, NULL, "The coroutine whose steps are counted.", NULL},
    {"cpu_ns", taskcoro_cpu, NULL, "CPU time of the coroutine's steps so far, ns.", NULL},
    {"run_wait_ns", taskcoro_wait, NULL, "Run-queue wait of the thread during the coroutine's steps so far, ns.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot taskcoro_slots[] = {
    {Py_tp_doc, "TaskCoro(coro, /, *, run_wait=True)\n--\n\nA coroutine whose every step (send, throw, close) is "
                "timed by the calling thread's fast CPU clock, and with run_wait the thread's run-queue wait. "
                "Attributes it lacks are the coroutine's."},
    {Py_tp_new, taskcoro_new},
    {Py_tp_dealloc, ttpy_gc_dealloc},
    {Py_tp_traverse, taskcoro_traverse},
    {Py_tp_clear, taskcoro_clear},
    {Py_tp_repr, taskcoro_repr},
    {Py_tp_getattro, taskcoro_getattro},
    {Py_tp_iter, taskcoro_iter},
    {Py_tp_iternext, taskcoro_iternext},
    {Py_am_send, taskcoro_am_send},
    {Py_tp_methods, taskcoro_methods},
    {Py_tp_getset, taskcoro_getset},
    {0, NULL},
};

static PyType_Spec taskcoro_spec = {
    "threadtime.TaskCoro", sizeof(TaskCoroObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, taskcoro_slots,
};

/* ---- the task factory ---- */

typedef struct {
    PyObject_HEAD
    PyObject *task_class; /* builds the task when previous is None */
    PyObject *previous;   /* the loop's factory before install(), or None */
    PyObject *iscoroutine; /* asyncio.iscoroutine, for coroutines of other types */
    int eager;             /* task_class(..., eager_start=True) */
    int run_wait;          /* each TaskCoro counts the run-queue wait too */
} FactoryObject;

/* 1 if o is something asyncio runs as a coroutine, 0 if not, -1. */
static int is_coroutine(FactoryObject *self, PyObject *o)
{
    if ((PyObject *)Py_TYPE(o) == coroutine_type)
        return 1;
    if (PyObject_TypeCheck(o, taskcoro_type))
        return 0; /* counted already: another factory of ours made it */
    PyObject *r = PyObject_CallFunctionObjArgs(self->iscoroutine, o, NULL);
    if (r == NULL)
        return -1;
    int yes = PyObject_IsTrue(r);
    Py_DECREF(r);
    return yes;
}

/* Builds the task the way its class does (new, then init), with a TaskCoro
 * (counted) attached before init: an eager task's first step runs in init,
 * and task_cpu_ns() inside it finds the attribute. */
static PyObject *make_task(FactoryObject *self, PyObject *loop, PyObject *wrapped, int counted, PyObject *kwargs)
{
    PyObject *kw = kwargs != NULL ? PyDict_Copy(kwargs) : PyDict_New();
    PyObject *args = PyTuple_Pack(1, wrapped);
    PyObject *task = NULL;
    if (kw == NULL || args == NULL || PyDict_SetItem(kw, str_loop, loop) != 0 ||
        (self->eager && PyDict_SetItem(kw, str_eager_start, Py_True) != 0))
        goto out;
    PyTypeObject *cls = (PyTypeObject *)self->task_class;
    newfunc new = (newfunc)PyType_GetSlot(cls, Py_tp_new);
    initproc init = (initproc)PyType_GetSlot(cls, Py_tp_init);
    task = new(cls, args, kw);
    if (task != NULL && ((counted && PyObject_SetAttr(task, str_attached, wrapped) != 0) || init(task, args, kw) != 0))
        Py_CLEAR(task);
out:
    Py_XDECREF(kw);
    Py_XDECREF(args);
    return task;
}

static PyObject *factory_call(PyObject *o, PyObject *args, PyObject *kwargs)
{
    FactoryObject *self = (FactoryObject *)o;
    PyObject *loop, *coro;
    if (!PyArg_UnpackTuple(args, "task_factory", 2, 2, &loop, &coro))
        return NULL;
    int yes = is_coroutine(self, coro);
    if (yes < 0)
        return NULL;
    /* Not a coroutine: asyncio's own error, from the task as usual. */
    PyObject *wrapped = yes ? taskcoro_wrap(coro, self->run_wait) : Py_NewRef(coro);
    if (wrapped == NULL)
        return NULL;
    PyObject *task;
    if (self->previous == Py_None) {
        task = make_task(self, loop, wrapped, yes, kwargs);
    } else {
        PyObject *pargs = PyTuple_Pack(2, loop, wrapped);
        task = pargs != NULL ? PyObject_Call(self->previous, pargs, kwargs) : NULL;
        Py_XDECREF(pargs);
        /* A task that takes no attribute still answers through get_coro(). */
        if (task != NULL && yes && PyObject_SetAttr(task, str_attached, wrapped) != 0) {
            if (PyErr_ExceptionMatches(PyExc_AttributeError))
                PyErr_Clear();
            else
                Py_CLEAR(task);
        }
    }
    Py_DECREF(wrapped);
    return task;
}

static PyObject *factory_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"task_class", "previous", "iscoroutine", "eager", "run_wait", NULL};
    PyObject *task_class, *previous, *iscoroutine;
    int eager, run_wait = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOp|p:TaskFactory", names, &task_class, &previous,
                                     &iscoroutine, &eager, &run_wait))
        return NULL;
    if (!PyType_Check(task_class)) {
        PyErr_Format(PyExc_TypeError, "task_class must be a class, not %R", task_class);
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    FactoryObject *self = (FactoryObject *)alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->task_class = Py_NewRef(task_class);
    self->previous = Py_NewRef(previous);
    self->iscoroutine = Py_NewRef(iscoroutine);
    self->eager = eager;
    self->run_wait = run_wait;
    return (PyObject *)self;
}

static int factory_traverse(PyObject *o, visitproc visit, void *arg)
{
    FactoryObject *self = (FactoryObject *)o;
    Py_VISIT(self->task_class);
    Py_VISIT(self->previous);
    Py_VISIT(self->iscoroutine);
    Py_VISIT(Py_TYPE(o));
    return 0;
}

static int factory_clear(PyObject *o)
{
    FactoryObject *self = (FactoryObject *)o;
    Py_CLEAR(self->task_class);
    Py_CLEAR(self->previous);
    Py_CLEAR(self->iscoroutine);
    return 0;
}

static PyObject *factory_previous(PyObject *o, void *unused) { return Py_NewRef(((FactoryObject *)o)->previous); }
static PyObject *factory_eager(PyObject *o, void *unused) { return PyBool_FromLong(((FactoryObject *)o)->eager); }
static PyObject *factory_run_wait(PyObject *o, void *unused)
{
    return PyBool_FromLong(((FactoryObject *)o)->run_wait);
}

static PyGetSetDef factory_getset[] = {
    {"previous", factory_previous, NULL, "The factory the loop had before, called with each TaskCoro, or None.",
     NULL},
    {"eager", factory_eager, NULL, "Whether tasks start eagerly (the loop had asyncio.eager_task_factory).", NULL},
    {"run_wait", factory_run_wait, NULL, "Whether each task's run-queue wait is counted beside its CPU.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot factory_slots[] = {
    {Py_tp_doc, "TaskFactory(task_class, previous, iscoroutine, eager, run_wait=True)\n--\n\nA loop's task factory: "
                "wraps each coroutine in a TaskCoro and builds the task from task_class, or hands it to previous."},
    {Py_tp_new, factory_new},
    {Py_tp_call, factory_call},
    {Py_tp_dealloc, ttpy_gc_dealloc},
    {Py_tp_traverse, factory_traverse},
    {Py_tp_clear, factory_clear},
    {Py_tp_getset, factory_getset},
    {0, NULL},
};

static PyType_Spec factory_spec = {
    "threadtime.TaskFactory", sizeof(FactoryObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, factory_slots,
};

/* ---- reading a task ---- */

/* The TaskCoro counting task (a new reference), or NULL with LookupError. */
static PyObject *task_counter(PyObject *task)
{
    PyObject *c = PyObject_GetAttr(task, str_attached);
    if (c == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        /* A task another factory built (it takes no attribute): its
         * coroutine is the TaskCoro. */
        c = PyObject_CallMethodObjArgs(task, str_get_coro, NULL);
    }
    if (c == NULL || PyObject_TypeCheck(c, taskcoro_type))
        return c;
    Py_DECREF(c);
    PyErr_Format(PyExc_LookupError,
                 "%R is not counted: it was created before threadtime.asyncio.install() ran on its loop, or on "
                 "another loop", task);
    return NULL;
}

static PyObject *py_task_cpu_ns(PyObject *m, PyObject *task)
{
    PyObject *c = task_counter(task);
    if (c == NULL)
        return NULL;
    PyObject *r = taskcoro_cpu(c, NULL);
    Py_DECREF(c);
    return r;
}

static PyObject *py_task_run_wait_ns(PyObject *m, PyObject *task)
{
    PyObject *c = task_counter(task);
    if (c == NULL)
        return NULL;
    int64_t ns, wait;
    PyObject *r = ttpy_task_figures(c, &ns, &wait) ? NULL : wait_result(task, wait);
    Py_DECREF(c);
    return r;
}

static PyMethodDef tasks_methods[] = {
    {"_task_cpu_ns", py_task_cpu_ns, METH_O, "_task_cpu_ns($module, task, /)\n--\n\nCPU time of a counted task's own steps, ns (threadtime.asyncio.task_cpu_ns wraps it)."},
    {"_task_run_wait_ns", py_task_run_wait_ns, METH_O, "_task_run_wait_ns($module, task, /)\n--\n\nRun-queue wait of the thread during a counted task's own steps, ns (threadtime.asyncio.task_run_wait_ns wraps it)."},
    {NULL, NULL, 0, NULL},
};

int ttpy_tasks_init(PyObject *mod)
{
    if (taskcoro_type == NULL) {
        PyObject *types = PyImport_ImportModule("types");
        if (types == NULL)
            return -1;
        coroutine_type = PyObject_GetAttrString(types, "CoroutineType");
        Py_DECREF(types);
        taskcoro_type = (PyTypeObject *)PyType_FromSpec(&taskcoro_spec);
        factory_type = (PyTypeObject *)PyType_FromSpec(&factory_spec);
        str_attached = PyUnicode_InternFromString("_threadtime_coro");
        str_loop = PyUnicode_InternFromString("loop");
        str_eager_start = PyUnicode_InternFromString("eager_start");
        str_throw = PyUnicode_InternFromString("throw");
        str_close = PyUnicode_InternFromString("close");
        str_get_coro = PyUnicode_InternFromString("get_coro");
        if (coroutine_type == NULL || taskcoro_type == NULL || factory_type == NULL || str_attached == NULL ||
            str_loop == NULL || str_eager_start == NULL || str_throw == NULL || str_close == NULL ||
            str_get_coro == NULL)
            return -1;
    }
    return PyModule_AddFunctions(mod, tasks_methods) || ttpy_add_type(mod, "TaskCoro", taskcoro_type) ||
           ttpy_add_type(mod, "TaskFactory", factory_type);
}
