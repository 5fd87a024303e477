/* threadtime._core's interval: a begin event on entry and an end event on
 * exit, both with one id, on the calling thread. The object holds only the
 * id, so it is reusable and re-entrant. Used as a decorator, it wraps each
 * call (threadtime/__init__.py adds __call__). */
#include "core.h"

#include "threadtime/threadtime.h"

static PyTypeObject *interval_type;

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
        ttpy_event_id(id_obj, &id))
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
                "event on exit, both with this id (an int, or a str name as event()\n"
                "takes), on the calling thread; as a decorator, around every call.\n"
                "With cpu=True both bounds also record the thread's user and system\n"
                "CPU time: the core's consistent split, three clock reads each\n"
                "(~0.9 us). Reusable and re-entrant: it holds only the id."},
    {0, NULL},
};

static PyType_Spec interval_spec = {
    "threadtime.interval", sizeof(IntervalObject), 0, Py_TPFLAGS_DEFAULT, interval_slots,
};

int ttpy_interval_init(PyObject *mod)
{
    if (interval_type == NULL && (interval_type = (PyTypeObject *)PyType_FromSpec(&interval_spec)) == NULL)
        return -1;
    return ttpy_add_type(mod, "interval", interval_type);
}
