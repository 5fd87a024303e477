/* threadtime: CPU clocks of threads and processes (Linux).
 *
 * Three families of answers, named so they are not confused:
 *
 *  - *_total_ns    Precise CPU time (the scheduler's runtime, ns resolution).
 *                  The same number CLOCK_THREAD_CPUTIME_ID gives.
 *  - *_raw_ns      Tick-sampled user time (VIRT) and user+system (PROF),
 *                  read raw: the kernel credits a whole tick (4 ms at HZ=250)
 *                  to whatever mode the thread was in when the tick fired. Raw
 *                  user time can exceed the precise total, and raw PROF can be
 *                  far above or below it. Under load they are biased, not
 *                  just coarse: a thread that makes system calls often (a
 *                  clock read every few us) is preempted between ticks and
 *                  the tick rarely finds it running. 300 ms of pure user CPU
 *                  read 176-261 ms VIRT beside one busy loop per CPU and
 *                  56-67 ms beside 1.5, where getrusage() said 282-296 ms.
 *                  Cheapest; good for sampling ratios of a quiet run.
 *  - tt_times      A consistent split: user_ns + system_ns == total_ns
 *                  exactly, user and system each never decrease from one read
 *                  to the next (per thread, per handle), and user <= total.
 *                  The total is the precise total at the time of the call
 *                  (never below a CLOCK_THREAD_CPUTIME_ID read taken before
 *                  the call; never above one taken after it, plus
 *                  TT_FAST_BOUND_NS where it comes from tt_self_fast_ns), and
 *                  it is divided in the proportion /proc and getrusage()
 *                  report. Those two give the runtime as of the thread's last
 *                  tick or context switch, up to a tick (4 ms at HZ=250)
 *                  behind; the split does not lag them. Only without any
 *                  CPU clockid (a seccomp filter refuses them, or
 *                  tt_method_set forced getrusage or /proc) is the total
 *                  that source's own, lag included.
 *
 * Every call that returns int64_t returns a value >= 0 on success and a
 * negative errno on failure (see tt_strerror()). Errors common to all:
 *   -ESRCH   the thread or process does not exist (or has exited);
 *   -EINVAL  the tid names a thread of another process, or an argument is
 *            out of range;
 *   -EPERM / -ENOSYS (or -EACCES)  CPU clockids are refused (a seccomp
 *            filter, an old kernel) and no fallback can answer for this
 *            thread or process: /proc is not mounted (the calling thread and
 *            its own process still answer, through getrusage()). The code is
 *            the refusal's own. Never said of a task that is missing.
 *   -ENOTSUP a forced method (tt_method_set) that no longer works here.
 *
 * Monotonic across a change of method. When clockids are refused mid-run
 * (a sandbox installs its filter after start-up) or tt_method_set() changes
 * the method, the source changes: clockids give ns, getrusage() whole us
 * and /proc whole clock ticks (10 ms), each rounded down, and both lag a
 * running thread by up to a tick. So each figure below keeps a floor, the
 * largest answer it gave, and never answers less: after a change to a
 * coarser source it holds still until that source catches up (up to two of
 * its units). The figures with that promise:
 *   - tt_self_total_ns, tt_self_user_raw_ns, tt_self_prof_raw_ns,
 *     tt_tid_*(0), tt_self_times: per calling thread;
 *   - tt_process_total_ns(0), tt_process_user_raw_ns(0),
 *     tt_process_prof_raw_ns(0): per calling thread (a floor shared by all
 *     threads would put one contended cache line on every read);
 *   - tt_thread_total_ns, tt_thread_user_raw_ns, tt_thread_times: per
 *     handle, whichever threads read it.
 * Calls naming a tid or another pid keep no state: each answer is the
 * source's own, monotonic while the method stays. Use a handle where that
 * matters. tt_self_system_raw_ns is not monotonic at all (see there), and
 * a raw figure read through a fallback is the scaled figure (getrusage()
 * and /proc have no raw ticks).
 *
 * Async-signal-safe (no lock, no allocation; callable from a signal handler
 * that interrupted any of them, on the same thread and handle): every
 * tt_self_* (tt_self_fast_ns included), tt_fast_clock, tt_fast_clock_name,
 * tt_tid_*, tt_thread_total_ns, tt_thread_user_raw_ns,
 * tt_thread_times, tt_thread_tid, every tt_process_*, tt_times_with_total,
 * tt_make_clockid,
 * tt_clock_ns, tt_getrusage_thread, tt_procfs_read and tt_method_name. A
 * handler must not close a handle it reads, and like any system call these
 * may change errno: save and restore it in the handler. Not
 * async-signal-safe: tt_thread_open, tt_thread_close (they allocate),
 * tt_method_set, tt_method_active and tt_strerror (strerror() may
 * translate); call them from normal code.
 *
 * Cost on the reference machine (KVM guest, see docs/benchmarks.md):
 * one system call (~300-650 ns) for every clockid read; ~10 us for /proc;
 * tt_self_fast_ns() about one cycle-counter read (~10 ns) while the thread
 * stays on its CPU (docs/fast-clock.md).
 *
 * fork: in the child, every figure the forking thread kept (floors, splits,
 * the fast clock's anchor) starts again from the child's own clock, and a
 * tt_thread handle opened before the fork answers -EINVAL for every read
 * (it names a thread of the parent). fork() does this in its atfork
 * handler; after _Fork() or a raw fork-like clone(), which run none, the
 * first tt_self_fast_ns() that is not answered from the counter does it.
 * A vfork() child may call nothing of this library (POSIX allows it _exit
 * and exec only): see docs/fast-clock.md for what happens if it does.
 */
