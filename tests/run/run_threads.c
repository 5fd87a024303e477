/* A program for the `threadtime run` tests (test_run.py).
 *
 *   run_threads short N   starts N threads, each alive 1-5 ms (a little
 *                         CPU, then a sleep), joined; each prints
 *                         "tid user_ns system_ns before_ns" as its last
 *                         act: its split read with getrusage(RUSAGE_THREAD),
 *                         the truth the report is checked against, and the
 *                         wall time from its start to the end of its
 *                         sleep's requested length.
 *   run_threads exact N   starts N threads one after another, each burning
 *                         1-5 ms of pure computation (no system call: its
 *                         runtime is as of its last tick when it ends),
 *                         and prints "tid lo_ns hi_ns": the kernel's own
 *                         figure of the whole thread's CPU time, read by
 *                         the main thread through the process CPU clock
 *                         around the thread's life, once the thread is
 *                         gone from /proc (its runtime is then in the
 *                         process's); the main thread's own clock read
 *                         around the same window takes its part out, so
 *                         the thread used between lo and hi. Run with no
 *                         sampler: another thread would count in it.
 *   run_threads vfork     a vfork child whose exec fails ends with _exit()
 *                         on the parent's memory; then the parent starts
 *                         and joins one thread, prints its tid and burns
 *                         30 ms on its main thread.
 *   run_threads noname    a thread renames itself to "" (the kernel keeps an
 *                         empty name) and ends; prints its tid.
 *   run_threads kill      ends 10 threads, starts 2 that keep burning and,
 *                         once both have burned 1 ms and the sampler has
 *                         finished two more rounds, kills the whole process
 *                         with SIGKILL.
 *   run_threads clone     starts and joins a pthread (which starts the
 *                         sampler), then a thread with clone() directly (as Go's
 *                         runtime does), prints its tid, and keeps it
 *                         burning until threadtime's sampler has finished
 *                         two more rounds (its file's header counts them),
 *                         so a whole round has seen it.
 *   run_threads pinned MS two threads pinned to one CPU (the first this
 *                         process may use), released together by a
 *                         barrier, each burning MS ms of CPU; each prints
 *                         "pair tid order cpu_ns" (order 1: finished its
 *                         burn first; cpu_ns: its burn by its own CPU
 *                         clock), then "pairwall ns" (from before the first
 *                         pthread_create to after both joins). Then a
 *                         thread that only sleeps 20 x 5 ms prints "sleeper
 *                         tid slept_ns wall_ns" (the sleeps asked for, and
 *                         the wall time from before its pthread_create to
 *                         after its join).
 *   run_threads switches  prints "pid PID", then two threads each sleep 50 x
 *                         1 ms (50 voluntary switches at least) and print
 *                         "ends tid" / "stays tid" before blocking in read():
 *                         "ends" on stdin, and it returns once a byte comes;
 *                         "stays" on a pipe nobody writes, so it is still
 *                         blocked when the main thread, once "ends" was
 *                         joined, calls exit().
 *   run_threads lone      starts no thread through pthread_create (so no
 *                         sampler either), only one with clone() directly
 *                         that keeps burning; once the kernel's clock of
 *                         that thread says 1 ms, prints "TID CPU_NS" and
 *                         calls exit() with it alive.
 *   run_threads crowd N   starts N threads that each burn 0.2 ms of CPU and
 *                         then block; once all have burned, prints every
 *                         tid of /proc/self/task (the kernel's list of the
 *                         process's threads) and calls exit() with all of
 *                         them alive.
 *   run_threads crowd N busy  the same N threads, then one that keeps
 *                         reading its own CPU clock; once that says 1 ms,
 *                         prints "busy TID CPU_NS" (its last reading) and
 *                         calls exit() with it still burning.
 *   run_threads handler   forks a child that burns 20 ms on its one thread
 *                         and exits, with a zombie child of its own and a
 *                         SIGUSR1 handler that reaps it. The parent traces
 *                         it (ptrace) and, when the child's first getrusage
 *                         returns (the preload's read of its split at exit:
 *                         the child makes none of its own), sends it
 *                         SIGUSR1, so the handler runs in the middle of the
 *                         exit record; prints "PID CPU_NS" (the child's
 *                         wait4 rusage) or "skip" where ptrace is refused.
 *   run_threads exitwait  forks a child it traces (ptrace): the child starts
 *                         a thread (and so the preload's sampler) that waits
 *                         for a word, then calls exit() once the tracer holds
 *                         the sampler inside a round (at its listing of
 *                         /proc/self/task). The tracer then holds the exit
 *                         handler in its wait for that round, and has the
 *                         thread burn more CPU than its whole life had lasted
 *                         by then; lets all go; prints "TID CPU_NS": the
 *                         thread and the CPU its own clock passed.
 *   run_threads sigsys    installs a seccomp filter that answers openat
 *                         with SIGSYS, and a SIGSYS handler that makes
 *                         the call fail with ENOSYS and writes "T" to
 *                         stdout; prints "installed" and returns 0 (the
 *                         preload's exit record opens the run's log).
 *   run_threads getseccomp prctl|raw  installs a seccomp filter that
 *                         kills the process on prctl(PR_GET_SECCOMP),
 *                         through prctl(PR_SET_SECCOMP) or the seccomp
 *                         system call (raw; no_new_privs through prctl
 *                         both ways), prints "installed" and returns 0.
 *   run_threads errno     prints "start ERRNO" (errno as main found it);
 *                         in a fork child, then in itself: sets errno to
 *                         4242, starts a thread and prints "create RC
 *                         ERRNO SEEN" (pthread_create's result, errno after
 *                         it, and errno as the new thread found it).
 *   run_threads setuid N  as root: setuid(65534), then starts N threads one
 *                         after another, each burning 2 ms of CPU and
 *                         printing "tid cpu_ns" (its own CPU clock) as its
 *                         last act; prints "skip" when not root.
 *   run_threads vforkprivs  a vfork child sets no_new_privs through libc's
 *                         prctl and ends with _exit(); the parent then
 *                         installs, by raw system calls alone, a filter
 *                         that traps prctl(PR_GET_SECCOMP), whose SIGSYS
 *                         handler writes "T" to stdout and fails the call;
 *                         prints "installed" and returns 0.
 *   run_threads diskfull FILE  fills FILE's filesystem with FILE (4 KiB
 *                         writes until ENOSPC) and frees one page of it
 *                         (room for a file's header, none for its records),
 *                         starts a thread that burns 2 ms of CPU and prints
 *                         "tid cpu_ns" (its own CPU clock), joins it,
 *                         removes FILE (its parent can record its reap)
 *                         and returns 0.
 *   run_threads nofile join|live  lowers its descriptor limit to one above
 *                         its lowest free descriptor (a program one short
 *                         of its limit: one more open works, two at once
 *                         fail with EMFILE), then starts a thread that
 *                         burns 2 ms of CPU and prints "tid cpu_ns" (its
 *                         own CPU clock); join: joined before exit(); live:
 *                         then blocks, alive at exit().
 */
