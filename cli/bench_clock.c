/* bench methods for the CPU clocks, each beside the raw call it wraps. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "internal.h"
#include "prim/thread.h"
#include "read_clock.h"
#include "threadtime/threadtime.h"

/* Folds results so the calls cannot be optimised away. */
#define LOOP(expr)                                                                                 \
    uint64_t acc = 0;                                                                              \
    for (uint64_t i = 0; i < n; i++)                                                               \
        acc += (uint64_t)(expr);                                                                   \
    return acc

/* Per-thread state: the caller's tid, its handle, its raw clockids. */
typedef struct clock_state {
    pid_t tid;
    tt_thread *handle;
    clockid_t virt_self;
} clock_state;

static int state_setup(void **out)
{
    clock_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return -ENOMEM;
    s->tid = tt__gettid();
    int rc = tt_thread_open(s->tid, &s->handle);
    if (rc == 0)
        rc = tt_make_clockid(0, 1, TT_CLOCK_VIRT, &s->virt_self);
    if (rc != 0) {
        tt_thread_close(s->handle);
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

static void state_teardown(void *p)
{
    clock_state *s = p;
    tt_thread_close(s->handle);
    free(s);
}

static uint64_t run_procfs(void *p, uint64_t n)
{
    clock_state *s = p;
    tt_procfs_stat st;
    LOOP(tt_procfs_read(0, s->tid, &st) + st.user_ns);
}

static uint64_t run_getrusage(void *p, uint64_t n)
{
    (void)p;
    tt_times t;
    LOOP(tt_getrusage_thread(&t) + t.user_ns);
}

static uint64_t run_clock_thread_cputime_id(void *p, uint64_t n)
{
    (void)p;
    LOOP(tt__read_clock(CLOCK_THREAD_CPUTIME_ID));
}

static uint64_t run_clock_gettime_virt(void *p, uint64_t n)
{
    clock_state *s = p;
    LOOP(tt__read_clock(s->virt_self));
}

static uint64_t run_sched_self(void *p, uint64_t n) { (void)p; LOOP(tt_self_total_ns()); }
static uint64_t run_fast_self(void *p, uint64_t n) { (void)p; LOOP(tt_self_fast_ns()); }
static uint64_t run_virt_self(void *p, uint64_t n) { (void)p; LOOP(tt_self_user_raw_ns()); }
static uint64_t run_prof_self(void *p, uint64_t n) { (void)p; LOOP(tt_self_prof_raw_ns()); }
static uint64_t run_virt_tid(void *p, uint64_t n) { LOOP(tt_tid_user_raw_ns(((clock_state *)p)->tid)); }
static uint64_t run_sched_tid(void *p, uint64_t n) { LOOP(tt_tid_total_ns(((clock_state *)p)->tid)); }
static uint64_t run_process(void *p, uint64_t n) { (void)p; LOOP(tt_process_total_ns(0)); }
static uint64_t run_monotonic(void *p, uint64_t n) { (void)p; LOOP(tt__read_clock(CLOCK_MONOTONIC)); }

static uint64_t run_consistent_self(void *p, uint64_t n)
{
    (void)p;
    tt_times t;
    LOOP(tt_self_times(&t) + t.user_ns);
}

static uint64_t run_consistent_tid(void *p, uint64_t n)
{
    clock_state *s = p;
    tt_times t;
    LOOP(tt_thread_times(s->handle, &t) + t.user_ns);
}

/* Where the time went (sched.h): the ways to read a thread's schedstat. */
static uint64_t run_sched_accounts(void *p, uint64_t n)
{
    (void)p;
    tt_sched s;
    LOOP(tt_self_sched(&s) + s.run_wait_ns);
}

static uint64_t run_run_wait_self(void *p, uint64_t n)
{
    (void)p;
    LOOP(tt_self_run_wait_ns());
}

/* A descriptor on the caller's own schedstat, kept open for the pread row. */
static int schedstat_setup(void **out)
{
    int *fd = malloc(sizeof *fd);
    if (fd == NULL)
        return -ENOMEM;
    *fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        int e = errno;
        free(fd);
        return -e;
    }
    *out = fd;
    return 0;
}

static void schedstat_teardown(void *p)
{
    close(*(int *)p);
    free(p);
}

static uint64_t run_schedstat_pread(void *p, uint64_t n)
{
    int fd = *(int *)p;
    char buf[96];
    LOOP(pread(fd, buf, sizeof buf, 0) + buf[0]);
}

static uint64_t run_schedstat_open_read(void *p, uint64_t n)
{
    (void)p;
    uint64_t acc = 0;
    char buf[96];
    for (uint64_t i = 0; i < n; i++) {
        int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
        acc += (uint64_t)read(fd, buf, sizeof buf) + (uint64_t)buf[0];
        close(fd);
    }
    return acc;
}

/* Delay accounting (taskstats): the public call, and the netlink round
 * trip alone, which answers (with zeros) even while the sysctl is off.
 * Each setup makes one read, so a row that cannot work here is skipped
 * with its reason (-ENODATA: off; -EPERM: no CAP_NET_ADMIN). */
static int delays_setup(void **out)
{
    tt_delays d;
    int rc = tt_tid_delays(0, &d);
    return rc != 0 ? rc : state_setup(out);
}

static uint64_t run_delays(void *p, uint64_t n)
{
    (void)p;
    tt_delays d;
    LOOP(tt_tid_delays(0, &d) + d.blkio.ns);
}

static int taskstats_setup(void **out)
{
    tt_delays d;
    int rc = tt__taskstats_get(tt__gettid(), &d);
    return rc != 0 ? rc : state_setup(out);
}

static uint64_t run_taskstats(void *p, uint64_t n)
{
    clock_state *s = p;
    tt_delays d;
    LOOP(tt__taskstats_get(s->tid, &d) + d.cpu.ns);
}

static uint64_t run_cgroup_cpu(void *p, uint64_t n)
{
    (void)p;
    tt_cgroup_cpu g;
    LOOP(tt_cgroup_cpu_read(&g) + g.throttled_ns);
}

#define M(name, desc, run) {name, desc, state_setup, run, state_teardown, NULL, NULL}

const tt__bench_method tt__bench_clock_methods[] = {
    M("procfs_stat", "baseline: open+read+parse /proc/self/task/<tid>/stat", run_procfs),
    M("getrusage_thread", "getrusage(RUSAGE_THREAD): user+system, kernel-scaled, us", run_getrusage),
    M("clock_thread_cputime_id", "raw clock_gettime(CLOCK_THREAD_CPUTIME_ID)", run_clock_thread_cputime_id),
    M("clock_gettime_virt", "raw clock_gettime on the caller's VIRT clockid (what virt_self wraps)",
      run_clock_gettime_virt),
    M("sched_self", "tt_self_total_ns: precise CPU time of the caller", run_sched_self),
    M("fast_self", "tt_self_fast_ns: the same clock, counter + rseq while not switched out", run_fast_self),
    M("virt_self", "tt_self_user_raw_ns: raw tick-sampled user time of the caller", run_virt_self),
    M("prof_self", "tt_self_prof_raw_ns: raw tick-sampled user+system of the caller", run_prof_self),
    M("virt_tid", "tt_tid_user_raw_ns(own tid): user time through a tid lookup", run_virt_tid),
    M("sched_tid", "tt_tid_total_ns(own tid): precise time through a tid lookup", run_sched_tid),
    M("consistent_self", "tt_self_times: consistent split of the caller (getrusage)", run_consistent_self),
    M("consistent_tid", "tt_thread_times: consistent split through a handle (3 clock reads)",
      run_consistent_tid),
    M("process_cputime", "tt_process_total_ns(0): precise CPU time of the process", run_process),
    M("schedstat_self", "tt_self_sched: run-queue wait, timeslices (kept fd, pread) + switches (getrusage)",
      run_sched_accounts),
    M("run_wait_self", "tt_self_run_wait_ns: the wait alone, kept under the fast clock's anchor, else one pread",
      run_run_wait_self),
    {"schedstat_pread", "pread of /proc/thread-self/schedstat on a descriptor kept open", schedstat_setup,
     run_schedstat_pread, schedstat_teardown, NULL, NULL},
    M("schedstat_open_read", "open + read + close /proc/thread-self/schedstat each time", run_schedstat_open_read),
    {"delays_self", "tt_tid_delays(0): delay accounting through taskstats (sysctl read + netlink round trip)",
     delays_setup, run_delays, state_teardown, NULL, NULL},
    {"taskstats_get", "one taskstats netlink round trip alone (socket, family known, request, reply, close)",
     taskstats_setup, run_taskstats, state_teardown, NULL, NULL},
    M("cgroup_cpu", "tt_cgroup_cpu_read: the process cgroup's cpu.stat and quota", run_cgroup_cpu),
    M("clock_monotonic", "baseline: clock_gettime(CLOCK_MONOTONIC) through the vDSO", run_monotonic),
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};
