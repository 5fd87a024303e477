/* Where the time went: the scheduler's per-thread accounts and the cgroup's
 * throttling, against physics (two threads on one CPU cannot both run; a
 * sleeping thread is not waiting for a CPU; a quota holds a burner back)
 * and against files and clocks read here, never against the code's own
 * figures alone. */
#include "tt_test.h"
#include "internal.h"
#include "sched_test_util.h"
#include "threadtime/threadtime.h"
#include "read_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MS INT64_C(1000000)


static void check_sane(const tt_sched *s)
{
    CHECK_OP(s->on_cpu_ns, >=, 0);
    CHECK_OP(s->run_wait_ns, >=, 0);
    CHECK_OP(s->timeslices, >=, 1);
    CHECK_OP(s->voluntary_switches, >=, 0);
    CHECK_OP(s->involuntary_switches, >=, 0);
}

TT_TEST(self_figures_are_the_kernels)
{
    burn_cpu(20 * MS);
    tt_sched a, b;
    int64_t before = tt__read_clock(CLOCK_THREAD_CPUTIME_ID);
    CHECK_OP(tt_self_sched(&a), ==, 0);
    check_sane(&a);
    /* The booked runtime never passes the precise clock, and lags it by
     * the runtime since the last tick or switch (a tick at HZ >= 100 is at
     * most 10 ms; the read itself books nothing). */
    int64_t after = tt__read_clock(CLOCK_THREAD_CPUTIME_ID);
    CHECK_OP(a.on_cpu_ns, <=, after);
    CHECK_OP(a.on_cpu_ns, >=, before - 10 * MS);
    /* A sleep is a switch, counted by the kernel's own getrusage: a
     * voluntary one, or an involuntary one where a preemption came between
     * arming the timer and sleeping and the timer had expired by then. */
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
    CHECK_OP(tt_self_sched(&b), ==, 0);
    CHECK_OP(b.voluntary_switches + b.involuntary_switches, >, a.voluntary_switches + a.involuntary_switches);
    CHECK_OP(b.timeslices, >, a.timeslices);
    CHECK_OP(b.on_cpu_ns, >=, a.on_cpu_ns);
    CHECK_OP(b.run_wait_ns, >=, a.run_wait_ns);
    /* The same thread by its tid (two /proc files) agrees, read after. */
    tt_sched c;
    CHECK_OP(tt_tid_sched(0, &c), ==, 0);
    CHECK_OP(c.timeslices, >=, b.timeslices);
    CHECK_OP(c.voluntary_switches, >=, b.voluntary_switches);
}

/* ---- two threads pinned to one CPU ---- */

typedef struct pinned {
    pthread_barrier_t *go;
    int cpu;
    _Atomic int *finished;
    int order;       /* 1 = finished first */
    int64_t cpu_ns;  /* its own clock over the race */
    int64_t wait_ns; /* run_wait over the race */
    int64_t alone_ns; /* the same from tt_self_run_wait_ns */
    int rc;
} pinned;

static void *pinned_burner(void *p)
{
    pinned *w = p;
    w->rc = pin_to_cpu(w->cpu);
    sched_yield(); /* now on that CPU */
    tt_sched s0, s1;
    /* Both read before the barrier: the wait for the CPU after the
     * release is booked inside the interval. */
    int rc0 = tt_self_sched(&s0);
    int64_t a0 = tt_self_run_wait_ns();
    int64_t c0 = tt__read_clock(CLOCK_THREAD_CPUTIME_ID);
    pthread_barrier_wait(w->go);
    burn_cpu(100 * MS);
    int64_t c1 = tt__read_clock(CLOCK_THREAD_CPUTIME_ID);
    w->order = atomic_fetch_add(w->finished, 1) + 1;
    /* A figure kept under an earlier anchor must not answer here. */
    int64_t a1 = tt_self_run_wait_ns();
    int rc1 = tt_self_sched(&s1);
    if (w->rc == 0)
        w->rc = rc0 != 0 ? rc0 : rc1 != 0 ? rc1 : a0 < 0 ? (int)a0 : a1 < 0 ? (int)a1 : 0;
    w->cpu_ns = c1 - c0;
    w->wait_ns = s1.run_wait_ns - s0.run_wait_ns;
    w->alone_ns = a1 - a0;
    return NULL;
}