#include "run_file.h"
#include "../test_seccomp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t g_print = PTHREAD_MUTEX_INITIALIZER;

static void burn_us(long us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    do
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static long long mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *short_life(void *arg)
{
    long i = (long)arg;
    long long born = mono_ns();
    burn_us(200 + 100 * (i % 5));
    long long asleep = mono_ns(), sleep_ns = (1 + i % 4) * 1000000LL;
    /* At least sleep_ns off the CPU, a signal or not. */
    struct timespec until = {(asleep + sleep_ns) / 1000000000LL, (asleep + sleep_ns) % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
        ;
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    pthread_mutex_lock(&g_print);
    printf("%d %lld %lld %lld\n", gettid(), (long long)ru.ru_utime.tv_sec * 1000000000LL + ru.ru_utime.tv_usec * 1000LL,
           (long long)ru.ru_stime.tv_sec * 1000000000LL + ru.ru_stime.tv_usec * 1000LL, asleep - born + sleep_ns);
    fflush(stdout);
    pthread_mutex_unlock(&g_print);
    return NULL;
}

static _Atomic int g_tid;

static long long clock_ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Burns for us of wall time (the vDSO's clock: no system call, so nothing
 * brings the thread's runtime up to date before its end does). */
static void *burn_plain(void *arg)
{
    g_tid = gettid();
    long long until = mono_ns() + (long)arg * 1000;
    volatile unsigned long x = 0;
    while (mono_ns() < until)
        for (int i = 0; i < 1000; i++)
            x += (unsigned long)i;
    return NULL;
}

static int run_exact(long n)
{
    for (long i = 0; i < n; i++) {
        long long m0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), p0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        pthread_t t;
        if (pthread_create(&t, NULL, burn_plain, (void *)(1000 + 1000 * (i % 5))) != 0)
            return 1;
        pthread_join(t, NULL);
        /* The join returns when the thread let go of its stack; its last
         * CPU lands in the process's figure when the kernel releases it. */
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%d", g_tid);
        while (access(path, F_OK) == 0)
            sched_yield();
        long long p1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), m1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        printf("%d %lld %lld\n", g_tid, (p1 - p0) - (m1 - m0), p1 - p0);
    }
    return 0;
}

static int run_vfork(void)
{
    pid_t c = vfork();
    if (c == 0) {
        execl("/nonexistent/program", "program", (char *)NULL);
        _exit(9);
    }
    int st = 0;
    if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 9)
        return 1;
    pthread_t t;
    if (pthread_create(&t, NULL, burn_plain, (void *)1000L) != 0)
        return 1;
    pthread_join(t, NULL);
    printf("%d\n", g_tid);
    burn_plain((void *)30000L);
    return 0;
}

