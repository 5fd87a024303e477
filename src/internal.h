/* Internal declarations shared by the core's source files (never installed). */
#ifndef TT_INTERNAL_H
#define TT_INTERNAL_H

#define TT_BUILDING_LIBRARY 1
#include "threadtime/threadtime.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "read_clock.h"

/* getenv for every variable the library reads: NULL in a setuid, setgid or
 * file-capability process (AT_SECURE), whatever its environment holds. */
const char *tt__env(const char *name);

/* Three raw reads in the order that keeps them consistent: VIRT before PROF
 * (so PROF >= VIRT) and SCHED last (so runtime covers both samples). */
static inline int tt__read_three(clockid_t virt_id, clockid_t prof_id, clockid_t sched_id, int64_t v[3])
{
    v[1] = v[2] = 0;
    v[0] = tt__read_clock(virt_id);
    if (v[0] < 0)
        return (int)v[0];
    v[1] = tt__read_clock(prof_id);
    if (v[1] < 0)
        return (int)v[1];
    v[2] = tt__read_clock(sched_id);
    return v[2] < 0 ? (int)v[2] : 0;
}

/* A floor under one figure that is promised never to go back: the largest
 * answer given so far. Each source answers the same runtime at its own
 * resolution (clockids ns; getrusage() us, rounded down; /proc whole clock
 * ticks, rounded down), so a change of source would otherwise step back by up
 * to two units of the coarser one. Lock-free, so a signal handler that
 * interrupts a raise of the same floor still completes. */
typedef _Atomic int64_t tt__floor;

/* Raises *f to v and returns the answer: max(v, *f). One compare-and-swap
 * in the usual case; on a thread-local floor its line is never shared.
 * Relaxed: the floor orders nothing but itself. */
static inline int64_t tt__floor_raise(tt__floor *f, int64_t v)
{
    int64_t cur = atomic_load_explicit(f, memory_order_relaxed);
    while (cur < v)
        if (atomic_compare_exchange_weak_explicit(f, &cur, v, memory_order_relaxed, memory_order_relaxed))
            return v;
    return cur;
}

/* The last answer of one consistent split (a thread's or a handle's),
 * updated without a lock so that readers on any thread and signal handlers
 * interrupting a reader all complete. A sequence count with two slots: seq
 * even = idle, odd = a writer is filling the other slot; the committed
 * answer is slot (seq >> 1) & 1, which no writer touches until the next
 * commit has been published. Zero-initialised = nothing answered yet. */
typedef struct tt__split {
    _Atomic uint64_t seq;
    _Atomic int64_t user_ns[2];
    _Atomic int64_t system_ns[2];
} tt__split;

/* Answers a reading of total runtime total_ns of which the source proposes
 * system_ns as system time, keeping user and system each monotonic against
 * the last answer in *s and committing the result. A reading older than
 * the last answer returns the last answer. So does a call that finds
 * another commit under way (a reader on another thread, or the very call
 * this one interrupted from a signal handler): it never waits. */
void tt__split_merge(tt__split *s, int64_t total_ns, int64_t system_ns, tt_times *out);

/* The last answer committed to *s (zeros before the first). */
void tt__split_last(tt__split *s, tt_times *out);

/* The system share of a runtime sched, proportioned by raw ticks the way
 * the kernel's cputime_adjust() does for /proc (virt <= prof raw clocks). */
int64_t tt__split_propose(int64_t virt, int64_t prof, int64_t sched);

/* tt__split_merge of the tick-proportioned share of sched. */
static inline void tt__split_scale(tt__split *s, int64_t virt, int64_t prof, int64_t sched, tt_times *out)
{
    tt__split_merge(s, sched, tt__split_propose(virt, prof, sched), out);
}

/* The kernel's own split, as /proc printed it. */
static inline void tt__times_from_procfs(const tt_procfs_stat *st, tt_times *out)
{
    out->user_ns = st->user_ns;
    out->system_ns = st->system_ns;
    out->total_ns = st->user_ns + st->system_ns;
}

/* The calling thread's tt_self_total_ns() floor (cpu.c): the fast clock
 * never answers below it. initial-exec, like every per-thread state here. */
extern __thread tt__floor tt__total_floor __attribute__((tls_model("initial-exec")));
static inline int64_t tt__self_total_floor(void)
{
    return atomic_load_explicit(&tt__total_floor, memory_order_relaxed);
}