/* Released together on one CPU, each burning 100 ms: while the first to
 * finish ran, the other was runnable and not running, so it waited at least
 * that long (the 10 % spare covers the first's CPU before the release). */
TT_TEST(two_threads_on_one_cpu_wait_for_each_other)
{
    int cpu = first_allowed_cpu();
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 2);
    _Atomic int finished = 0;
    pinned w[2] = {{&go, cpu, &finished, 0, 0, 0, 0, 0}, {&go, cpu, &finished, 0, 0, 0, 0, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK_OP(pthread_create(&t[i], NULL, pinned_burner, &w[i]), ==, 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&go);
    CHECK_OP(w[0].rc, ==, 0);
    CHECK_OP(w[1].rc, ==, 0);
    pinned *first = w[0].order == 1 ? &w[0] : &w[1];
    pinned *second = first == &w[0] ? &w[1] : &w[0];
    fprintf(stderr, "  first: cpu %lld us, waited %lld us; second: cpu %lld us, waited %lld us\n",
            (long long)first->cpu_ns / 1000, (long long)first->wait_ns / 1000, (long long)second->cpu_ns / 1000,
            (long long)second->wait_ns / 1000);
    CHECK_OP(second->wait_ns * 10, >=, first->cpu_ns * 9);
    CHECK_OP(second->alone_ns * 10, >=, first->cpu_ns * 9);
}

/* ---- a thread that only sleeps ---- */

static void *sleeper(void *p)
{
    int64_t *out = p;
    tt_sched s0, s1;
    int64_t w0 = tt__read_clock(CLOCK_MONOTONIC);
    out[2] = tt_self_sched(&s0);
    int64_t a0 = tt_self_run_wait_ns();
    for (int i = 0; i < 20; i++) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    int64_t a1 = tt_self_run_wait_ns();
    if (out[2] == 0)
        out[2] = tt_self_sched(&s1);
    if (out[2] == 0 && (a0 < 0 || a1 < 0))
        out[2] = a0 < 0 ? a0 : a1;
    int64_t w1 = tt__read_clock(CLOCK_MONOTONIC);
    out[0] = s1.run_wait_ns - s0.run_wait_ns;
    out[1] = w1 - w0;
    out[3] = a1 - a0;
    return NULL;
}

/* Blocked is not waiting: the thread was asleep for at least the 100 ms it
 * asked for, so whatever it waited for a CPU fits in the rest of the wall
 * time. Reporting blocked time as wait would break this by ~100 ms. */
TT_TEST(a_sleeping_thread_does_not_wait)
{
    int64_t r[4] = {0, 0, -1, 0};
    pthread_t t;
    CHECK_OP(pthread_create(&t, NULL, sleeper, r), ==, 0);
    pthread_join(t, NULL);
    CHECK_OP(r[2], ==, 0);
    fprintf(stderr, "  waited %lld us in %lld us of wall time, 100 ms of it asleep\n", (long long)r[0] / 1000,
            (long long)r[1] / 1000);
    CHECK_OP(r[0], >=, 0);
    CHECK_OP(r[0], <=, r[1] - 100 * MS);
    CHECK_OP(r[3], >=, 0);
    CHECK_OP(r[3], <=, r[1] - 100 * MS);
}

/* The figure alone is schedstat's second field, as this test reads the file
 * itself (open, read, parse here) just before and just after: between the
 * two, whether kept or read again. Repeated calls while the thread runs, and
 * after it blocked and was preempted, never step back. */
static int64_t file_wait(void)
{
    char buf[128];
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    long long on = -1, wait = -1;
    if (f != NULL) {
        if (fgets(buf, sizeof buf, f) == NULL || sscanf(buf, "%lld %lld", &on, &wait) != 2)
            wait = -1;
        fclose(f);
    }
    return wait;
}

TT_TEST(run_wait_alone_is_schedstats)
{
    int64_t last = 0;
    for (int i = 0; i < 200; i++) {
        int64_t before = file_wait();
        int64_t w = tt_self_run_wait_ns();
        int64_t again = tt_self_run_wait_ns();
        int64_t after = file_wait();
        CHECK_OP(before, >=, 0);
        CHECK_OP(w, >=, before);
        CHECK_OP(w, <=, after);
        CHECK_OP(again, >=, w);
        CHECK_OP(again, <=, after);
        CHECK_OP(w, >=, last);
        last = again;
        if (i % 20 == 0) {
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
        } else if (i % 5 == 0) {
            sched_yield();
        } else {
            burn_cpu(MS / 10);
        }
    }
}

/* ---- another thread, and bad input ---- */

typedef struct parked_thread {
    int fds[2];        /* it blocks reading fds[0] until the test writes */
    _Atomic pid_t tid; /* its own gettid(), once it runs */
} parked_thread;

static void *parked(void *p)
{
    parked_thread *w = p;
    atomic_store(&w->tid, gettid());
    char c;
    (void)!read(w->fds[0], &c, 1);
    return NULL;
}

TT_TEST(another_thread_by_tid)
{
    parked_thread w = {.tid = 0};
    CHECK_OP(pipe(w.fds), ==, 0);
    pthread_t t;
    CHECK_OP(pthread_create(&t, NULL, parked, &w), ==, 0);
    while (atomic_load(&w.tid) == 0)
        usleep(1000);
    pid_t tid = atomic_load(&w.tid);
    tt_sched s;
    CHECK_OP(tt_tid_sched(tid, &s), ==, 0);
    check_sane(&s);
    /* Its precise clock, read after, covers the booked runtime. */
    CHECK_OP(s.on_cpu_ns, <=, tt_tid_total_ns(tid));
    (void)!write(w.fds[1], "x", 1);
    pthread_join(t, NULL);
    close(w.fds[0]);
    close(w.fds[1]);
    /* A join returns once the thread cleared its tid, which it does on its
     * way out, before the kernel has released it (qemu-user, whose threads
     * are the host's, showed the window): wait for its end as the kernel
     * lists it, not for a time. */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
    while (access(path, F_OK) == 0)
        usleep(1000);
    CHECK_OP(tt_tid_sched(tid, &s), ==, -ESRCH);
}

TT_TEST(bad_input)
{
    tt_sched s = {7, 7, 7, 7, 7};
    CHECK_OP(tt_self_sched(NULL), ==, -EFAULT);
    CHECK_OP(tt_tid_sched(0, NULL), ==, -EFAULT);
    CHECK_OP(tt_tid_sched(-1, &s), ==, -EINVAL);
    CHECK_OP(s.run_wait_ns, ==, 7);
    CHECK_OP(tt_cgroup_cpu_read(NULL), ==, -EFAULT);
    /* A process of its own is not a thread of ours. */
    pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    CHECK_OP(child, >, 0);
    CHECK_OP(tt_tid_sched(child, &s), ==, -EINVAL);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    CHECK_OP(tt_tid_sched(child, &s), ==, -ESRCH);
}

/* The kept descriptor closed under the library, then its number taken by
 * another file: the read goes on (from a fresh descriptor), and the other
 * file is left open and untouched. */
TT_TEST(a_closed_descriptor_is_reopened_and_a_reused_number_left_alone)
{
    tt_sched a, b;
    CHECK_OP(tt_self_sched(&a), ==, 0);
    int ours = kept_descriptor();
    CHECK_OP(ours, >=, 0);
    if (ours < 0)
        return;
    close(ours);
    int other = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    CHECK_OP(other, ==, ours); /* the lowest free number */
    CHECK_OP(tt_self_sched(&b), ==, 0);
    CHECK_OP(b.timeslices, >=, a.timeslices);
    CHECK_OP(fcntl(other, F_GETFD), >=, 0);
    CHECK_OP(lseek(other, 0, SEEK_CUR), ==, 0);
    close(other);
    CHECK_OP(tt_self_sched(&b), ==, 0);
}

/* The same, but the thread exits with no read in between: its exit does
 * not close the program's file that took the number. */
static void *close_reuse_and_exit(void *arg)
{
    int *other = arg;
    tt_sched s;
    int ours = tt_self_sched(&s) == 0 ? kept_descriptor() : -1;
    if (ours >= 0) {
        close(ours);
        *other = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        if (*other != ours) {
            close(*other);
            *other = -1;
        }
    }
    return NULL;
}

TT_TEST(a_reused_number_survives_the_threads_exit)
{
    int other = -1;
    pthread_t t;
    CHECK_OP(pthread_create(&t, NULL, close_reuse_and_exit, &other), ==, 0);
    pthread_join(t, NULL);
    CHECK_OP(other, >=, 0);
    if (other < 0)
        return;
    CHECK_OP(fcntl(other, F_GETFD), >=, 0);
    close(other);
}

/* A fork child reads its own thread, not the parent's through the
 * descriptor it inherited. */
TT_TEST(fork_child_reads_its_own_thread)
{
    burn_cpu(50 * MS);
    tt_sched p;
    CHECK_OP(tt_self_sched(&p), ==, 0);
    CHECK_OP(tt_self_run_wait_ns(), >=, 0); /* kept in the parent, at fork */
    pid_t child = fork();
    if (child == 0) {
        tt_sched c;
        int rc = tt_self_sched(&c);
        int64_t mine = tt__read_clock(CLOCK_THREAD_CPUTIME_ID);
        /* The figure alone is the child's too, never one kept by the parent. */
        int64_t w = tt_self_run_wait_ns();
        tt_sched d;
        int ok = rc == 0 && c.on_cpu_ns <= mine && c.on_cpu_ns < p.on_cpu_ns && w >= c.run_wait_ns
                 && tt_self_sched(&d) == 0 && w <= d.run_wait_ns;
        _exit(ok ? 0 : 1);
    }
    CHECK_OP(child, >, 0);
    int status = 0;
    CHECK_OP(waitpid(child, &status, 0), ==, child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The sysctl, read here independently, decides what the line says. */
TT_TEST(delay_accounting_says_off_or_on_as_the_sysctl_does)
{
    const char *line = tt_delay_accounting();
    CHECK(line != NULL);
    int fd = open("/proc/sys/kernel/task_delayacct", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        CHECK(strncmp(line, "absent:", 7) == 0);
        return;
    }
    char c = '?';
    (void)!read(fd, &c, 1);
    close(fd);
    if (c == '1')
        CHECK(strcmp(line, "on") == 0);
    else
        CHECK(strncmp(line, "off: sysctl -w kernel.task_delayacct=1", 38) == 0);
}

/* ---- delay accounting (taskstats) ---- */

/* kernel.task_delayacct as the file says: '0', '1', or 0 when there is no
 * such file. */
static char delayacct_sysctl(void)
{
    int fd = open("/proc/sys/kernel/task_delayacct", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char c = '?';
    (void)!read(fd, &c, 1);
    close(fd);
    return c;
}

/* A thread that makes the disk work (writes 256 KiB into a directory of
 * its own under TMPDIR and fsyncs it: a wait for block I/O where the
 * directory is on a disk), then parks on a pipe. */
typedef struct syncer {
    parked_thread park;
    char dir[256];
} syncer;

static void *sync_then_park(void *p)
{
    syncer *w = p;
    char path[300];
    snprintf(path, sizeof path, "%s/blocks", w->dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
        static char block[64 * 1024];
        memset(block, 'x', sizeof block);
        for (int i = 0; i < 4; i++)
            (void)!write(fd, block, sizeof block);
        fsync(fd);
        close(fd);
        unlink(path);
    }
    return parked(&w->park);
}

/* Thread tid's run delay and timeslices (schedstat) and its block-I/O
 * delay in clock ticks (stat's field 42, delayacct_blkio_ticks), read by a
 * child process: the kernel's own text, not taskstats. */
static int outside_figures(pid_t tid, long long v[3])
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t reader = fork();
    if (reader == 0) {
        char path[96], buf[1024];
        long long out[3] = {-1, -1, -1};
        snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)getppid(), (int)tid);
        FILE *f = fopen(path, "r");
        if (f != NULL && fscanf(f, "%*s %lld %lld", &out[0], &out[1]) != 2)
            out[0] = -1;
        if (f != NULL)
            fclose(f);
        snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)getppid(), (int)tid);
        int fd = open(path, O_RDONLY);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (n > 0) {
            buf[n] = '\0';
            /* Fields after the name, which ends at the last ')': the
             * third field there (state) is the stat's field 3, so field 42
             * is the 40th after the state. */
            char *p = strrchr(buf, ')');
            for (int field = 2; p != NULL && field < 42; field++)
                p = strchr(p + 1, ' ');
            if (p != NULL)
                out[2] = strtoll(p + 1, NULL, 10);
        }
        (void)!write(fds[1], out, sizeof out);
        _exit(0);
    }
    close(fds[1]);
    ssize_t n = reader > 0 ? read(fds[0], v, 3 * sizeof v[0]) : -1;
    close(fds[0]);
    if (reader > 0)
        waitpid(reader, NULL, 0);
    return n == (ssize_t)(3 * sizeof v[0]) && v[0] >= 0 && v[2] >= 0 ? 0 : -1;
}

