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

/* The calling thread's run-queue wait alone (tt_sched's run_wait_ns), ns,
 * or -errno as tt_self_sched: for figures taken often, such as at a span's
 * start and end. The wait grows only while the thread is off its CPU, which
 * ends the fast clock's run of anchors (docs/fast-clock.md): a figure read
 * under a run is kept and answered again, with no system call, for as long
 * as the thread stays on its CPU. Otherwise one pread of the descriptor
 * tt_self_sched keeps, and no getrusage. Where the fast clock reads from
 * no anchor (turned off, or unsupported), every call is that pread. */
TT_API int64_t tt_self_run_wait_ns(void);

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

/* One kind of delay: how many times the thread was held up, and for how
 * long in all (ns), since it started (or since delay accounting was turned
 * on). Both are -1 where the kernel's taskstats version does not keep this
 * kind. */
typedef struct tt_delay {
    int64_t count;
    int64_t ns;
} tt_delay;

/* A thread's delay-accounting figures, from the kernel's struct taskstats
 * (<linux/taskstats.h>; the taskstats version that added each is in
 * brackets). A wait is booked when it ends. */
typedef struct tt_delays {
    int version;        /* the version of struct taskstats the kernel answered with */
    tt_delay cpu;       /* runnable, waiting for a CPU (1): the same figure as tt_sched's
                         * run_wait_ns and timeslices, from the same scheduler counters */
    tt_delay blkio;     /* waiting for block I/O it needs to go on (1): a read, an fsync, a page
                         * fault served from disk */
    tt_delay swapin;    /* waiting for its pages to come back from swap (1) */
    tt_delay reclaim;   /* reclaiming memory itself before an allocation could go on (7:
                         * "freepages") */
    tt_delay thrashing; /* waiting for a page of its working set that was evicted (9) */
    tt_delay compact;   /* compacting memory before an allocation could go on (11) */
    tt_delay wpcopy;    /* copying a write-protected page on write (copy-on-write) (13) */
    tt_delay irq;       /* time its CPU spent in interrupt handlers while it ran (14) */
} tt_delays;

/* The delay-accounting figures of thread tid of this process (0: the
 * calling thread), asked of the kernel through taskstats (generic netlink,
 * TASKSTATS_CMD_GET for the thread's id: a socket opened, one request, one
 * reply, closed: ~6.5 us here) after one read of kernel.task_delayacct
 * (~2.5 us): ~10 us in all (docs/where-time-went.md).
 * The kernel answers this command only to a caller with CAP_NET_ADMIN
 * (GENL_ADMIN_PERM in kernel/taskstats.c): root, or a program given the
 * capability. Returns 0; -ENODATA when delay accounting is off (the kernel
 * kept no figures: tt_strerror says how to turn it on; never zeros); -EPERM
 * without CAP_NET_ADMIN; -EFAULT (out is NULL); -EINVAL (a thread of
 * another process, or tid < 0); -ESRCH (no such thread, or it exited);
 * -ENOTSUP (a kernel without taskstats, or taskstats version 15, whose
 * layout later kernels dropped); -EIO (a reply it cannot read); or the
 * socket's own error (-EMFILE, -ENOBUFS). Not async-signal-safe. */
TT_API int tt_tid_delays(pid_t tid, tt_delays *out);

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
