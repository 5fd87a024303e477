/* threadtime._core's clocks: the calling thread, a thread or a process by
 * id, the /proc reader, and the method the clocks are read with.
 *
 * The calling thread's clocks are METH_NOARGS functions that keep the GIL:
 * the read is one system call of ~200-650 ns. Dropping and retaking the GIL
 * around it made the call 10-37% slower uncontended, and with one other
 * thread busy in Python each call then waited for the GIL's switch
 * interval: ~49 us instead of ~0.5 us (measured here; see python/README.md).
 * The calls that do I/O (/proc) release it, since their ~10 us is worth
 * handing over.
 */
#include "core.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "threadtime/threadtime.h"

static PyTypeObject *times_type;    /* Times(user_ns, system_ns, total_ns) */
static PyTypeObject *procstat_type; /* ProcStat(user_ns, system_ns, state, name) */
static PyTypeObject *sched_type;    /* Sched(on_cpu_ns, run_wait_ns, timeslices, voluntary_switches, involuntary_switches) */
static PyTypeObject *cgroup_type;   /* CgroupCpu(version, periods, throttled_periods, throttled_ns, quota_us, period_us) */
static PyTypeObject *delays_type;   /* Delays(version, cpu_count, cpu_ns, ..., irq_count, irq_ns) */

PyObject *ttpy_times_result(int rc, const tt_times *t)
{
    if (rc != 0)
        return ttpy_raise_code(rc);
    PyObject *items[3] = {
        PyLong_FromLongLong(t->user_ns), PyLong_FromLongLong(t->system_ns), PyLong_FromLongLong(t->total_ns),
    };
    return ttpy_struct_new(times_type, items, 3);
}

/* ---- the calling thread ---- */

/* The fast clock (tt_self_fast_ns): the last real read plus the cycle
 * counter while rseq shows no switch, ~10-25 ns instead of a system call.
 * set_fast_clock(False) makes every read a real one. */
static PyObject *py_total_ns(PyObject *m, PyObject *unused) { return ttpy_ns_result(tt_self_fast_ns()); }
static PyObject *py_user_raw_ns(PyObject *m, PyObject *unused) { return ttpy_ns_result(tt_self_user_raw_ns()); }
static PyObject *py_system_raw_ns(PyObject *m, PyObject *unused) { return ttpy_ns_result(tt_self_system_raw_ns()); }

static PyObject *py_times(PyObject *m, PyObject *unused)
{
    tt_times t;
    return ttpy_times_result(tt_self_times(&t), &t);
}

/* A Sched from the core's figures, or the error of rc. */
static PyObject *sched_result(int rc, const tt_sched *s)
{
    if (rc != 0)
        return ttpy_raise_code(rc);
    PyObject *items[5] = {
        PyLong_FromLongLong(s->on_cpu_ns),          PyLong_FromLongLong(s->run_wait_ns),
        PyLong_FromLongLong(s->timeslices),         PyLong_FromLongLong(s->voluntary_switches),
        PyLong_FromLongLong(s->involuntary_switches),
    };
    return ttpy_struct_new(sched_type, items, 5);
}

/* The scheduler's accounts of the calling thread (tt_self_sched): one
 * pread of a descriptor the thread keeps open and one getrusage. */
static PyObject *py_sched(PyObject *m, PyObject *unused)
{
    tt_sched s;
    return sched_result(tt_self_sched(&s), &s);
}

/* The CPU controller's figures of this process's cgroup
 * (tt_cgroup_cpu_read): several small files, so the GIL is released. */
static PyObject *py_cgroup_cpu(PyObject *m, PyObject *unused)
{
    tt_cgroup_cpu c;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = tt_cgroup_cpu_read(&c);
    Py_END_ALLOW_THREADS
    if (rc != 0)
        return ttpy_raise_code(rc);
    PyObject *items[6] = {
        PyLong_FromLong(c.version),      PyLong_FromLongLong(c.periods),  PyLong_FromLongLong(c.throttled_periods),
        PyLong_FromLongLong(c.throttled_ns), PyLong_FromLongLong(c.quota_us), PyLong_FromLongLong(c.period_us),
    };
    return ttpy_struct_new(cgroup_type, items, 6);
}

