/* threadtime: where a thread's time went besides its CPU (Linux).
 *
 * The scheduler's own per-thread accounts (/proc/<pid>/task/<tid>/schedstat
 * and the thread's context-switch counts), and the CPU throttling of the
 * process's cgroup. docs/where-time-went.md says what each figure is, where
 * the kernel keeps it, what a read costs and what it needs.
 *
 * Errors are negative errno values, as in cpu.h (tt_strerror() has the
 * text). None of these calls is async-signal-safe: the first tt_self_sched
 * on a thread registers a thread-exit handler, and the cgroup read
 * allocates nothing but walks several files.
 */
#ifndef THREADTIME_SCHED_H
#define THREADTIME_SCHED_H

#include <stdint.h>
#include <sys/types.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One thread's scheduler accounts, each a count since the thread started.
 * Differences of two reads give an interval's figures. */
typedef struct tt_sched {
    /* Time on a CPU as the scheduler booked it (schedstat's first field):
     * a running thread's figure is as of its last tick or switch, up to a
     * tick behind tt_self_total_ns(). */
    int64_t on_cpu_ns;
    /* Time runnable but waiting for a CPU (schedstat's run_delay), time
     * throttled by a cgroup CPU quota included. Booked when the thread gets
     * a CPU: a wait under way counts once it ends. Time blocked (sleeping,
     * waiting on I/O or a lock) is not in it. */
    int64_t run_wait_ns;
    /* Times the thread was given a CPU (schedstat's pcount). */
    int64_t timeslices;
    /* Switches away because the thread blocked or yielded, and because it
     * was preempted (getrusage's ru_nvcsw and ru_nivcsw; /proc's
     * voluntary_ctxt_switches and nonvoluntary_ctxt_switches). */
    int64_t voluntary_switches;
    int64_t involuntary_switches;
} tt_sched;

/* The calling thread's accounts: one pread() of /proc/thread-self/schedstat
 * through a descriptor the thread keeps open (opened at its first call,
 * closed when the thread exits; O_CLOEXEC; a fork child closes the copy it
 * inherited at its first call and opens its own),
 * then one getrusage(RUSAGE_THREAD) for the switch counts. The two are read
 * one after the other, not as one snapshot. A program that closes every
 * descriptor it did not open (closefrom) closes this one too: a read that
 * fails or does not parse (the number reused for another file, which is
 * left alone) makes the call open the file again and read once more.
 * Returns 0, -EFAULT (out is NULL), -ENOTSUP (no /proc, or a kernel without
 * schedstat), -EMFILE/-ENFILE (no descriptor to open), -EIO. */
TT_API int tt_self_sched(tt_sched *out);

/* The same for thread tid of this process (0: the calling thread, read as
 * tt_self_sched does), from /proc/self/task/<tid>/schedstat and .../status
 * (two opens and reads, ~10x tt_self_sched). Returns 0, -EFAULT, -ESRCH (no
 * such thread, or it exited), -EINVAL (a thread of another process, or tid
 * out of range), -ENOTSUP (no /proc, or no schedstat), -EIO (unparsable).
 * A tid is reused after its thread exits: see tt_tid_total_ns. */
TT_API int tt_tid_sched(pid_t tid, tt_sched *out);

/* Delay accounting (the kernel's per-task I/O, swap-in, reclaim,
 * thrashing and IRQ delays, read through taskstats) is kept only while the
 * sysctl kernel.task_delayacct is 1 (or the kernel was booted with
 * "delayacct"); while it is 0 the kernel reports zeros that mean "not
 * counted", so threadtime reports no delay figures. This says which, as
 * one static line for people: "on", "off: sysctl -w kernel.task_delayacct=1
 * (root) turns it on; tasks count from then", or "absent: this kernel has
 * no delay accounting (no /proc/sys/kernel/task_delayacct)". One small file
 * read. */
TT_API const char *tt_delay_accounting(void);

/* The CPU controller's figures for the cgroup this process is in. */
typedef struct tt_cgroup_cpu {
    int version;               /* 1 (cgroup v1 "cpu" hierarchy) or 2 */
    int64_t periods;           /* quota periods in which the group was runnable (nr_periods) */
    int64_t throttled_periods; /* of those, the ones in which it ran out of quota (nr_throttled) */
    int64_t throttled_ns;      /* time its threads were held back for quota (v1 throttled_time,
                                * v2 throttled_usec x 1000) */
    int64_t quota_us;          /* CPU time allowed per period; -1: no quota */
    int64_t period_us;         /* the period */
} tt_cgroup_cpu;

/* Reads the cgroup of the calling process from /proc/self/cgroup, finds its
 * directory through /proc/self/mountinfo (the v1 hierarchy with the "cpu"
 * controller, else the v2 one) and reads cpu.stat and the quota there
 * (v1 cpu.cfs_quota_us and cpu.cfs_period_us; v2 cpu.max). A group with no
 * quota reads 0 periods. Needs no privilege. Returns 0, -EFAULT, -ENOENT (no
 * CPU controller mounted where this process can see it), -EIO (a file
 * unparsable), or the open's own error (-EACCES). */
TT_API int tt_cgroup_cpu_read(tt_cgroup_cpu *out);

#ifdef __cplusplus
}
#endif

#endif /* THREADTIME_SCHED_H */
