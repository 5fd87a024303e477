/* Internal declarations of the event log: clock calibration and the trace
 * reader (used by the CLI, the tests and the fuzz target). */
#ifndef TT_EVENT_INTERNAL_H
#define TT_EVENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* ---- time (tsc_calib.c) ---- */

/* Reads the three clocks as close together as this machine allows: the
 * tightest of a few (monotonic, counter, monotonic) brackets. With
 * use_counter 0 the "counter" is CLOCK_MONOTONIC_RAW itself. Returns 0 or
 * -errno. */
int tt__anchor_take(tt__anchor *a, int use_counter);

/* Measures the counter's frequency against CLOCK_MONOTONIC_RAW (~25 ms,
 * once per process; later calls return the first answer) and decides
 * whether it can stamp events. Returns 1 if it earned trust, 0 if not (no
 * invariance bit, or two windows disagree); *hz is the measured frequency
 * either way, 0 when there is no usable counter at all. */
int tt__counter_calibrated(double *hz);
/* The same, without waiting for a calibration another caller is running:
 * -EAGAIN then (the fast clock's first use may be in a signal handler). */
int tt__counter_calibrated_nowait(double *hz);

/* ---- reading trace files (trace_read.c) ---- */

/* One decoded event. */
typedef struct tt__trace_event {
    uint64_t index;   /* position in its thread's ring since the thread took it */
    uint64_t time;    /* raw w0 */
    int64_t ns;       /* CLOCK_MONOTONIC_RAW ns */
    uint32_t id;
    unsigned kind;    /* TT__KIND_* */
    uint64_t p0, p1;  /* payload words */
    const char *text; /* TEXT and LITERAL kinds; not NUL-terminated */
    size_t text_len;
    int thrown;       /* END and END_CPU of a probe whose call exited by an exception (1.1) */
} tt__trace_event;

typedef struct tt__trace_thread {
    uint32_t tid;
    uint32_t state;       /* TT__RING_LIVE or TT__RING_EXITED */
    char name[TT_EVENT_TEXT_MAX + 1];
    uint64_t first, head; /* record indexes present: [first, head) */
    uint64_t overwritten; /* records lost to the ring wrapping */
    uint64_t mask;
    const unsigned char *body;
    uint64_t stored;      /* records present in the body (may be cut short) */
    uint64_t damaged;     /* records that do not decode between two that do (dropped) */
    const char *full_name; /* the thread-name table's name of tid (1.2), if name agrees; else NULL */
    uint32_t full_len;
} tt__trace_thread;

/* One entry of a name table; text points into the file, valid UTF-8. */
typedef struct tt__trace_name {
    uint64_t id;     /* an event id (< 2^32), a tid or a virtual thread's id */
    unsigned ns;     /* TT__NAMES_*: what id is */
    uint32_t len;
    const char *text;
} tt__trace_name;

typedef struct tt__trace {
    tt__trace_header h;
    const unsigned char *buf;
    size_t len;
    tt__trace_thread *threads;
    uint32_t nthreads;
    tt__trace_name *names;      /* event names, sorted by id, each id once */
    uint32_t nnames;
    tt__trace_name *tnames;     /* thread names (1.2), sorted by namespace and id, each once */
    uint32_t ntnames;
    uint32_t nvnames;           /* the virtual threads' among them (they come last) */
    tt__summary_entry *summary; /* sorted by id, each id once */
    uint32_t nsummary;
    int has_summary;            /* the file has a usable summary (maybe empty) */
    uint64_t summary_overflow;  /* calls the summary could not hold (ids beyond a thread's table) */
    int damaged;          /* 1 if error[] says what is missing */
    char error[256];
} tt__trace;

/* Parses buf (kept, not copied). Returns 0 (check t->damaged: the parts
 * that are intact are available), -EINVAL if nothing is usable (error[]
 * says why), or -ENOMEM. Close with tt__trace_close() either way. */
int tt__trace_open(tt__trace *t, const void *buf, size_t len);
void tt__trace_close(tt__trace *t);

/* Decodes record k (0 <= k < head - first) of th. Returns 1, or 0 if that
 * record is not there: never committed, overwritten, or cut off. */
int tt__trace_event_at(const tt__trace *t, const tt__trace_thread *th, uint64_t k,
                       tt__trace_event *ev);

/* The place of id in t->names, or -1. */
int32_t tt__trace_name_index(const tt__trace *t, uint32_t id);
/* The name of id (len bytes, not NUL-terminated), or NULL. */
const char *tt__trace_name_of(const tt__trace *t, uint32_t id, size_t *len);

/* What a reader calls th: its whole name from the thread-name table, else
 * the name in its section (kernel bytes, maybe not UTF-8). len bytes, not
 * NUL-terminated. */
const char *tt__trace_thread_name(const tt__trace_thread *th, size_t *len);
/* The virtual threads' names, by id (*n of them; NULL when none). */
const tt__trace_name *tt__trace_vthread_names(const tt__trace *t, uint32_t *n);
/* The name of virtual thread v (len bytes, not NUL-terminated), or NULL. */
const char *tt__trace_vthread_name(const tt__trace *t, uint64_t v, size_t *len);

/* A duration in time-word units (a summary's total or max) in ns. */
int64_t tt__trace_dur_ns(const tt__trace *t, uint64_t ticks);

/* w0 of a record to CLOCK_MONOTONIC_RAW ns: interpolated between the two
 * anchors when the file has both, else extrapolated with counter_hz. */
int64_t tt__trace_ns(const tt__trace *t, uint64_t time);

/* 1 if the n bytes at s are well-formed UTF-8 (no overlong forms, no
 * surrogates, nothing past U+10FFFF): names are checked when they are set
 * and again when a trace is read. */
int tt__utf8_valid(const char *s, size_t n);

/* Name of a record kind ("instant", "text", ...), or NULL. */
const char *tt__trace_kind_name(unsigned kind);

#endif /* TT_EVENT_INTERNAL_H */