/* Another thread's (tt_tid_sched): two /proc files, ~10 us, so the GIL is
 * released. */
static PyObject *py_thread_sched(PyObject *m, PyObject *arg)
{
    pid_t tid;
    if (ttpy_as_id(arg, &tid))
        return NULL;
    tt_sched s;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = tt_tid_sched(tid, &s);
    Py_END_ALLOW_THREADS
    return sched_result(rc, &s);
}

/* A thread's delay-accounting figures (tt_tid_delays): a socket, one
 * netlink round trip and a sysctl read, ~10 us, so the GIL is released.
 * A kind the kernel's taskstats version lacks is None. */
static PyObject *py_delays(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    pid_t tid = 0;
    if (nargs > 1)
        return PyErr_Format(PyExc_TypeError, "delays() takes at most 1 argument (%zd given)", nargs);
    if (nargs == 1 && ttpy_as_id(args[0], &tid))
        return NULL;
    tt_delays d;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = tt_tid_delays(tid, &d);
    Py_END_ALLOW_THREADS
    if (rc != 0)
        return ttpy_raise_code(rc);
    const tt_delay *kinds[8] = {&d.cpu, &d.blkio, &d.swapin, &d.reclaim, &d.thrashing, &d.compact, &d.wpcopy, &d.irq};
    PyObject *items[17];
    items[0] = PyLong_FromLong(d.version);
    for (int i = 0; i < 8; i++) {
        int absent = kinds[i]->count < 0;
        items[1 + 2 * i] = absent ? Py_NewRef(Py_None) : PyLong_FromLongLong(kinds[i]->count);
        items[2 + 2 * i] = absent ? Py_NewRef(Py_None) : PyLong_FromLongLong(kinds[i]->ns);
    }
    return ttpy_struct_new(delays_type, items, 17);
}

static PyObject *py_delay_accounting(PyObject *m, PyObject *unused)
{
    return PyUnicode_FromString(tt_delay_accounting());
}

/* ---- another thread, by native id ---- */

static PyObject *py_thread_total_ns(PyObject *m, PyObject *arg)
{
    pid_t tid;
    return ttpy_as_id(arg, &tid) ? NULL : ttpy_ns_result(tt_tid_total_ns(tid));
}

static PyObject *py_thread_user_raw_ns(PyObject *m, PyObject *arg)
{
    pid_t tid;
    return ttpy_as_id(arg, &tid) ? NULL : ttpy_ns_result(tt_tid_user_raw_ns(tid));
}

static PyObject *py_thread_system_raw_ns(PyObject *m, PyObject *arg)
{
    pid_t tid;
    return ttpy_as_id(arg, &tid) ? NULL : ttpy_ns_result(tt_tid_system_raw_ns(tid));
}

/* ---- processes ---- */

/* The optional pid of the process_ calls: absent means 0, this process. */
static int opt_id(PyObject *const *args, Py_ssize_t nargs, const char *fname, pid_t *out)
{
    *out = 0;
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 1 argument (%zd given)", fname, nargs);
        return -1;
    }
    return nargs == 1 ? ttpy_as_id(args[0], out) : 0;
}

static PyObject *py_process_total_ns(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    pid_t pid;
    return opt_id(args, nargs, "process_total_ns", &pid) ? NULL : ttpy_ns_result(tt_process_total_ns(pid));
}

static PyObject *py_process_user_raw_ns(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    pid_t pid;
    return opt_id(args, nargs, "process_user_raw_ns", &pid) ? NULL : ttpy_ns_result(tt_process_user_raw_ns(pid));
}

static PyObject *py_process_prof_raw_ns(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    pid_t pid;
    return opt_id(args, nargs, "process_prof_raw_ns", &pid) ? NULL : ttpy_ns_result(tt_process_prof_raw_ns(pid));
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
    return ttpy_times_result(rc, &t);
}

/* ---- the /proc reader ---- */