/* ---- the fast clock (fastclock.c) ---- */

/* tt_self_fast_ns(), also saying where the answer came from: *anchor is the
 * generation of the armed anchor it was read from (a value that changes at
 * every re-arm), UINT64_MAX for a real read that armed nothing. */
int64_t tt__fast_ns(uint64_t *anchor);
/* The same at a counter value the caller has just read (the event log's
 * record time: one counter read serves both). A value older than the
 * thread's anchor (a signal handler re-armed it in between) gets a real
 * read at the time of the call. */
int64_t tt__fast_ns_at(uint64_t counter, uint64_t *anchor);
/* tt_self_fast_ns(), also saying which run of anchors answered: *run
 * stays the same across the re-arms of a thread that stayed on its CPU
 * (an anchor that expired after TT_FAST_BOUND_NS with no switch, signal
 * or migration since the run's first anchor was armed) and changes at the
 * first anchor after one; UINT64_MAX for a real read that armed nothing.
 * A figure that moves only while the thread is off its CPU (schedstat's
 * run_delay) read under one run holds for the whole run. */
int64_t tt__fast_ns_run(uint64_t *run);
/* 1 once the fast clock is decided and answers from no anchor (off, or
 * unsupported): every read is then a real one, and a caller that wants
 * only its run of anchors can skip it. 0 while undecided or on. */
int tt__fast_known_off(void);
/* The calling thread's consistent split with the fast clock's total at a
 * counter value the caller has just read (tt__fast_ns_at): the event log's
 * CPU records. The system share is proportioned by raw tick counts read
 * when the anchor was new (two clock reads per anchor; the ticks move once
 * per 4 ms, an anchor serves at most 50 us), so user + system is the fast
 * total and each part stays monotonic. 0 or -errno. */
int tt__self_split_at(uint64_t counter, tt_times *out);

/* The process's decision whether the fast clock can be used, made on a
 * thread of the caller's choosing (the JVM's binding starts one, so that no
 * Java thread spends the ~25 ms): tt__fast_decide_claim() returns 1 when it
 * took the decision on, 0 when it was taken or made already; from then on
 * every read is a real one, as while any caller decides, until the claimant
 * calls tt__fast_decide_claimed() (once, on any thread), which decides. */
int tt__fast_decide_claim(void);
void tt__fast_decide_claimed(void);

/* For the tests only: how long one anchor serves, in ns (default
 * TT_FAST_BOUND_NS). A longer span lets a test see a switch the mechanism
 * missed, which expiry would otherwise hide. Returns the previous span, or
 * -EINVAL (unsupported here, or ns <= 0). Not thread-safe. */
int64_t tt__fast_span_set(int64_t ns);

/* ---- fork (cpu.c registers the handler) ---- */

/* Bumped in every fork child: a handle opened in another generation names
 * a thread of the parent. */
extern _Atomic unsigned tt__fork_gen;
/* Resets the fast clock's state of the forking thread, in the child. */
void tt__fast_fork_child(void);
/* Resets every per-thread figure of the calling thread and moves
 * tt__fork_gen on: fork()'s atfork handler in the child, and the fast
 * clock's when it finds itself in a child that skipped that handler. */
void tt__fork_child_reset(void);

/* ---- method state and fallbacks (cpu.c) ---- */

/* 1 while thread clocks are read with clockids: one relaxed load. */
int tt__use_clockid(void);
/* Called with the error of a refused clockid read: moves the library to
 * its fallback once and for all (unless a method was forced) and returns 1
 * if the caller should now use it, 0 to return err as it is. */
int tt__fall_back(int64_t err);
/* The method the user forced, or TT_METHOD_AUTO. */
int tt__forced_method(void);
/* What a call returns when no source can answer: the clockid refusal
 * (-EPERM, -ENOSYS, ...) if one was seen, else -ENOTSUP (a forced method
 * that stopped working). */
int tt__no_source(void);
/* The caller's own thread (who = RUSAGE_THREAD) or process (RUSAGE_SELF)
 * without clockids: getrusage(), then /proc; a forced method alone. 0, or
 * -errno that never claims the caller is missing. */
int tt__own_times(int who, tt_times *out);
/* The calling thread's split as tt_self_times reads it, before the merge:
 * tt__own_times(RUSAGE_THREAD) brought up to the fast clock's precise total
 * read after it (tt_times_with_total) while clockids are the method. 0 or
 * -errno as tt__own_times. */