static void *unnamed(void *arg)
{
    g_tid = gettid();
    pthread_setname_np(pthread_self(), "");
    return arg;
}

static int g_burning; /* threads of forever() that have burned 1 ms */

static void *forever(void *arg)
{
    (void)arg;
    burn_us(1000);
    __atomic_add_fetch(&g_burning, 1, __ATOMIC_RELEASE);
    for (;;)
        burn_us(1000);
    return NULL;
}

static int g_crowd; /* threads of crowd_member() that have burned */

static void *crowd_member(void *arg)
{
    (void)arg;
    burn_us(200);
    __atomic_add_fetch(&g_crowd, 1, __ATOMIC_RELEASE);
    for (;;)
        pause();
    return NULL;
}

static long long g_busy_cpu; /* busy()'s own CPU clock, as it last read it */
static int g_busy_tid;

static void *busy(void *arg)
{
    (void)arg;
    __atomic_store_n(&g_busy_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
    for (;;)
        __atomic_store_n(&g_busy_cpu, clock_ns(CLOCK_THREAD_CPUTIME_ID), __ATOMIC_RELEASE);
    return NULL;
}

static int run_crowd(long n, int with_busy)
{
    pthread_t t;
    for (long i = 0; i < n; i++)
        if (pthread_create(&t, NULL, crowd_member, NULL) != 0)
            return 1;
    while (__atomic_load_n(&g_crowd, __ATOMIC_ACQUIRE) < n) {
        struct timespec d = {0, 1000000L};
        nanosleep(&d, NULL);
    }
    if (with_busy) {
        /* Started last, so its record is the last the exit handler reads;
         * still burning when exit() is called. */
        if (pthread_create(&t, NULL, busy, NULL) != 0)
            return 1;
        while (__atomic_load_n(&g_busy_cpu, __ATOMIC_ACQUIRE) < 1000000) {
            struct timespec d = {0, 100000L};
            nanosleep(&d, NULL);
        }
        printf("busy %d %lld\n", __atomic_load_n(&g_busy_tid, __ATOMIC_ACQUIRE),
               __atomic_load_n(&g_busy_cpu, __ATOMIC_ACQUIRE));
        fflush(stdout);
        exit(0);
    }
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        return 1;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL)
        if (e->d_name[0] != '.')
            printf("%s\n", e->d_name);
    closedir(dir);
    fflush(stdout);
    exit(0);
}

static volatile int g_stop_clone;

/* No libc inside: the thread shares the creator's TLS. */
static int clone_body(void *arg)
{
    (void)arg;
    volatile unsigned long x = 0;
    while (!g_stop_clone)
        x++;
    return 0;
}

/* Rounds threadtime's sampler has finished, as the header of this
 * process's file counts them (the file is mapped shared, so a read sees
 * each round's count), or -1 while there is no sampler (its tid is not in
 * the header yet) or no file. The file is the latest image's of this pid. */