/* procfs_read(pid=0, tid=0): by position or by keyword, as the docs write it. */
static PyObject *py_procfs_read(PyObject *m, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"pid", "tid", NULL};
    PyObject *given[2] = {NULL, NULL};
    pid_t ids[2] = {0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:procfs_read", kwlist, &given[0], &given[1]))
        return NULL;
    for (int i = 0; i < 2; i++)
        if (given[i] != NULL && ttpy_as_id(given[i], &ids[i]))
            return NULL;
    tt_procfs_stat st;
    int rc;
    Py_BEGIN_ALLOW_THREADS /* open, read, close: ~10 us */
    rc = tt_procfs_read(ids[0], ids[1], &st);
    Py_END_ALLOW_THREADS
    if (rc != 0)
        return ttpy_raise_code(rc);
    /* A name is at most 15 bytes, cut where the kernel cut it: possibly in
     * the middle of a UTF-8 sequence, which surrogateescape keeps. */
    PyObject *items[4] = {
        PyLong_FromLongLong(st.user_ns),
        PyLong_FromLongLong(st.system_ns),
        PyUnicode_FromStringAndSize(&st.state, 1),
        PyUnicode_DecodeFSDefault(st.name),
    };
    return ttpy_struct_new(procstat_type, items, 4);
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
                return ttpy_raise_code(rc);
            Py_RETURN_NONE;
        }
    }
    return PyErr_Format(PyExc_ValueError, "unknown method %R (auto, clockid, getrusage or procfs)", arg);
}

static PyObject *py_set_fast_clock(PyObject *m, PyObject *arg)
{
    if (!PyBool_Check(arg))
        return PyErr_Format(PyExc_TypeError, "set_fast_clock() takes True or False, not %R", arg);
    int rc = tt_fast_clock_set(arg == Py_True);
    if (rc == -ENOTSUP) { /* the name says why */
        char text[200];
        snprintf(text, sizeof text, "the fast clock cannot work here: %s", tt_fast_clock_name());
        return ttpy_raise_errno(ENOTSUP, text, NULL);
    }
    return rc != 0 ? ttpy_raise_code(rc) : Py_NewRef(Py_None);
}

static PyObject *py_fast_clock(PyObject *m, PyObject *unused) { return PyUnicode_FromString(tt_fast_clock_name()); }

static PyObject *py_method(PyObject *m, PyObject *unused)
{
    return PyUnicode_FromString(tt_method_name(tt_method_active()));
}