/* Where the figures exist (delay accounting on, CAP_NET_ADMIN held), a
 * parked thread's CPU delay and timeslices are its schedstat, and its
 * block-I/O delay is its stat's delayacct_blkio_ticks, as another process
 * reads them; where delay accounting is off the read says so (-ENODATA)
 * and leaves the figures alone, never zeros. */
/* Whether this process holds CAP_NET_ADMIN (bit 12 of CapEff in its status
 * file) in the first user namespace (uid_map maps all of it to itself). */
static int has_net_admin_in_first_namespace(void)
{
    char buf[4096];
    int n = tt__read_small("/proc/self/status", buf, sizeof buf);
    const char *cap = n > 0 ? strstr(buf, "\nCapEff:") : NULL;
    if (!cap || !((strtoull(cap + 9, NULL, 16) >> 12) & 1))
        return 0;
    char map[128];
    n = tt__read_small("/proc/self/uid_map", map, sizeof map);
    unsigned long inside, outside, count;
    return n > 0 && sscanf(map, "%lu %lu %lu", &inside, &outside, &count) == 3 && inside == 0 && outside == 0 &&
           count == 4294967295UL;
}

TT_TEST(delays_are_the_kernels_or_off)
{
    char sysctl = delayacct_sysctl();
    tt_delays d;
    memset(&d, 0x5a, sizeof d);
    tt_delays untouched = d;
    int rc = tt_tid_delays(0, &d);
    if (rc == -ENOTSUP) {
        printf("skip: delays_are_the_kernels_or_off: this kernel has no taskstats\n");
        return;
    }
    if (rc == -EPERM) {
        /* Taskstats answers first, so a caller without CAP_NET_ADMIN in the
         * first user namespace hears that whatever the sysctl says. The
         * kernel's own word on that: the effective set in status, and an
         * identity uid_map (the first namespace). */
        CHECK(!has_net_admin_in_first_namespace());
        printf("skip: delays_are_the_kernels_or_off: no CAP_NET_ADMIN, which taskstats needs\n");
        return;
    }
    if (sysctl == '0') {
        CHECK_OP(rc, ==, -ENODATA);
        CHECK(memcmp(&d, &untouched, sizeof d) == 0);
        CHECK(strstr(tt_strerror(rc), "sysctl -w kernel.task_delayacct=1") != NULL);
        printf("skip: delays_are_the_kernels_or_off: kernel.task_delayacct is 0, so only the \"off\" answer "
               "was checked; sysctl -w kernel.task_delayacct=1 for the comparison with /proc\n");
        return;
    }
    CHECK_OP(rc, ==, 0);
    syncer w = {.park = {.tid = 0}};
    const char *tmp = getenv("TMPDIR");
    snprintf(w.dir, sizeof w.dir, "%s/tt-delays-XXXXXX", tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
    CHECK(mkdtemp(w.dir) != NULL);
    CHECK_OP(pipe(w.park.fds), ==, 0);
    pthread_t t;
    CHECK_OP(pthread_create(&t, NULL, sync_then_park, &w), ==, 0);
    while (atomic_load(&w.park.tid) == 0)
        usleep(1000);
    pid_t tid = atomic_load(&w.park.tid);
    /* Until it is parked it may still run (and wait) between the reads:
     * the figures count when the outside read before and after agree. */
    long long before[3], after[3];
    int agreed = 0;
    for (int round = 0; round < 200 && !agreed; round++) {
        usleep(5000);
        if (outside_figures(tid, before) != 0 || tt_tid_delays(tid, &d) != 0 || outside_figures(tid, after) != 0)
            continue;
        agreed = memcmp(before, after, sizeof before) == 0;
    }
    CHECK(agreed);
    if (agreed) {
        CHECK_OP(d.version, >=, 1);
        CHECK_OP(d.cpu.ns, ==, before[0]);
        CHECK_OP(d.cpu.count, ==, before[1]);
        /* nsec_to_clock_t: whole clock ticks, rounded down (kernels before
         * 5.19 added the swap-in delay to the same field). */
        long long tick_ns = 1000000000LL / sysconf(_SC_CLK_TCK);
        long long ticks = d.blkio.ns / tick_ns, with_swapin = (d.blkio.ns + d.swapin.ns) / tick_ns;
        CHECK(before[2] == ticks || before[2] == with_swapin);
        CHECK_OP(d.blkio.count, >=, 0);
        /* Kinds the version lacks read -1, the others counts. */
        CHECK_OP(d.irq.count, >=, d.version >= 14 ? 0 : -1);
        printf("  delays of a thread that fsynced 256 KiB: version %d, cpu %lld ns (%lld), block I/O %lld ns (%lld)\n",
               d.version, (long long)d.cpu.ns, (long long)d.cpu.count, (long long)d.blkio.ns,
               (long long)d.blkio.count);
    }
    (void)!write(w.park.fds[1], "x", 1);
    pthread_join(t, NULL);
    close(w.park.fds[0]);
    close(w.park.fds[1]);
    rmdir(w.dir);
    CHECK_OP(tt_tid_delays(tid, &d), ==, -ESRCH);
}

/* Checked before the kernel is asked: whatever the privilege or sysctl. */
TT_TEST(delays_bad_input)
{
    tt_delays d;
    memset(&d, 0x5a, sizeof d);
    tt_delays untouched = d;
    CHECK_OP(tt_tid_delays(0, NULL), ==, -EFAULT);
    CHECK_OP(tt_tid_delays(-1, &d), ==, -EINVAL);
    pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    CHECK_OP(child, >, 0);
    CHECK_OP(tt_tid_delays(child, &d), ==, -EINVAL); /* not a thread of ours */
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    CHECK_OP(tt_tid_delays(child, &d), ==, -ESRCH);
    CHECK(memcmp(&d, &untouched, sizeof d) == 0);
}

/* Taskstats answers only CAP_NET_ADMIN (kernel/taskstats.c marks
 * TASKSTATS_CMD_GET GENL_ADMIN_PERM): as nobody, the read is refused with
 * -EPERM, on or off. */
TT_TEST(delays_need_cap_net_admin)
{
    if (geteuid() != 0) {
        printf("skip: delays_need_cap_net_admin: not root, so no user to drop to\n");
        return;
    }
    pid_t child = fork();
    if (child == 0) {
        if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
            _exit(2);
        tt_delays d;
        int rc = tt_tid_delays(0, &d);
        _exit(rc == -EPERM ? 0 : rc == -ENOTSUP ? 3 : 1);
    }
    CHECK_OP(child, >, 0);
    int status = 0;
    CHECK_OP(waitpid(child, &status, 0), ==, child);
    CHECK(WIFEXITED(status));
    if (WEXITSTATUS(status) == 3)
        printf("skip: delays_need_cap_net_admin: this kernel has no taskstats\n");
    else
        CHECK_OP(WEXITSTATUS(status), ==, 0);
}

/* ---- the cgroup ---- */

/* The figures as the files say them: quota and period as written by
 * whoever set them, read here independently. */
TT_TEST(cgroup_reads_this_process_group)
{
    tt_cgroup_cpu g;
    int rc = tt_cgroup_cpu_read(&g);
    if (rc == -ENOENT) {
        printf("skip: no cgroup CPU controller visible here\n");
        return;
    }
    CHECK_OP(rc, ==, 0);
    CHECK(g.version == 1 || g.version == 2);
    CHECK_OP(g.periods, >=, g.throttled_periods);
    CHECK_OP(g.throttled_ns, >=, 0);
    CHECK_OP(g.period_us, >, 0);
    CHECK(g.quota_us == -1 || g.quota_us > 0);
}

/* Writes text to dir/name; 0 or -errno. */
static int put_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int e = n < 0 ? -errno : 0;
    close(fd);
    return e;
}