static long sampler_rounds(void)
{
    const char *dir = getenv("THREADTIME_RUN_DIR");
    long n = -1;
    for (int i = 0; dir && i < 100; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%d-%d.ttrun", dir, (int)getpid(), i);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            break;
        uint32_t tid = 0;
        uint64_t rounds = 0;
        n = pread(fd, &tid, sizeof tid, offsetof(tt__run_header, sampler_tid)) == sizeof tid && tid &&
                    pread(fd, &rounds, sizeof rounds, offsetof(tt__run_header, sampler_rounds)) == sizeof rounds
                ? (long)rounds
                : -1;
        close(fd);
    }
    return n;
}

/* Waits until threadtime's sampler has finished two more rounds, so a
 * whole round that began after the call has read every thread alive now:
 * rounds, not the sampler's timeslices, which a loaded host can give it
 * several of within one round. -1 at once when there is no sampler. */
static int wait_sampled(void)
{
    const char *interval = getenv("THREADTIME_RUN_INTERVAL_NS");
    if (!getenv("THREADTIME_RUN_DIR") || !interval || strcmp(interval, "0") == 0)
        return -1;
    long start;
    while ((start = sampler_rounds()) < 0) { /* the sampler is started, its tid written */
        struct timespec d = {0, 10 * 1000000L};
        nanosleep(&d, NULL);
    }
    while (sampler_rounds() < start + 2) {
        struct timespec d = {0, 10 * 1000000L};
        nanosleep(&d, NULL);
    }
    return 0;
}

static int run_clone(void)
{
    /* A thread through pthread_create first: threadtime's sampler starts
     * with a process's second thread. */
    pthread_t first;
    if (pthread_create(&first, NULL, burn_plain, (void *)100L) != 0 || pthread_join(first, NULL) != 0)
        return 1;
    static char stack[1 << 16] __attribute__((aligned(16)));
    static pid_t child_tid = 1;
    pid_t tid = clone(clone_body, stack + sizeof stack,
                      CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                          CLONE_CHILD_CLEARTID,
                      NULL, NULL, NULL, &child_tid);
    if (tid < 0)
        return 1;
    printf("%d\n", tid);
    fflush(stdout);
    if (wait_sampled() != 0)
        return 3; /* not under threadtime run, or no sampler: none to wait for */
    g_stop_clone = 1;
    /* The kernel clears child_tid and wakes it when the thread ends. */
    while (__atomic_load_n(&child_tid, __ATOMIC_ACQUIRE) != 0)
        syscall(SYS_futex, &child_tid, FUTEX_WAIT, tid, NULL, NULL, 0);
    return 0;
}

/* A clone()d thread alive at exit() in a process that never called
 * pthread_create: the preload knows no thread but the main one, and only
 * the kernel's count says there is another. */
static int run_lone(void)
{
    static char stack[1 << 16] __attribute__((aligned(16)));
    pid_t tid = clone(clone_body, stack + sizeof stack,
                      CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM, NULL);
    if (tid < 0)
        return 1;
    /* The kernel's CPU clock of that thread (a dynamic clock id: the
     * tid's complement, shifted, with the per-thread and SCHED bits). */
    clockid_t c = (clockid_t)((~(unsigned)tid << 3) | 4 | 2);
    struct timespec ts = {0, 0};
    while (clock_gettime(c, &ts) == 0 && ts.tv_sec == 0 && ts.tv_nsec < 1000000)
        sched_yield();
    printf("%d %lld\n", tid, (long long)ts.tv_sec * 1000000000 + ts.tv_nsec);
    fflush(stdout);
    exit(0);
}

static pthread_barrier_t g_pair;
static _Atomic int g_finished;
static long g_pair_ms;
static int g_cpu; /* the CPU both burners are pinned to */

static void *pair_burn(void *arg)
{
    (void)arg;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(g_cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        return (void *)1;
    pthread_barrier_wait(&g_pair);
    long long c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    burn_us(g_pair_ms * 1000);
    long long c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    int order = ++g_finished;
    pthread_mutex_lock(&g_print);
    printf("pair %d %d %lld\n", gettid(), order, c1 - c0);
    pthread_mutex_unlock(&g_print);
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++) {
        struct timespec d = {0, 5 * 1000000L};
        while (nanosleep(&d, &d) != 0 && errno == EINTR)
            ;
    }
    g_tid = gettid();
    return NULL;
}