static PyMethodDef clocks_methods[] = {
    {"total_ns", py_total_ns, METH_NOARGS, "total_ns($module, /)\n--\n\nPrecise CPU time of the calling thread, ns: the kernel's clock, read through the fast clock (fast_clock() says which mechanism; the first call in a process calibrates it, ~25 ms)."},
    {"user_raw_ns", py_user_raw_ns, METH_NOARGS, "user_raw_ns($module, /)\n--\n\nRaw tick-sampled user time of the calling thread, ns; may exceed total_ns()."},
    {"system_raw_ns", py_system_raw_ns, METH_NOARGS, "system_raw_ns($module, /)\n--\n\nRaw tick-sampled system time of the calling thread, ns (two clock reads). Not monotonic: a tick landing between the two reads counts as system time once, then as user time; times() never goes back."},
    {"times", py_times, METH_NOARGS, "times($module, /)\n--\n\nConsistent split of the calling thread's CPU time: Times(user_ns, system_ns, total_ns)."},
    {"sched", py_sched, METH_NOARGS, "sched($module, /)\n--\n\nThe scheduler's accounts of the calling thread: Sched(on_cpu_ns, run_wait_ns, timeslices, voluntary_switches, involuntary_switches). run_wait_ns is time runnable but waiting for a CPU (cgroup throttling included), never time blocked."},
    {"cgroup_cpu", py_cgroup_cpu, METH_NOARGS, "cgroup_cpu($module, /)\n--\n\nThe CPU controller's figures of this process's cgroup (v1 or v2): CgroupCpu(version, periods, throttled_periods, throttled_ns, quota_us, period_us); quota_us is -1 without a quota. FileNotFoundError where no CPU controller is visible."},
    {"thread_sched", py_thread_sched, METH_O, "thread_sched($module, native_id, /)\n--\n\nThe scheduler's accounts of a thread of this process (0: the caller), as sched() gives them, from /proc/self/task/<tid>/schedstat and status."},
    {"delays", (PyCFunction)(void (*)(void))py_delays, METH_FASTCALL, "delays($module, native_id=0, /)\n--\n\nThe delay-accounting figures of a thread of this process (0: the caller), from the kernel's taskstats: Delays(version, cpu_count, cpu_ns, blkio_count, blkio_ns, swapin_count, swapin_ns, reclaim_count, reclaim_ns, thrashing_count, thrashing_ns, compact_count, compact_ns, wpcopy_count, wpcopy_ns, irq_count, irq_ns); None for a kind this kernel does not keep. Needs CAP_NET_ADMIN (PermissionError without) and kernel.task_delayacct on (OSError ENODATA while it is off, saying how to turn it on)."},
    {"delay_accounting", py_delay_accounting, METH_NOARGS, "delay_accounting($module, /)\n--\n\nWhether the kernel keeps delay accounting: 'on', or 'off: ' / 'absent: ' and what to do."},
    {"thread_total_ns", py_thread_total_ns, METH_O, "thread_total_ns($module, native_id, /)\n--\n\nPrecise CPU time of a thread of this process, ns."},
    {"thread_user_raw_ns", py_thread_user_raw_ns, METH_O, "thread_user_raw_ns($module, native_id, /)\n--\n\nRaw tick-sampled user time of a thread of this process, ns."},
    {"thread_system_raw_ns", py_thread_system_raw_ns, METH_O, "thread_system_raw_ns($module, native_id, /)\n--\n\nRaw tick-sampled system time of a thread of this process, ns."},
    {"process_total_ns", (PyCFunction)(void (*)(void))py_process_total_ns, METH_FASTCALL, "process_total_ns($module, pid=0, /)\n--\n\nPrecise CPU time of a process (0: this one), ns."},
    {"process_user_raw_ns", (PyCFunction)(void (*)(void))py_process_user_raw_ns, METH_FASTCALL, "process_user_raw_ns($module, pid=0, /)\n--\n\nRaw tick-sampled user time of a process, ns."},
    {"process_prof_raw_ns", (PyCFunction)(void (*)(void))py_process_prof_raw_ns, METH_FASTCALL, "process_prof_raw_ns($module, pid=0, /)\n--\n\nRaw tick-sampled user + system time of a process, ns."},
    {"process_times", (PyCFunction)(void (*)(void))py_process_times, METH_FASTCALL, "process_times($module, pid=0, /)\n--\n\nConsistent split of a process's CPU time."},
    {"procfs_read", (PyCFunction)(void (*)(void))py_procfs_read, METH_VARARGS | METH_KEYWORDS, "procfs_read($module, pid=0, tid=0)\n--\n\nParses /proc/<pid>/task/<tid>/stat: ProcStat(user_ns, system_ns, state, name)."},
    {"set_method", py_set_method, METH_O, "set_method($module, name, /)\n--\n\nHow clocks are read: 'auto', 'clockid', 'getrusage' or 'procfs'."},
    {"set_fast_clock", py_set_fast_clock, METH_O, "set_fast_clock($module, on, /)\n--\n\nTurns the fast clock behind total_ns() off (False: every read a system call) or back on (True; OSError if it cannot work here). For the whole process, as THREADTIME_FAST_CLOCK=0 at start."},
    {"fast_clock", py_fast_clock, METH_NOARGS, "fast_clock($module, /)\n--\n\nWhat total_ns() reads with: 'rseq+tsc' (or 'rseq+cntvct'), or 'syscall: ' and the reason."},
    {"method", py_method, METH_NOARGS, "method($module, /)\n--\n\nThe method other threads' clocks are read with now (never 'auto'); see the README for what the calling thread's times() uses."},
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

static PyStructSequence_Field sched_fields[] = {
    {"on_cpu_ns", "time on a CPU as the scheduler last booked it (up to a tick behind total_ns()), ns"},
    {"run_wait_ns", "time runnable but waiting for a CPU, cgroup throttling included, ns"},
    {"timeslices", "times the thread was given a CPU"},
    {"voluntary_switches", "switches away because it blocked or yielded"},
    {"involuntary_switches", "switches away because it was preempted"},
    {NULL, NULL},
};

static PyStructSequence_Desc sched_desc = {
    "threadtime.Sched", "The scheduler's accounts of a thread, each a count since it started.", sched_fields, 5,
};

static PyStructSequence_Field delays_fields[] = {
    {"version", "the version of struct taskstats the kernel answered with"},
    {"cpu_count", "times it waited for a CPU (the run queue)"},
    {"cpu_ns", "time runnable but waiting for a CPU, ns (Sched.run_wait_ns)"},
    {"blkio_count", "times it waited for block I/O"},
    {"blkio_ns", "time waiting for block I/O, ns"},
    {"swapin_count", "times it waited for pages to come back from swap"},
    {"swapin_ns", "time waiting for swap-in, ns"},
    {"reclaim_count", "times it reclaimed memory itself before an allocation (freepages)"},
    {"reclaim_ns", "time in direct reclaim, ns"},
    {"thrashing_count", "times it waited for an evicted page of its working set"},
    {"thrashing_ns", "time thrashing, ns"},
    {"compact_count", "times it compacted memory before an allocation"},
    {"compact_ns", "time compacting memory, ns"},
    {"wpcopy_count", "times it copied a write-protected page on write"},
    {"wpcopy_ns", "time copying pages on write, ns"},
    {"irq_count", "times interrupt handling took its CPU while it ran"},
    {"irq_ns", "time its CPU spent in interrupt handlers while it ran, ns"},
    {NULL, NULL},
};

static PyStructSequence_Field cgroup_fields[] = {
    {"version", "1 (the v1 cpu hierarchy) or 2"},
    {"periods", "quota periods in which the group was runnable (nr_periods)"},
    {"throttled_periods", "of those, the ones in which it ran out of quota (nr_throttled)"},
    {"throttled_ns", "time its threads were held back for quota, ns"},
    {"quota_us", "CPU time allowed per period, us; -1: no quota"},
    {"period_us", "the period, us"},
    {NULL, NULL},
};

static PyStructSequence_Desc cgroup_desc = {
    "threadtime.CgroupCpu", "The CPU controller's figures of a cgroup (cpu.stat and its quota).", cgroup_fields, 6,
};

static PyStructSequence_Desc delays_desc = {
    "threadtime.Delays",
    "A thread's delay-accounting figures (taskstats), each a count since it started or since delay accounting "
    "was turned on; None where this kernel does not keep the kind.",
    delays_fields, 17,
};

int ttpy_clocks_init(PyObject *mod)
{
    if (times_type == NULL) {
        times_type = PyStructSequence_NewType(&times_desc);
        procstat_type = PyStructSequence_NewType(&procstat_desc);
        sched_type = PyStructSequence_NewType(&sched_desc);
        delays_type = PyStructSequence_NewType(&delays_desc);
        cgroup_type = PyStructSequence_NewType(&cgroup_desc);
        if (times_type == NULL || procstat_type == NULL || sched_type == NULL || delays_type == NULL ||
            cgroup_type == NULL)
            return -1;
    }
    return PyModule_AddFunctions(mod, clocks_methods) || ttpy_add_type(mod, "Times", times_type) ||
           ttpy_add_type(mod, "ProcStat", procstat_type) || ttpy_add_type(mod, "Sched", sched_type) ||
           ttpy_add_type(mod, "Delays", delays_type) || ttpy_add_type(mod, "CgroupCpu", cgroup_type) ||
           PyModule_AddIntConstant(mod, "FAST_BOUND_NS", (long)TT_FAST_BOUND_NS) != 0;
}
