/* Shared by the files of threadtime._core. Only PyInit__core leaves the
 * extension (exports.map), so these names are private to it.
 *
 * One file per domain, each adding its own functions and types to the
 * module from an init function that _core.c's module exec calls:
 *   _core.c     the module, the errors and argument conversions all share
 *   clocks.c    the calling thread, a thread or process by id, /proc, methods
 *   handles.c   ThreadClock and the handle cache behind thread_times()
 *   log.c       the event log: start, stop, dump, events and their names
 *   interval.c  interval(): begin and end events around a block or a call
 *   trace.c     the trace reader
 *   tasks.c     asyncio: the CPU of each task's own steps, and the
 *               thread's run-queue wait, read once per run of fast-clock
 *               anchors
 *   spans.c     the OpenTelemetry span processor's hooks
 */
#ifndef TTPY_CORE_H
#define TTPY_CORE_H

#include <Python.h>
#include <stdint.h>
#include <sys/types.h>

#include "threadtime/cpu.h"

/* ---- _core.c: errors and conversions ---- */

/* Raises the OSError subclass Python maps errno e to, with text, naming
 * path if not NULL; returns NULL. */
PyObject *ttpy_raise_errno(int e, const char *text, PyObject *path);
/* The same for a core return code (-errno), with tt_strerror()'s text. */
PyObject *ttpy_raise_code_path(int64_t code, PyObject *path);
PyObject *ttpy_raise_code(int64_t code);
/* A non-negative ns result as an int, a negative one raised. */
PyObject *ttpy_ns_result(int64_t r);
/* A pid or tid argument: an int (or __index__, not a bool) from 0 to the
 * largest pid_t. 0 or -1 with the error set. */
int ttpy_as_id(PyObject *o, pid_t *out);
/* A struct sequence of type holding n items, whose references it takes; a
 * NULL item (a failed conversion) makes the result NULL with its error. */
PyObject *ttpy_struct_new(PyTypeObject *type, PyObject **items, Py_ssize_t n);
/* Adds type to mod under name (a new reference for the module); 0 or -1. */
int ttpy_add_type(PyObject *mod, const char *name, PyTypeObject *type);
/* The tp_dealloc of a GC heap type whose tp_clear drops every reference. */
void ttpy_gc_dealloc(PyObject *o);
/* Increases in a child of fork(): what was opened before it names the
 * parent's threads. Read with the GIL held (or atomically, without one). */
unsigned ttpy_fork_generation(void);

/* Runs code with dict locked: the GIL does it, and without a GIL (a
 * free-threaded build) a critical section on the dict. Code must not
 * release the GIL. */
#ifdef Py_GIL_DISABLED
#define TTPY_LOCKED(dict, code)           \
    do {                                  \
        Py_BEGIN_CRITICAL_SECTION(dict);  \
        code;                             \
        Py_END_CRITICAL_SECTION();        \
    } while (0)
#else
#define TTPY_LOCKED(dict, code) \
    do {                        \
        (void)(dict);           \
        code;                   \
    } while (0)
#endif

/* ---- clocks.c ---- */
int ttpy_clocks_init(PyObject *mod);
/* Times(user_ns, system_ns, total_ns), or the error of rc when it is not 0. */
PyObject *ttpy_times_result(int rc, const tt_times *t);

/* ---- handles.c ---- */
int ttpy_handles_init(PyObject *mod);

/* ---- log.c ---- */
int ttpy_log_init(PyObject *mod);
/* An event id argument: an int from 0 to 2**32-1 (not a bool), or a str,
 * which names the event (see log.c). 0 or -1 with the error set. */
int ttpy_event_id(PyObject *o, uint32_t *out);

/* ---- interval.c ---- */
int ttpy_interval_init(PyObject *mod);

/* ---- tasks.c ---- */
int ttpy_tasks_init(PyObject *mod);
/* A run-queue wait figure that is not -errno: a task that does not count
 * its wait. */
#define TTPY_WAIT_OFF (INT64_MIN + 1)
/* The calling thread's run-queue wait (schedstat's run_delay), ns, or
 * -errno, at a fast-clock read (*ns, run: tt__fast_ns_run's) just taken:
 * tt__run_wait_at's figure. first: the read is the start of an interval,
 * and *ns then takes what tt__run_wait_at read again after a read of
 * schedstat under an unbroken run (so its cost stays out of the
 * interval); else *ns is left as it was (the interval ended at it). */
int64_t ttpy_wait_at(uint64_t run, int64_t *ns, int first);
/* The TaskCoro whose step runs innermost on this thread (borrowed), or
 * NULL outside every counted step. */
PyObject *ttpy_step_owner(void);
/* A TaskCoro's id: no other TaskCoro made in this process has it, and it
 * is never 0. It names a task without keeping it alive. */
uint64_t ttpy_task_id(PyObject *coro);
/* A TaskCoro's CPU and run-queue wait so far, its step in progress on this
 * thread included. 0, or -1 with the error set (a fork child, a failed
 * clock read). *wait is -errno for a failed schedstat read, TTPY_WAIT_OFF
 * when the task does not count it. */
int ttpy_task_figures(PyObject *coro, int64_t *cpu, int64_t *wait);

/* ---- spans.c ---- */
int ttpy_spans_init(PyObject *mod);

/* ---- trace.c: the trace reader's types, and two module functions ---- */
int ttpy_trace_init(PyObject *mod);
PyObject *ttpy_trace_open(PyObject *m, PyObject *path);
PyObject *ttpy_trace_columns(PyObject *m, PyObject *data);

#endif /* TTPY_CORE_H */