static int run_pinned(long ms)
{
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        return 1;
    for (g_cpu = 0; g_cpu < CPU_SETSIZE && !CPU_ISSET(g_cpu, &mine); g_cpu++)
        ;
    g_pair_ms = ms;
    pthread_barrier_init(&g_pair, NULL, 2);
    pthread_t t[2];
    void *rc[2] = {NULL, NULL};
    long long w0 = mono_ns();
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, pair_burn, NULL) != 0)
            return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], &rc[i]);
    printf("pairwall %lld\n", mono_ns() - w0);
    if (rc[0] || rc[1])
        return 1;
    w0 = mono_ns();
    pthread_t s;
    if (pthread_create(&s, NULL, sleeper, NULL) != 0)
        return 1;
    pthread_join(s, NULL);
    printf("sleeper %d %lld %lld\n", g_tid, 20 * 5 * 1000000LL, mono_ns() - w0);
    return 0;
}

static int g_never[2]; /* a pipe nobody writes */

static void *switcher(void *arg)
{
    int ends = arg != NULL;
    for (int i = 0; i < 50; i++) {
        struct timespec d = {0, 1000000L};
        while (nanosleep(&d, &d) != 0 && errno == EINTR)
            ;
    }
    pthread_mutex_lock(&g_print);
    printf("%s %d\n", ends ? "ends" : "stays", gettid());
    fflush(stdout);
    pthread_mutex_unlock(&g_print);
    char c;
    while (read(ends ? 0 : g_never[0], &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

static int run_switches(void)
{
    if (pipe(g_never) != 0)
        return 1;
    printf("pid %d\n", getpid());
    fflush(stdout);
    pthread_t e, s;
    if (pthread_create(&s, NULL, switcher, NULL) != 0 || pthread_create(&e, NULL, switcher, (void *)1) != 0)
        return 1;
    pthread_join(e, NULL);
    exit(0);
}

static void *burn_and_print(void *arg)
{
    (void)arg;
    burn_us(2000);
    long long cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    printf("%d %lld\n", gettid(), cpu);
    fflush(stdout);
    return NULL;
}

static int run_setuid(long n)
{
    if (getuid() != 0) {
        printf("skip: not root\n");
        return 0;
    }
    if (setuid(65534) != 0)
        return 1;
    for (long i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, burn_and_print, NULL) != 0)
            return 1;
        pthread_join(t, NULL);
    }
    return 0;
}

/* A child traced by the caller (ptrace), stopped before it goes on: 0 in
 * the child, its pid in the parent, -1 (nothing started), or -2 when the
 * kernel refuses the tracing (a sandbox: "skip" printed). The
 * parent's options: syscall stops told apart (TRACESYSGOOD), the child
 * killed if the parent dies, and `more`. */
static pid_t traced_fork(long more)
{
    pid_t c = fork();
    if (c == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
            _exit(77);
        raise(SIGSTOP); /* the tracer sets its options */
        return 0;
    }
    int st;
    if (c < 0 || waitpid(c, &st, 0) != c)
        return -1;
    if (WIFEXITED(st)) {
        printf("skip: ptrace(PTRACE_TRACEME) refused\n");
        return -2;
    }
    return ptrace(PTRACE_SETOPTIONS, c, NULL, (void *)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL | more)) == 0 ? c : -1;
}

/* At a syscall stop of tid: 1 and *info filled, else 0. */
static int syscall_stop(pid_t tid, int st, struct __ptrace_syscall_info *info)
{
    return WIFSTOPPED(st) && WSTOPSIG(st) == (SIGTRAP | 0x80) &&
           ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof *info, info) > 0;
}

static pid_t g_zombie;

static void reap_zombie(int sig)
{
    (void)sig;
    int e = errno;
    waitpid(g_zombie, NULL, 0);
    errno = e;
}