int tt__self_kernel_times(tt_times *out);
/* tt_procfs_read() as a split. 0 or -errno. */
int tt__procfs_times(pid_t pid, pid_t tid, tt_times *out);
/* Classifies -ESRCH from /proc for thread tid of this process (pid 0) or
 * process pid (tid 0): tt__no_source() when the task exists (so /proc is
 * what failed: not mounted), else tt__classify_missing(). */
int tt__procfs_missing(pid_t pid, pid_t tid);

/* ---- small /proc and /sys files (procfs.c): no stdio, no locale, no
 * allocation, so a signal handler may use them ---- */

/* Reads the whole file at path into buf (NUL-terminated, cap bytes with the
 * NUL). Returns its length, -EIO if it does not fit, or the open's or
 * read's -errno (-ENOENT as it is). */
int tt__read_small(const char *path, char *buf, size_t cap);
/* A decimal, optionally negative, at p: 0 and *out, -1 if there is none or
 * it does not fit 63 bits; *end is where it stops. */
int tt__parse_decimal(const char *p, const char **end, long long *out);
/* Append a decimal or a string at dst and return the new end (the caller
 * sized the buffer). */
char *tt__put_decimal(char *dst, unsigned v);
char *tt__put_str(char *dst, const char *s);

/* The scheduler's accounts of thread tid of process pid (pid 0: this
 * process) from /proc/<pid>/task/<tid>/schedstat and .../status, whatever
 * thread calls: nothing kept open, no allocation, no lock, so an exit
 * handler run from a signal handler may read its own thread this way. Reads
 * through buf, which must hold a status file (TT__STATUS_BYTES; the caller
 * says where it lives). 0, -ENOENT (no such task, or no /proc), -EIO, or
 * the open's -errno. */
#define TT__STATUS_BYTES 4096 /* a status file is ~1.5 KiB */
int tt__task_sched(pid_t pid, pid_t tid, tt_sched *out, char *buf, size_t cap);
/* The same for the calling thread, as cheaply as that allows: its
 * schedstat, and its switch counts from getrusage(RUSAGE_THREAD) rather
 * than from the ~1.5 KiB of its status file (~20 us of /proc in a short
 * process here). Returns as tt__task_sched. */
int tt__own_sched(tt_sched *out);
/* The calling thread's voluntary and involuntary switches alone, into out
 * (one getrusage); 0 or -errno. */
int tt__own_switches(tt_sched *out);
/* The calling thread's getrusage(RUSAGE_THREAD): its split into out and,
 * from the same call, its switch counts into sw (NULL: not wanted); 0 or
 * -errno. */
int tt__own_split_switches(tt_times *out, tt_sched *sw);

/* Thread tid's struct taskstats, as tt_tid_delays reads it but without its
 * checks: no look at kernel.task_delayacct (its figures are zeros while that
 * is off) and any task id. For the bench's row of the round trip alone. 0 or
 * -errno as tt_tid_delays. */
int tt__taskstats_get(pid_t tid, tt_delays *out);

/* tt_self_sched's schedstat part alone (on_cpu_ns, run_wait_ns,
 * timeslices; the switch counts left as they are): one pread of the
 * thread's kept descriptor. 0 or -errno as tt_self_sched. */
int tt__self_schedstat(tt_sched *out);

/* The calling thread's run-queue wait (schedstat's run_delay), ns, or
 * -errno (-ENOTSUP for good once schedstat proved missing), at a fast-clock
 * read just taken (*ns, and run: tt__fast_ns_run's; UINT64_MAX: no run):
 * the figure kept for that run, or else one read of schedstat. After such a
 * read under a run the fast clock is read again: if the run did not change,
 * the figure is kept for it and *ns takes that later read (so a caller
 * starting an interval keeps the read's cost out of it); otherwise *ns is
 * left as it was. Shared by tt_self_run_wait_ns and the Python extension's
 * task steps and spans, so all of a thread's readers share one kept figure. */
int64_t tt__run_wait_at(uint64_t run, int64_t *ns);

/* Classifies a tid the kernel refused: -ESRCH if no such task exists,
 * -EINVAL if it exists but is not a thread of this process. */
int tt__classify_missing(pid_t id);

#endif /* TT_INTERNAL_H */
