/* What a trace means, derived once for every reader (the CLI's dump and
 * the Python extension): which OS thread and which virtual thread each
 * event belongs to, how begins pair with ends, and whose CPU a pair
 * measured. docs/trace-format.md, "Ownership and pairing", states the
 * rules; this is their only implementation. */
#ifndef TT_TRACE_MODEL_H
#define TT_TRACE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "event_internal.h"

/* "tsc", "cntvct" or "monotonic_raw". */
const char *tt__trace_source_name(unsigned source);

static inline int tt__kind_is_marker(unsigned kind) { return kind == TT__KIND_MOUNT || kind == TT__KIND_UNMOUNT; }
static inline int tt__kind_is_cpu(unsigned kind) { return kind == TT__KIND_BEGIN_CPU || kind == TT__KIND_END_CPU; }
static inline int tt__kind_is_begin(unsigned kind) { return kind == TT__KIND_BEGIN || kind == TT__KIND_BEGIN_CPU; }
static inline int tt__kind_is_measured(unsigned kind)
{
    return kind == TT__KIND_END_CPU_TOTAL || kind == TT__KIND_END_MOUNTED;
}
static inline int tt__kind_is_end(unsigned kind)
{
    return kind == TT__KIND_END || kind == TT__KIND_END_CPU || tt__kind_is_measured(kind);
}
/* A CPU stamp was read (a begin/end_cpu whose clock read failed stores a
 * negative value). */
static inline int tt__event_has_cpu(const tt__trace_event *ev)
{
    return tt__kind_is_cpu(ev->kind) && (int64_t)ev->p0 >= 0;
}

/* The figure of an end_cpu_total or end_mounted, if it has one (all ones:
 * its thread's account could not be read). It is the call's own wherever
 * its begin ran, so a pair takes it from its end alone. */
static inline int tt__event_measured(const tt__trace_event *ev, int64_t *ns)
{
    if (!tt__kind_is_measured(ev->kind) || (int64_t)ev->p0 < 0)
        return 0;
    *ns = (int64_t)ev->p0;
    return 1;
}

/* a - b wrapping instead of overflowing: a damaged file can hold any time. */
static inline int64_t tt__diff_ns(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
/* An event's time in ns since the trace's start anchor. */
static inline int64_t tt__trace_rebase(const tt__trace *t, const tt__trace_event *ev)
{
    return tt__diff_ns(ev->ns, t->h.anchors[0].mono_ns);
}

/* ---- ownership ---- */

/* Walks one OS thread's records in order. A mount(v) marker makes v the
 * owner of what follows until the next marker; an unmount, or no marker
 * yet, makes it the thread's own. */
typedef struct tt__owner_walk {
    uint64_t current; /* 0: the thread itself */
    uint64_t markers; /* markers seen so far */
} tt__owner_walk;

/* Steps over ev. Returns the virtual thread that owns ev for pairing: 0
 * for the thread itself and for every marker (a marker is its carrier's
 * event). *markers: the markers up to and including ev. */
static inline uint64_t tt__owner_step(tt__owner_walk *w, const tt__trace_event *ev, uint64_t *markers)
{
    if (ev->kind == TT__KIND_MOUNT) {
        w->current = ev->p0;
        w->markers++;
    } else if (ev->kind == TT__KIND_UNMOUNT) {
        w->current = 0;
        w->markers++;
    }
    *markers = w->markers;
    return tt__kind_is_marker(ev->kind) ? 0 : w->current;
}

/* The virtual thread an event is shown under: a marker's own, else its
 * owner (0: none). */
static inline uint64_t tt__shown_vthread(uint64_t owner, const tt__trace_event *ev)
{
    return tt__kind_is_marker(ev->kind) ? ev->p0 : owner;
}

/* The same ownership as position ranges, for random access: records
 * [from, to) of a thread are shown under virtual thread v. */
typedef struct tt__vwindow {
    uint64_t from, to, v;
} tt__vwindow;

/* The windows of th, by position. Returns 0 or -ENOMEM; *out NULL if none. */
int tt__trace_windows(const tt__trace *t, const tt__trace_thread *th, tt__vwindow **out, size_t *n);
/* The virtual thread record k is shown under (0: none). */
uint64_t tt__window_of(const tt__vwindow *w, size_t n, uint64_t k);

/* ---- tracks and pairing ---- */

/* A track: an OS thread's own events (vthread 0; markers included), or one
 * virtual thread's events from every carrier in time order. */
typedef struct tt__track {
    uint32_t thread;  /* the OS thread (index) of an own track */
    uint64_t vthread; /* 0 for an own track */
    uint32_t ordinal; /* virtual threads: 0, 1, ... in ascending id order */
} tt__track;

/* A track's name (len bytes, not NUL-terminated): an own track's thread
 * name (tt__trace_thread_name), a virtual thread's name from the trace's
 * thread-name table, or NULL for a virtual thread nobody named. */
const char *tt__track_name(const tt__trace *t, const tt__track *tr, size_t *len);

/* One event on a track, with where it was recorded. */
typedef struct tt__step {
    tt__trace_event ev;
    int64_t ns;       /* rebased: ns since the start anchor */
    uint32_t thread;  /* the OS thread (index) that recorded it */
    uint64_t k;       /* its position in that thread */
    uint64_t markers; /* that thread's markers up to it */
} tt__step;

/* The CPU of a pair, if it is the interval's own: both ends CPU kinds with
 * stamps, on one OS thread, with no marker between them. */
int tt__pair_cpu(const tt__step *begin, const tt__step *end, int64_t *user, int64_t *sys);

/* The run-queue wait of a CPU pair, where the log recorded it
 * (wait_on_cpu_intervals): the run_wait record of the pair's id right after
 * its begin and the one right before its end, on one OS thread with no
 * marker between (else another record came between, a signal handler's, and
 * the pair shows no wait). */
int tt__pair_wait(const tt__trace *t, const tt__step *begin, const tt__step *end, int64_t *ns);

/* Any callback but event may be NULL: nothing to do there. */
typedef struct tt__walk_ops {
    void (*track_start)(void *ctx, const tt__track *tr);
    /* Every event of the track in order. b: the begin that ev closes (an
     * end that paired), else NULL. */
    void (*event)(void *ctx, const tt__track *tr, const tt__step *ev, const tt__step *b);
    /* After the track's last event... */
    void (*track_end)(void *ctx, const tt__track *tr);
    /* ...each begin still open, oldest first. */
    void (*open)(void *ctx, const tt__track *tr, const tt__step *b);
} tt__walk_ops;

/* Every own track (thread order), then every virtual thread's track
 * (ascending id), pairing each end with the latest open begin of its id on
 * the same track. Linear in the events (plus a sort of the virtual
 * threads' events). Returns 0 or -ENOMEM. */
int tt__trace_walk(const tt__trace *t, const tt__walk_ops *ops, void *ctx);

/* The same pairing over one track given as an array (events a caller
 * picked, such as Python's pair_intervals() on a list of events): ops see
 * it as one track (vthread 0). Returns 0 or -ENOMEM. */
int tt__pair_track(const tt__step *steps, size_t n, const tt__walk_ops *ops, void *ctx);

#endif /* TT_TRACE_MODEL_H */