#ifndef THREADTIME_CPU_H
#define THREADTIME_CPU_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A consistent user/system split; see the comment at the top. */
typedef struct tt_times {
    int64_t user_ns;
    int64_t system_ns;
    int64_t total_ns; /* == user_ns + system_ns, always */
} tt_times;

/* The kernel's three CPU clocks. The values are the kernel's own. */
typedef enum tt_clock {
    TT_CLOCK_PROF = 0,  /* user + system, tick-sampled */
    TT_CLOCK_VIRT = 1,  /* user only, tick-sampled */
    TT_CLOCK_SCHED = 2, /* precise runtime in ns */
} tt_clock;

/* How the library reads CPU time. */
typedef enum tt_method {
    TT_METHOD_AUTO = 0,      /* the cheapest that works here (chosen at first use) */
    TT_METHOD_CLOCKID = 1,   /* clock_gettime() on kernel CPU clockids: 1 syscall */
    TT_METHOD_GETRUSAGE = 2, /* getrusage(): caller thread / own process only */
    TT_METHOD_PROCFS = 3,    /* parse /proc/<pid>/task/<tid>/stat: ~10 us */
} tt_method;

/* ---- the calling thread (the kernel's "pid 0 = caller" fast path) ---- */

/* The tt_self_ calls return ns, or -EPERM/-ENOSYS when clockids are refused
 * and neither getrusage() nor /proc answers (see the top); -ENOTSUP when a
 * forced method stopped working. Monotonic per calling thread, across
 * changes of method (except tt_self_system_raw_ns). */

/* Precise CPU time of the calling thread, ns. */
TT_API int64_t tt_self_total_ns(void);
/* Precise CPU time of the calling thread, ns: the same clock as
 * tt_self_total_ns() (CLOCK_THREAD_CPUTIME_ID), answered without a system
 * call while the kernel's rseq area shows this thread has not been switched
 * out since the last real read: that read plus the cycle counter's advance
 * (~10-25 ns, about one counter read). Otherwise one real read, which
 * re-arms. One anchor serves at most TT_FAST_BOUND_NS (50 us) of counter
 * time, so reads farther apart than that are real reads.
 *   - Monotonic per thread (also across tt_fast_clock_set()).
 *   - Never below a real read of the thread's clock taken before it
 *     (tt_self_total_ns(), clock_gettime(CLOCK_THREAD_CPUTIME_ID), any
 *     caller's): the counter runs at least as fast as a running thread's
 *     clock, and each anchor's counter value precedes its real read.
 *   - Never above a real read taken after it plus TT_FAST_BOUND_NS. In
 *     practice far closer: the counter also runs while the CPU serves an
 *     interrupt or the hypervisor runs someone else (steal), which a kernel
 *     that accounts those apart leaves out of the thread's clock.
 *   - Time the thread spent switched out (blocked, preempted, migrated,
 *     in a signal handler's delivery) is never counted: the kernel clears
 *     the field first, and the next read is a real one.
 * The first call in a process takes ~25 ms (the counter's calibration, the
 * one tt_log_start pays) and a short sleep (what this kernel does with a
 * blocked thread's rseq field). Async-signal-safe. Errors as
 * tt_self_total_ns(). See docs/fast-clock.md. */