/* In a group of its own with 20 % of a CPU (2 ms per 10 ms), a burner that
 * never blocks is off its CPU at least 80 % of its wall time less one
 * period's quota, all of it runnable: the scheduler books it as waiting for
 * a CPU (>= 70 % here), throttled or not. The group's figures are the ones
 * the test set, and its periods count on. Needs a
 * writable v1 "cpu" hierarchy at /sys/fs/cgroup/cpu (root); skips with one
 * line otherwise. The group is the test's own and is removed after. */
TT_TEST(a_quota_shows_as_wait_and_throttling)
{
    char dir[128];
    snprintf(dir, sizeof dir, "/sys/fs/cgroup/cpu/threadtime-test-%d", (int)getpid());
    if (mkdir(dir, 0700) != 0) {
        printf("skip a_quota_shows_as_wait_and_throttling: cannot make a cgroup at /sys/fs/cgroup/cpu (%s)\n", strerror(errno));
        return;
    }
    if (put_file(dir, "cpu.cfs_period_us", "10000") != 0 || put_file(dir, "cpu.cfs_quota_us", "2000") != 0) {
        printf("skip: cannot set a CPU quota in %s\n", dir);
        rmdir(dir);
        return;
    }
    int fds[2];
    CHECK_OP(pipe(fds), ==, 0);
    pid_t child = fork();
    if (child == 0) {
        char c;
        close(fds[1]);
        (void)!read(fds[0], &c, 1); /* moved into the group by now */
        tt_sched s0, s1;
        tt_cgroup_cpu g0, g1;
        int64_t w0 = tt__read_clock(CLOCK_MONOTONIC);
        int rc = tt_self_sched(&s0) | tt_cgroup_cpu_read(&g0);
        burn_cpu(60 * MS);
        rc |= tt_self_sched(&s1) | tt_cgroup_cpu_read(&g1);
        int64_t wall = tt__read_clock(CLOCK_MONOTONIC) - w0;
        int64_t wait = s1.run_wait_ns - s0.run_wait_ns;
        fprintf(stderr, "  child: %lld ms wall, waited %lld ms, throttled %lld of %lld periods, %lld ms\n",
                (long long)(wall / MS), (long long)(wait / MS), (long long)(g1.throttled_periods - g0.throttled_periods),
                (long long)(g1.periods - g0.periods), (long long)((g1.throttled_ns - g0.throttled_ns) / MS));
        /* Whether it was throttled depends on the host: a burner that other
         * work keeps below 2 ms a period never meets its quota. What holds
         * either way: the group was runnable through many periods, and the
         * counts only grow. */
        int ok = rc == 0 && g1.version == 1 && g1.quota_us == 2000 && g1.period_us == 10000 && wait * 10 >= wall * 7 &&
                 g1.periods > g0.periods && g1.throttled_periods - g0.throttled_periods <= g1.periods - g0.periods &&
                 g1.throttled_ns >= g0.throttled_ns;
        _exit(ok ? 0 : 1);
    }
    CHECK_OP(child, >, 0);
    close(fds[0]);
    char pid[16];
    snprintf(pid, sizeof pid, "%d\n", (int)child);
    CHECK_OP(put_file(dir, "cgroup.procs", pid), ==, 0);
    (void)!write(fds[1], "x", 1);
    close(fds[1]);
    int status = 0;
    CHECK_OP(waitpid(child, &status, 0), ==, child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_OP(rmdir(dir), ==, 0);
}

TT_TEST_MAIN()