static void handler_child(void)
{
    struct sigaction sa = {.sa_handler = reap_zombie, .sa_flags = SA_RESTART};
    sigaction(SIGUSR1, &sa, NULL);
    if ((g_zombie = fork()) == 0)
        _exit(0);
    siginfo_t si;
    if (g_zombie < 0 || waitid(P_PID, (id_t)g_zombie, &si, WEXITED | WNOWAIT) != 0)
        _exit(1);
    burn_us(20000);
    exit(0);
}

static int run_handler(void)
{
    pid_t c = traced_fork(0);
    if (c == 0)
        handler_child();
    if (c < 0)
        return c == -2 ? 0 : 1;
    int st;
    struct rusage ru;
    long nr = -1;
    int sig = 0, sent = 0;
    for (;;) {
        if (ptrace(PTRACE_SYSCALL, c, NULL, (void *)(long)sig) != 0 || wait4(c, &st, 0, &ru) != c)
            return 1;
        sig = 0;
        if (WIFEXITED(st) || WIFSIGNALED(st))
            break;
        struct __ptrace_syscall_info info;
        if (!syscall_stop(c, st, &info)) {
            sig = WSTOPSIG(st); /* a signal for it: delivered */
            continue;
        }
        if (info.op == PTRACE_SYSCALL_INFO_ENTRY)
            nr = (long)info.entry.nr;
        else if (info.op == PTRACE_SYSCALL_INFO_EXIT && nr == SYS_getrusage && !sent)
            sent = kill(c, SIGUSR1) == 0;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !sent)
        return 1;
    printf("%d %lld\n", c,
           (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL);
    return 0;
}

static int g_burn[2], g_go[2]; /* the tracer's word to the burner (how much), and to main (exit) */

static void *burner(void *arg)
{
    (void)arg;
    long long need = 0;
    if (read(g_burn[0], &need, sizeof need) != sizeof need)
        return NULL;
    while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < need)
        for (volatile int i = 0; i < 100000; i++)
            ;
    raise(SIGUSR2); /* tells the tracer (which drops the signal) */
    char c;
    while (read(g_never[0], &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

/* The child of run_exitwait: a burner thread that waits for its word, and
 * exit() once the tracer says. */
static void exitwait_child(void)
{
    pthread_t t;
    char c;
    if (pthread_create(&t, NULL, burner, NULL) != 0 || read(g_go[0], &c, 1) != 1)
        _exit(1);
    exit(0);
}

static int run_exitwait(void)
{
    if (pipe(g_burn) != 0 || pipe(g_go) != 0 || pipe(g_never) != 0)
        return 1;
    pid_t c = traced_fork(PTRACE_O_TRACECLONE);
    if (c == 0)
        exitwait_child();
    if (c < 0)
        return c == -2 ? 0 : 1;
    long long c0 = mono_ns(); /* before the burner's start */
    pid_t sampler = 0, burn = 0, held_sampler = 0, held_main = 0;
    long long need = 0;
    int st, go = 0, burned = 0;
    ptrace(PTRACE_SYSCALL, c, NULL, NULL);
    while (!burned) {
        pid_t tid = waitpid(-1, &st, __WALL);
        if (tid < 0 || !WIFSTOPPED(st))
            return 1; /* nothing ends before the burner has burned */
        burned = tid == burn && need && WSTOPSIG(st) == SIGUSR2;
        struct __ptrace_syscall_info info;
        int sig = 0, cont = tid == burn, sys = syscall_stop(tid, st, &info);
        if (sys && info.op == PTRACE_SYSCALL_INFO_ENTRY) {
            long nr = (long)info.entry.nr;
            if (nr == SYS_prctl && info.entry.args[0] == PR_SET_NAME && !sampler)
                sampler = tid; /* the preload's sampler names itself */
            else if (nr == SYS_read && info.entry.args[0] == (unsigned long)g_burn[0])
                burn = tid, cont = 1;
            else if (tid == sampler && nr == SYS_openat && !held_sampler)
                held_sampler = tid; /* in a round: listing the threads */
            else if (tid == c && go && (nr == SYS_clock_nanosleep || nr == SYS_nanosleep))
                held_main = tid; /* in the exit handler's wait for the round */
        } else if (!sys && WSTOPSIG(st) != SIGSTOP && WSTOPSIG(st) != SIGTRAP && !burned) {
            sig = WSTOPSIG(st); /* a signal for the program: delivered */
        }
        if (held_sampler && burn && !go)
            go = write(g_go[1], "g", 1) == 1;
        if (held_main && !need) {
            need = mono_ns() - c0 + 20000000; /* more than the burner's life before the wait */
            if (write(g_burn[1], &need, sizeof need) != sizeof need)
                return 1;
        }
        if (tid != held_sampler && tid != held_main && !burned)
            ptrace(cont ? PTRACE_CONT : PTRACE_SYSCALL, tid, NULL, (void *)(long)sig);
    }
    /* Let all go, untraced: the burner without its signal. */
    ptrace(PTRACE_DETACH, burn, NULL, NULL);
    ptrace(PTRACE_DETACH, held_sampler, NULL, NULL);
    ptrace(PTRACE_DETACH, held_main, NULL, NULL);
    if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 1;
    printf("%d %lld\n", burn, need);
    return 0;
}

static void on_sigsys(int sig, siginfo_t *si, void *p)
{
    (void)sig;
    (void)si;
    sigsys_fail_call(p);
    if (write(1, "T", 1) != 1)
        _exit(3);
}

static int run_sigsys(void)
{
#ifndef FILTER_ARCH
    printf("skip\n");
    return 0;
#endif
    struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
    if (sigaction(SIGSYS, &sa, NULL) != 0 || install_filter(__NR_openat, -1, SECCOMP_RET_TRAP, 0) != 0)
        return 1;
    printf("installed\n");
    fflush(stdout);
    return 0;
}

/* A filter that kills the process on prctl(PR_GET_SECCOMP), as a strict
 * one kills on a prctl option it does not list, installed after load; the
 * process then returns 0. */
static int run_vfork_privs(void)
{
#ifndef FILTER_ARCH
    printf("skip\n");
    return 0;
#endif
    /* libc's prctl through the preload looked up by the parent first: the
     * child borrows the parent's memory and should run little code. */
    char name[16];
    if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
        return 1;
    pid_t c = vfork();
    if (c == 0)
        _exit(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : 1);
    int st = 0;
    if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 1;
    struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
    if (sigaction(SIGSYS, &sa, NULL) != 0 || install_filter(__NR_prctl, PR_GET_SECCOMP, SECCOMP_RET_TRAP, 2) != 0)
        return 1;
    printf("installed\n");
    fflush(stdout);
    return 0;
}

static int run_getseccomp(int raw_seccomp)
{
#ifndef FILTER_ARCH
    printf("skip\n");
    return 0;
#endif
    if (install_filter(__NR_prctl, PR_GET_SECCOMP, SECCOMP_RET_KILL_PROCESS, raw_seccomp) != 0)
        return 1;
    printf("installed\n");
    fflush(stdout);
    return 0;
}

static void *errno_at_start(void *p)
{
    *(int *)p = errno;
    return NULL;
}

static void errno_round(void)
{
    pthread_t t;
    int seen = -1;
    errno = 4242;
    int rc = pthread_create(&t, NULL, errno_at_start, &seen);
    int e = errno;
    if (rc == 0)
        pthread_join(t, NULL);
    printf("create %d %d %d\n", rc, e, seen);
    fflush(stdout);
}

static int run_errno(int at_start)
{
    printf("start %d\n", at_start);
    fflush(stdout);
    pid_t c = fork();
    if (c < 0)
        return 1;
    if (c == 0) {
        errno_round();
        _exit(0);
    }
    int st;
    if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 1;
    errno_round();
    return 0;
}

static int run_diskfull(const char *path)
{
    static const char page[4096];
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return 1;
    off_t size = 0;
    ssize_t w;
    while ((w = write(fd, page, sizeof page)) == (ssize_t)sizeof page)
        size += w;
    if (w >= 0 || errno != ENOSPC || size < (off_t)sizeof page || ftruncate(fd, size - (off_t)sizeof page) != 0)
        return 1;
    close(fd);
    pthread_t t;
    if (pthread_create(&t, NULL, burn_and_print, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 1;
    return unlink(path) != 0;
}

static int g_burned; /* nofile's thread has printed */

static void *burn_print_block(void *arg)
{
    burn_and_print(arg);
    __atomic_store_n(&g_burned, 1, __ATOMIC_RELEASE);
    for (;;)
        pause();
    return NULL;
}

static int run_nofile(int live)
{
    int free_fd = dup(0);
    if (free_fd < 0 || close(free_fd) != 0)
        return 1;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1;
    rl.rlim_cur = (rlim_t)free_fd + 1;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1;
    pthread_t t;
    if (pthread_create(&t, NULL, live ? burn_print_block : burn_and_print, NULL) != 0)
        return 1;
    if (!live)
        return pthread_join(t, NULL) != 0;
    while (!__atomic_load_n(&g_burned, __ATOMIC_ACQUIRE)) {
        struct timespec d = {0, 1000000L};
        nanosleep(&d, NULL);
    }
    exit(0);
}

int main(int argc, char **argv)
{
    int errno_at_start = errno;
    if (argc == 2 && strcmp(argv[1], "sigsys") == 0)
        return run_sigsys();
    if (argc == 2 && strcmp(argv[1], "vforkprivs") == 0)
        return run_vfork_privs();
    if (argc == 3 && strcmp(argv[1], "getseccomp") == 0)
        return run_getseccomp(strcmp(argv[2], "raw") == 0);
    if (argc == 2 && strcmp(argv[1], "errno") == 0)
        return run_errno(errno_at_start);
    if (argc == 2 && strcmp(argv[1], "handler") == 0)
        return run_handler();
    if (argc == 2 && strcmp(argv[1], "exitwait") == 0)
        return run_exitwait();
    if (argc == 3 && strcmp(argv[1], "setuid") == 0)
        return run_setuid(atol(argv[2]));
    if (argc == 3 && strcmp(argv[1], "diskfull") == 0)
        return run_diskfull(argv[2]);
    if (argc == 3 && strcmp(argv[1], "nofile") == 0)
        return run_nofile(strcmp(argv[2], "live") == 0);
    if (argc == 3 && strcmp(argv[1], "pinned") == 0)
        return run_pinned(atol(argv[2]));
    if (argc == 2 && strcmp(argv[1], "switches") == 0)
        return run_switches();
    if (argc == 2 && strcmp(argv[1], "clone") == 0)
        return run_clone();
    if (argc == 2 && strcmp(argv[1], "lone") == 0)
        return run_lone();
    if (argc == 3 && strcmp(argv[1], "crowd") == 0)
        return run_crowd(atol(argv[2]), 0);
    if (argc == 4 && strcmp(argv[1], "crowd") == 0 && strcmp(argv[3], "busy") == 0)
        return run_crowd(atol(argv[2]), 1);
    if (argc == 2 && strcmp(argv[1], "noname") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, unnamed, NULL) != 0)
            return 1;
        pthread_join(t, NULL);
        printf("%d\n", g_tid);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "vfork") == 0)
        return run_vfork();
    if (argc == 3 && strcmp(argv[1], "exact") == 0)
        return run_exact(atol(argv[2]));
    if (argc == 3 && strcmp(argv[1], "short") == 0) {
        long n = atol(argv[2]);
        pthread_t *t = calloc((size_t)n, sizeof *t);
        for (long i = 0; i < n; i++)
            if (pthread_create(&t[i], NULL, short_life, (void *)i) != 0)
                return 1;
        for (long i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        free(t);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "kill") == 0) {
        pthread_t t;
        for (long i = 0; i < 10; i++) {
            if (pthread_create(&t, NULL, short_life, (void *)i) != 0)
                return 1;
            pthread_join(t, NULL);
        }
        for (int i = 0; i < 2; i++)
            if (pthread_create(&t, NULL, forever, NULL) != 0)
                return 1;
        /* Both have CPU, then a round of the sampler has read it: a
         * count of events, not a time. */
        while (__atomic_load_n(&g_burning, __ATOMIC_ACQUIRE) < 2) {
            struct timespec d = {0, 1000000L};
            nanosleep(&d, NULL);
        }
        wait_sampled();
        kill(getpid(), SIGKILL);
    }
    fprintf(stderr, "usage: run_threads short N | exact N | sigsys | getseccomp prctl|raw | vforkprivs | errno | vfork | noname | kill | clone | lone | crowd N [busy] | pinned MS | switches | handler | setuid N | exitwait | nofile join|live | diskfull FILE\n");
    return 2;
}