TT_API int64_t tt_self_fast_ns(void);

/* How far tt_self_fast_ns() may run ahead of a real read taken after it:
 * the counter time one anchor serves, 50 us. So an interval of two fast
 * reads is within this of the real interval around it and of any real
 * interval inside it, whatever steal or interrupt time the counter counted
 * and the kernel left out (docs/fast-clock.md). The price: a thread that
 * runs 50 us without being switched out makes one real read (~0.5 us) at
 * its next read. */
#define TT_FAST_BOUND_NS INT64_C(50000)
/* How far an answer may exceed the thread's true CPU time when the counter
 * and the kernel agree (no interrupt or steal time the kernel leaves out):
 * the anchor's counter value is read just before its real read, and an
 * anchoring call longer than this is not used. So an interval of two fast
 * reads is at most this much longer than the real interval around it. */
#define TT_FAST_EXCESS_NS INT64_C(5000)

/* Which mechanism tt_self_fast_ns() uses in this process. */
enum {
    TT_FAST_SYSCALL = 0, /* every read is a real read (off, or unsupported here) */
    TT_FAST_RSEQ = 1,    /* the cycle counter while rseq shows no switch */
};
/* TT_FAST_SYSCALL or TT_FAST_RSEQ. The first call decides (see
 * tt_self_fast_ns). A thread whose own rseq area cannot be used (another
 * signature, an area glibc did not register) reads the real clock while
 * this still says TT_FAST_RSEQ. */
TT_API int tt_fast_clock(void);
/* One line for people: "rseq+tsc" (or "rseq+cntvct"), or "syscall: " and
 * the reason, e.g. "syscall: off (THREADTIME_FAST_CLOCK=0)", "syscall: no
 * rseq area (glibc < 2.35 or glibc.pthread.rseq=0)", "syscall: this kernel
 * keeps rseq_cs set across a blocking call (Linux 6.19+)". Static text.
 * `threadtime bench` prints it above its table. */
TT_API const char *tt_fast_clock_name(void);
/* Turns the fast clock off (0) or back on (1) for the whole process; the
 * bindings expose it as an option. Env: THREADTIME_FAST_CLOCK=0 turns it
 * off at start (read with secure_getenv: ignored in setuid programs),
 * THREADTIME_FAST_CLOCK=1 leaves it on; another value turns it off and the
 * name says why. THREADTIME_RSEQ=register (also read once, at load) lets
 * each thread register an rseq area of the library's own where glibc
 * registers none (before 2.35, or glibc.pthread.rseq=0); a thread with a
 * registration keeps it (docs/fast-clock.md says what that risks). Returns
 * 0, -EINVAL (on is neither 0 nor 1), -ENOTSUP (1, but it cannot work here:
 * tt_fast_clock_name() says why; it stays off). */
TT_API int tt_fast_clock_set(int on);

/* Raw, tick-sampled user time of the calling thread (VIRT clock), ns. */
TT_API int64_t tt_self_user_raw_ns(void);
/* Raw, tick-sampled system time: PROF - VIRT, read in that order so the
 * difference is never negative (two system calls). Not monotonic: a user
 * tick that lands between the two reads counts as system time in that
 * answer and not in the next. Use tt_self_times() for a system time that
 * never goes back. */
TT_API int64_t tt_self_system_raw_ns(void);
/* Raw, tick-sampled user + system of the calling thread (PROF clock), ns. */
TT_API int64_t tt_self_prof_raw_ns(void);

/* Consistent split for the calling thread. With the default method the
 * total is tt_self_fast_ns(), divided in the proportion of the kernel's
 * split from getrusage(RUSAGE_THREAD) (tt_times_with_total). That
 * getrusage() is read again whenever the fast clock re-anchors (after a
 * switch, and at least every TT_FAST_BOUND_NS of CPU), so each part is at
 * most one tick plus TT_FAST_BOUND_NS below what getrusage() would say, and
 * a call costs the fast read and some arithmetic while the anchor holds
 * (~0.2 x one getrusage() here), getrusage() and the fast read when it
 * re-anchors, and getrusage() plus one clock read (~2.5 x) on every call
 * where the fast clock is off. The first call in a process pays the fast
 * clock's start (~25 ms, see tt_self_fast_ns). With
 * TT_METHOD_CLOCKID it is three clock reads scaled here; with
 * TT_METHOD_GETRUSAGE or TT_METHOD_PROCFS that source's split alone. Each
 * part monotonic per thread across changes of method. Returns 0, -EFAULT
 * (out is NULL), -EPERM/-ENOSYS (nothing answers), -ENOTSUP. */
TT_API int tt_self_times(tt_times *out);

/* Brings a split that lags the thread's (or process's) runtime up to a
 * precise total read after it: kernel is a split the kernel made as of a
 * tick or a context switch (getrusage(), a /proc stat line, wait4()),
 * total_ns the precise CPU time read after it (tt_self_total_ns,
 * CLOCK_THREAD_CPUTIME_ID, tt_self_fast_ns, CLOCK_PROCESS_CPUTIME_ID). The
 * answer's total is max(total_ns, kernel's user + system), divided in the
 * kernel's proportion (all user when the kernel's split is 0), so neither
 * part is below the kernel's. It keeps no state: merging answers into one
 * monotonic sequence is the caller's (tt_self_times does). out may be
 * kernel. Returns 0, -EFAULT (NULL), -EINVAL (a negative figure). */
TT_API int tt_times_with_total(const tt_times *kernel, int64_t total_ns, tt_times *out);

/* ---- another thread of this process, by kernel tid ---- */

/* Same meaning as the tt_self_ calls; tid 0 means the calling thread, and
 * so does the caller's own tid once clockids are refused (then answered
 * through getrusage()). Returns ns, or -ESRCH: no such thread (never
 * existed, or exited); -EINVAL: the tid is a thread of another process or
 * out of range; -EPERM/-ENOSYS: clockids refused and /proc not mounted;
 * -ENOTSUP. No floor (no state per tid): monotonic while the method stays.
 * A tid is reused by the kernel after its thread exits: a tid taken from a
 * thread that has since exited can read an unrelated new thread. Use a
 * tt_thread handle opened on the thread itself when that matters. */
TT_API int64_t tt_tid_total_ns(pid_t tid);
TT_API int64_t tt_tid_user_raw_ns(pid_t tid);
TT_API int64_t tt_tid_system_raw_ns(pid_t tid);
TT_API int64_t tt_tid_prof_raw_ns(pid_t tid);

/* ---- thread handles: consistent split and exit detection ---- */

typedef struct tt_thread tt_thread;

/* Opens a handle on thread tid of this process (0 = the calling thread).
 * A handle opened by a thread on itself (tid 0) notices that thread's exit:
 * afterwards every read returns -ESRCH, even if the kernel has reused the
 * tid; its split (tt_thread_times) starts from the kernel's own, so it never
 * reads below a figure /proc or getrusage() gave before the handle existed.
 * A handle opened on another tid checks that the thread exists now and
 * carries the tid-reuse caveat above.
 * Returns 0, -EFAULT, -ESRCH, -EINVAL, -ENOMEM, or -EPERM/-ENOSYS/-ENOTSUP
 * (another tid that nothing can read: clockids refused, /proc missing). */
TT_API int tt_thread_open(pid_t tid, tt_thread **out);
/* Closes a handle; NULL is accepted. Safe after the thread has exited. */
TT_API void tt_thread_close(tt_thread *h);
/* The kernel tid the handle names, or -EFAULT. */
TT_API pid_t tt_thread_tid(const tt_thread *h);
/* Handle reads take no lock: any thread, and a signal handler interrupting
 * a read of the same handle, may call them concurrently. Each figure is
 * monotonic per handle across changes of method. Without clockids the
 * handle's own thread reads itself through getrusage(), others through
 * /proc. Errors: -EFAULT (NULL), -ESRCH (the thread exited), -EINVAL (the
 * tid now names a thread of another process), -EPERM/-ENOSYS (clockids
 * refused and /proc missing, read from another thread), -ENOTSUP. */

/* The thread's precise CPU time, ns (or -errno). */
TT_API int64_t tt_thread_total_ns(tt_thread *h);
/* The thread's raw tick-sampled user time, ns (or -errno). */
TT_API int64_t tt_thread_user_raw_ns(tt_thread *h);
/* Consistent split: from another thread, three clock reads scaled the way
 * the kernel scales /proc figures (ns resolution); by the thread that
 * opened the handle on itself, as tt_self_times reads it (the fast clock's
 * total in getrusage()'s proportion), both merged into one sequence. A read that overlaps another read of the
 * same handle (another thread's, or the one a signal handler interrupted)
 * may return that handle's previous answer rather than wait. Returns 0 or
 * one of the errors above. */
TT_API int tt_thread_times(tt_thread *h, tt_times *out);

/* ---- processes ---- */

/* pid 0 = this process. Any process may be named (the kernel allows it).
 * Returns ns, or -ESRCH (no such process), -EINVAL (pid out of range, or a
 * thread that does not lead its process), -EPERM/-ENOSYS (clockids refused
 * and /proc missing; never for pid 0, which getrusage() answers). pid 0 is
 * monotonic per calling thread across changes of method; other pids keep
 * no state. */
TT_API int64_t tt_process_total_ns(pid_t pid);
TT_API int64_t tt_process_user_raw_ns(pid_t pid);
TT_API int64_t tt_process_prof_raw_ns(pid_t pid);
/* Consistent split for a process: this process through getrusage(RUSAGE_SELF)
 * brought up to CLOCK_PROCESS_CPUTIME_ID read after it (tt_times_with_total;
 * two system calls, each part monotonic per calling thread), another process
 * through its /proc stat line (the kernel's own split, clock-tick resolution,
 * as of each thread's last tick). The kernel's process clock itself brings
 * only the calling thread up to date: another thread of the process running
 * at the time counts as of its last tick, in both. Returns 0, -EFAULT,
 * -EINVAL (pid out of range), -ESRCH, -EPERM/-ENOSYS (/proc missing), -EIO
 * (unparsable). */
TT_API int tt_process_times(pid_t pid, tt_times *out);

/* ---- raw clock ids ---- */

/* Builds the kernel clockid for one CPU clock of a thread (thread != 0) or a
 * process (thread == 0). id 0 means the caller: the kernel resolves it without
 * a pid lookup. Returns 0 and stores the clockid, -EFAULT or -EINVAL. */
TT_API int tt_make_clockid(pid_t id, int thread, tt_clock clock, clockid_t *out);
/* Reads one clock raw, never through a fallback: thread != 0 for a thread
 * clock. ns, or -EINVAL, -ESRCH, or the refusal (-EPERM, -ENOSYS). */
TT_API int64_t tt_clock_ns(pid_t id, int thread, tt_clock clock);

/* ---- the comparison readers ---- */

/* getrusage(RUSAGE_THREAD): the calling thread, kernel-scaled, us.
 * Returns 0, -EFAULT, or getrusage's own error. */
TT_API int tt_getrusage_thread(tt_times *out);

/* One parsed /proc stat line. */
typedef struct tt_procfs_stat {
    int64_t user_ns;   /* utime, clock ticks converted to ns */
    int64_t system_ns; /* stime, likewise */
    char state;        /* 'R', 'S', ... */
    char name[64];     /* comm, as the kernel printed it (may hold ')' or '\n') */
} tt_procfs_stat;

/* Reads /proc/<pid>/task/<tid>/stat (tid 0: /proc/<pid>/stat; pid 0: this
 * process). Correct for any thread name, including ones holding ")", spaces,
 * digits and newlines. ~10 us. Returns 0, -EFAULT, -ESRCH, -EIO (unparsable). */
TT_API int tt_procfs_read(pid_t pid, pid_t tid, tt_procfs_stat *out);

/* ---- method selection ---- */

/* Forces a method for every later call (TT_METHOD_AUTO: back to detection).
 * GETRUSAGE answers the calling thread only; other threads are then read
 * through /proc. Process clocks always try clockids first. Figures with a
 * floor (see the top) stay monotonic across the change. Returns 0, -EINVAL
 * (unknown), or -ENOTSUP (the method does not work here; nothing is
 * changed). */
TT_API int tt_method_set(tt_method m);
/* The method thread clocks would be read with now (never TT_METHOD_AUTO):
 * the forced one, else CLOCKID after a test read that the kernel accepted
 * (one system call, so a filter installed since the last read counts),
 * else PROCFS, or GETRUSAGE when /proc is missing too (then only the
 * calling thread and its process answer). Under clockid refusal the
 * calling thread's own clocks use getrusage() either way: it is cheaper. */
TT_API tt_method tt_method_active(void);
/* "auto", "clockid", "getrusage", "procfs"; NULL for an unknown value. */
TT_API const char *tt_method_name(tt_method m);

#ifdef __cplusplus
}
#endif

#endif /* THREADTIME_CPU_H */
