/* CPU clocks: monotonicity under load, the consistent split's guarantees,
 * agreement with /proc and getrusage, exited and foreign threads. */
#include "tt_test.h"
#include "threadtime/threadtime.h"
#include "prim/clockid.h"
#include "read_clock.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS INT64_C(1000000)

/* Burns user CPU and makes system calls until the calling thread's precise
 * clock advanced by ns (bounded by 20 s of wall time). */
static void burn(int64_t ns)
{
    int64_t start = tt_self_total_ns();
    volatile uint64_t x = 1;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (tt_self_total_ns() - start < ns) {
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005u + 1;
        (void)getppid(); /* a little system time */
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 20)
            break;
    }
}

static void check_split(const tt_times *t)
{
    CHECK_OP(t->user_ns, >=, 0);
    CHECK_OP(t->system_ns, >=, 0);
    CHECK_OP(t->user_ns + t->system_ns, ==, t->total_ns);
    CHECK_OP(t->user_ns, <=, t->total_ns);
}

TT_TEST(self_clocks_are_positive_and_ordered)
{
    burn(20 * MS);
    int64_t virt = tt_self_user_raw_ns();
    int64_t prof = tt_self_prof_raw_ns();
    int64_t total = tt_self_total_ns();
    CHECK_OP(total, >=, 20 * MS);
    CHECK_OP(virt, >=, 0);
    /* Read in this order, PROF (user+system ticks) can't be below VIRT. */
    CHECK_OP(prof, >=, virt);
    CHECK_OP(tt_self_system_raw_ns(), >=, 0);
    tt_times t;
    CHECK_OP(tt_self_times(&t), ==, 0);
    check_split(&t);
}

/* ---- N threads: each checks its own clocks never run backwards ---- */

#define WORKERS 4
#define ROUNDS 3000
static _Atomic int monotonic_failures;

static void *monotonic_worker(void *arg)
{
    (void)arg;
    int64_t last_total = 0, last_virt = 0, last_prof = 0;
    tt_times last = {0, 0, 0};
    volatile uint64_t x = 1;
    for (int i = 0; i < ROUNDS; i++) {
        for (int j = 0; j < 2000; j++)
            x += x * 3 + (uint64_t)j;
        if (i % 3 == 0)
            (void)getppid();
        int64_t total = tt_self_total_ns(), virt = tt_self_user_raw_ns(), prof = tt_self_prof_raw_ns();
        tt_times t;
        int bad = total < last_total || virt < last_virt || prof < last_prof;
        bad |= tt_self_times(&t) != 0;
        bad |= t.user_ns < last.user_ns || t.system_ns < last.system_ns || t.total_ns < last.total_ns;
        bad |= t.user_ns + t.system_ns != t.total_ns;
        if (bad)
            atomic_fetch_add(&monotonic_failures, 1);
        last_total = total, last_virt = virt, last_prof = prof, last = t;
    }
    return NULL;
}

/* Runs the workers at once and checks none saw a clock go backwards. */
static void run_monotonic_workers(void)
{
    pthread_t th[WORKERS];
    atomic_store(&monotonic_failures, 0);
    for (int i = 0; i < WORKERS; i++)
        CHECK_OP(pthread_create(&th[i], NULL, monotonic_worker, NULL), ==, 0);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
    CHECK_OP(atomic_load(&monotonic_failures), ==, 0);
}

TT_TEST(clocks_monotonic_across_threads) { run_monotonic_workers(); }

/* Same guarantees with the clockid-scaled split (ns resolution). */
TT_TEST(clockid_split_monotonic_across_threads)
{
    CHECK_OP(tt_method_set(TT_METHOD_CLOCKID), ==, 0);
    run_monotonic_workers();
    CHECK_OP(tt_method_set(TT_METHOD_AUTO), ==, 0);
}

TT_TEST(agrees_with_proc_and_getrusage)
{
    burn(60 * MS);
    int64_t before = tt_self_total_ns();
    tt_procfs_stat st;
    tt_times ru, own;
    CHECK_OP(tt_procfs_read(0, gettid(), &st), ==, 0);
    CHECK_OP(tt_getrusage_thread(&ru), ==, 0);
    CHECK_OP(tt_self_times(&own), ==, 0);
    int64_t after = tt_self_total_ns();
    long hz = sysconf(_SC_CLK_TCK);
    int64_t tick = INT64_C(1000000000) / (hz > 0 ? hz : 100);
    /* /proc truncates user and system to clock ticks each. */
    CHECK_OP(st.user_ns + st.system_ns, <=, after);
    CHECK_OP(st.user_ns + st.system_ns, >=, before - 2 * tick);
    /* getrusage truncates each part to microseconds. */
    CHECK_OP(ru.total_ns, <=, after);
    CHECK_OP(ru.total_ns, >=, before - 2000);
    /* The split's total is the precise one (from the fast clock). */
    CHECK_OP(own.total_ns, <=, after + TT_FAST_BOUND_NS);
    CHECK_OP(own.total_ns, >=, before);
    check_split(&ru);
}

/* Burns ns of wall time reading nothing but CLOCK_MONOTONIC (the vDSO, no
 * system call): no CPU-clock read inside, so only the kernel's own ticks
 * and switches bring its record of this thread's runtime up to date. */
static void burn_wall(int64_t ns)
{
    volatile uint64_t x = 1;
    int64_t start = tt__read_clock(CLOCK_MONOTONIC);
    while (tt__read_clock(CLOCK_MONOTONIC) - start < ns)
        for (int i = 0; i < 1000; i++)
            x = x * 6364136223846793005u + 1;
}

/* CPU time of the calling thread between a split read's sample and the
 * truth read after it: the rest of the call and the entry of the next, a
 * few us; an interrupt the kernel charges to the thread may add some. */
#define SAMPLE_TO_TRUTH_NS (250 * INT64_C(1000))

typedef int (*split_reader)(void *ctx, tt_times *out);

/* 50 bursts of ~3 ms. The truth is the kernel's clock (truth_id) read
 * around each split read: a split is never below a read taken before it
 * and never above one taken after it plus TT_FAST_BOUND_NS (its total may
 * come from the fast clock), and over a burst it moves with the truth.
 * getrusage() alone lags by up to a tick (4 ms at HZ=250). */
static void split_keeps_up(split_reader read, void *ctx, clockid_t truth_id)
{
    tt_times a, b, last;
    CHECK_OP(read(ctx, &last), ==, 0); /* the fast clock's start is paid here */
    for (int i = 0; i < 50; i++) {
        int64_t before = tt__read_clock(truth_id);
        CHECK_OP(read(ctx, &a), ==, 0);
        int64_t c0 = tt__read_clock(truth_id);
        burn_wall(3 * MS);
        CHECK_OP(read(ctx, &b), ==, 0);
        int64_t c1 = tt__read_clock(truth_id);
        CHECK_OP(a.total_ns, >=, before);
        CHECK_OP(a.total_ns, <=, c0 + TT_FAST_BOUND_NS);
        CHECK_OP(b.total_ns, <=, c1 + TT_FAST_BOUND_NS);
        /* a is at most the bound above c0; b is at least the runtime at
         * its own sample, which c1 passes by SAMPLE_TO_TRUTH_NS at most. */
        CHECK_OP(b.total_ns - a.total_ns, >=, c1 - c0 - TT_FAST_BOUND_NS - SAMPLE_TO_TRUTH_NS);
        check_split(&a);
        check_split(&b);
        CHECK_OP(a.user_ns, >=, last.user_ns);
        CHECK_OP(a.system_ns, >=, last.system_ns);
        CHECK_OP(b.user_ns, >=, a.user_ns);
        CHECK_OP(b.system_ns, >=, a.system_ns);
        last = b;
    }
}

static int read_self_times(void *ctx, tt_times *out)
{
    (void)ctx;
    return tt_self_times(out);
}

static int read_handle_times(void *ctx, tt_times *out) { return tt_thread_times(ctx, out); }

static int read_process_times(void *ctx, tt_times *out)
{
    (void)ctx;
    return tt_process_times(0, out);
}

TT_TEST(self_split_total_is_the_precise_total)
{
    split_keeps_up(read_self_times, NULL, CLOCK_THREAD_CPUTIME_ID);
}

TT_TEST(own_handle_split_total_is_the_precise_total)
{
    tt_thread *h;
    CHECK_OP(tt_thread_open(0, &h), ==, 0);
    split_keeps_up(read_handle_times, h, CLOCK_THREAD_CPUTIME_ID);
    tt_thread_close(h);
}

/* The process: getrusage(RUSAGE_SELF) brings the calling thread up to date
 * but truncates each part to us, so alone it reads below a process clock
 * read just before it. */
TT_TEST(process_split_total_is_the_precise_total)
{
    split_keeps_up(read_process_times, NULL, CLOCK_PROCESS_CPUTIME_ID);
}

/* The split's parts follow the kernel's: tt_self_times proportions its
 * total by the getrusage() split read when the fast clock's anchor was set,
 * so each part lies at most one tick (10 ms at HZ >= 100) plus one anchor's
 * span below what getrusage() says just before. The work is about half
 * system calls, so a proportion that lost track (or swapped the parts)
 * falls behind by far more over 200 ms. */
TT_TEST(self_split_parts_follow_the_kernels)
{
    const int64_t slack = 10 * MS + TT_FAST_BOUND_NS;
    tt_times k, t, last = {0, 0, 0};
    int64_t start = tt__read_clock(CLOCK_THREAD_CPUTIME_ID);
    while (tt__read_clock(CLOCK_THREAD_CPUTIME_ID) - start < 200 * MS) {
        volatile uint64_t x = 1;
        for (int i = 0; i < 200; i++) {
            x = x * 6364136223846793005u + 1;
            (void)getppid();
        }
        CHECK_OP(tt_getrusage_thread(&k), ==, 0);
        CHECK_OP(tt_self_times(&t), ==, 0);
        CHECK_OP(t.user_ns, >=, k.user_ns - slack);
        CHECK_OP(t.system_ns, >=, k.system_ns - slack);
        CHECK_OP(t.user_ns, >=, last.user_ns);
        CHECK_OP(t.system_ns, >=, last.system_ns);
        check_split(&t);
        last = t;
    }
    fprintf(stderr, "  kernel %lld/%lld us, split %lld/%lld us (user/system)\n", (long long)k.user_ns / 1000,
            (long long)k.system_ns / 1000, (long long)t.user_ns / 1000, (long long)t.system_ns / 1000);
}

/* The kernel's own PROF clock of the calling thread (pid 0 = the caller),
 * read directly with clock_gettime. */
static int64_t kernel_prof_ns(void)
{
    return tt__read_clock(TT__SELF_THREAD_CLOCK(TT__CPUCLOCK_PROF));
}

/* Raw tick clocks are samples, not measurements: for a thread that does
 * mostly user work they land near the precise clock, but only to within
 * ticks (and steal time in a VM), and under load the tick can miss a
 * running thread for hundreds of ms, so no test expects one to move with
 * work. What callers may rely on: the raw call answers the kernel's own
 * clock (between two direct reads of it), and stays in a loose band. */
TT_TEST(raw_clocks_are_tick_samples_of_the_precise_clock)
{
    int64_t s0 = tt_self_total_ns(), k0 = kernel_prof_ns(), p0 = tt_self_prof_raw_ns(), k1 = kernel_prof_ns();
    burn(300 * MS);
    int64_t k2 = kernel_prof_ns(), p1 = tt_self_prof_raw_ns(), k3 = kernel_prof_ns(), s1 = tt_self_total_ns();
    CHECK(k0 >= 0 && k0 <= p0 && p0 <= k1);
    CHECK(k2 >= 0 && k2 <= p1 && p1 <= k3);
    CHECK_OP(p1 - p0, <=, (s1 - s0) + 100 * MS);
}

/* ---- another thread by tid: busy vs sleeping, exit, foreign tid ---- */

enum { PEER_NAPS, PEER_BURNS, PEER_BLOCKS };

typedef struct peer {
    _Atomic pid_t tid;
    _Atomic int stop;
    int kind;
    int wake[2]; /* PEER_BLOCKS: a pipe its first read blocks on */
    tt_thread *self_handle;
} peer;

static void *peer_main(void *arg)
{
    peer *p = arg;
    tt_thread_open(0, &p->self_handle);
    atomic_store(&p->tid, gettid());
    /* Nothing between publishing the tid and this read can sleep, so once
     * the thread shows as sleeping it is blocked here. */
    char c;
    if (p->kind == PEER_BLOCKS && read(p->wake[0], &c, 1) != 1)
        abort();
    while (!atomic_load(&p->stop)) {
        if (p->kind == PEER_BURNS)
            burn(5 * MS);
        else
            usleep(2000);
    }
    return NULL;
}

static void start_peer(peer *p, pthread_t *th, int kind)
{
    *p = (peer){.kind = kind, .wake = {-1, -1}};
    if (kind == PEER_BLOCKS && pipe(p->wake) != 0)
        abort();
    pthread_create(th, NULL, peer_main, p);
    while (atomic_load(&p->tid) == 0)
        usleep(100);
}

TT_TEST(busy_and_sleeping_threads_by_tid)
{
    peer busy, idle;
    pthread_t tb, ti;
    start_peer(&busy, &tb, PEER_BURNS);
    start_peer(&idle, &ti, PEER_BLOCKS);
    /* Until the idle thread is blocked on its pipe (bounded): from then on
     * its clock stands still however the threads are scheduled. */
    tt_procfs_stat st = {0};
    for (int i = 0; i < 60000 && !(tt_procfs_read(0, idle.tid, &st) == 0 && st.state == 'S'); i++)
        usleep(1000);
    CHECK_OP(st.state, ==, 'S');
    int64_t b0 = tt_tid_total_ns(busy.tid), i0 = tt_tid_total_ns(idle.tid);
    CHECK_OP(b0, >=, 0);
    CHECK_OP(i0, >=, 0);
    /* Wait until the busy thread has burnt 100 ms more (bounded). */
    for (int i = 0; i < 2000 && tt_tid_total_ns(busy.tid) - b0 < 100 * MS; i++)
        usleep(10000);
    int64_t b1 = tt_tid_total_ns(busy.tid), i1 = tt_tid_total_ns(idle.tid);
    CHECK_OP(b1 - b0, >=, 100 * MS);
    /* Each tid gets its own clock: the blocked one did not move at all
     * while the busy one (and the caller) ran. */
    CHECK_OP(i1, ==, i0);
    /* User first: PROF (user + system) read after it can't be below it,
     * however long the busy thread runs between the two reads. */
    int64_t busy_user = tt_tid_user_raw_ns(busy.tid);
    CHECK_OP(busy_user, >=, 0);
    CHECK_OP(tt_tid_prof_raw_ns(busy.tid), >=, busy_user);
    CHECK_OP(tt_tid_system_raw_ns(busy.tid), >=, 0);

    /* A handle on another tid: consistent and monotonic. */
    tt_thread *h;
    CHECK_OP(tt_thread_open(busy.tid, &h), ==, 0);
    CHECK_OP(tt_thread_tid(h), ==, busy.tid);
    tt_times a, b;
    CHECK_OP(tt_thread_times(h, &a), ==, 0);
    usleep(20000);
    CHECK_OP(tt_thread_times(h, &b), ==, 0);
    check_split(&a);
    check_split(&b);
    CHECK_OP(b.user_ns, >=, a.user_ns);
    CHECK_OP(b.system_ns, >=, a.system_ns);
    CHECK_OP(tt_thread_total_ns(h), >=, b.total_ns);
    tt_thread_close(h);

    atomic_store(&busy.stop, 1);
    atomic_store(&idle.stop, 1);
    CHECK_OP(write(idle.wake[1], "", 1), ==, 1);
    pthread_join(tb, NULL);
    pthread_join(ti, NULL);
    close(idle.wake[0]);
    close(idle.wake[1]);
    tt_thread_close(busy.self_handle);
    tt_thread_close(idle.self_handle);
}

TT_TEST(exited_thread_gives_esrch)
{
    peer p;
    pthread_t th;
    start_peer(&p, &th, PEER_NAPS);
    pid_t tid = p.tid;
    tt_thread *other;
    CHECK_OP(tt_thread_open(tid, &other), ==, 0);
    CHECK_OP(tt_thread_total_ns(p.self_handle), >=, 0);
    atomic_store(&p.stop, 1);
    pthread_join(th, NULL);
    /* The self-opened handle knows its thread is gone, reuse or not. */
    CHECK_OP(tt_thread_total_ns(p.self_handle), ==, -ESRCH);
    CHECK_OP(tt_thread_user_raw_ns(p.self_handle), ==, -ESRCH);
    tt_times t;
    CHECK_OP(tt_thread_times(p.self_handle, &t), ==, -ESRCH);
    /* By tid, and through a handle opened by tid: the kernel's answer, once
     * the kernel has finished the task. pthread_join() returns when the
     * thread has cleared its tid, which comes before the end of its exit, so
     * under load the clock can still be read for a moment: wait for the task
     * to be gone (bounded), not for luck. */
    for (int ms = 0; ms < 60000 && syscall(SYS_tgkill, getpid(), tid, 0) == 0; ms++)
        usleep(1000);
    CHECK_OP(tt_tid_total_ns(tid), ==, -ESRCH);
    CHECK_OP(tt_tid_user_raw_ns(tid), ==, -ESRCH);
    CHECK_OP(tt_thread_times(other, &t), ==, -ESRCH);
    tt_thread *again;
    CHECK_OP(tt_thread_open(tid, &again), ==, -ESRCH);
    CHECK(again == NULL);
    tt_thread_close(other);
    tt_thread_close(p.self_handle);
}

TT_TEST(foreign_tid_and_other_process)
{
    pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    CHECK_OP(child, >, 0);
    /* A thread clock may only name a thread of our own process. */
    CHECK_OP(tt_tid_total_ns(child), ==, -EINVAL);
    tt_thread *h;
    CHECK_OP(tt_thread_open(child, &h), ==, -EINVAL);
    /* A process clock may name any process. */
    CHECK_OP(tt_process_total_ns(child), >=, 0);
    CHECK_OP(tt_process_user_raw_ns(child), >=, 0);
    tt_times t;
    CHECK_OP(tt_process_times(child, &t), ==, 0);
    check_split(&t);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    CHECK_OP(tt_process_total_ns(child), ==, -ESRCH);
    CHECK_OP(tt_process_times(child, &t), ==, -ESRCH);
}

TT_TEST(process_clocks)
{
    burn(10 * MS);
    tt_times t;
    CHECK_OP(tt_process_times(0, &t), ==, 0);
    check_split(&t);
    int64_t total = tt_process_total_ns(0);
    CHECK_OP(total, >=, t.total_ns - 2000);
    CHECK_OP(total, >=, tt_self_total_ns() - 1000 * MS); /* includes this thread */
    CHECK_OP(tt_process_prof_raw_ns(0), >=, 0);
    int64_t kernel = tt__read_clock(CLOCK_PROCESS_CPUTIME_ID);
    CHECK_OP(kernel, >=, 0);
    CHECK_OP(tt_process_total_ns(0), >=, kernel);
}

/* The clockid encoding matches what glibc builds for the same thread. */
TT_TEST(clockid_encoding_matches_glibc)
{
    clockid_t glibc_id, ours;
    CHECK_OP(pthread_getcpuclockid(pthread_self(), &glibc_id), ==, 0);
    CHECK_OP(tt_make_clockid(gettid(), 1, TT_CLOCK_SCHED, &ours), ==, 0);
    CHECK_OP(ours, ==, glibc_id);
    CHECK_OP(clock_getcpuclockid(getpid(), &glibc_id), ==, 0);
    CHECK_OP(tt_make_clockid(getpid(), 0, TT_CLOCK_SCHED, &ours), ==, 0);
    CHECK_OP(ours, ==, glibc_id);
    /* The caller's own clocks: pid bits all ones. */
    CHECK_OP(tt_make_clockid(0, 1, TT_CLOCK_VIRT, &ours), ==, 0);
    CHECK_OP(ours, ==, -3);
    CHECK_OP(tt_clock_ns(0, 1, TT_CLOCK_SCHED), >=, 0);
    CHECK_OP(tt_clock_ns(0, 0, TT_CLOCK_SCHED), >=, tt_clock_ns(0, 1, TT_CLOCK_SCHED) - 1000 * MS);
}

TT_TEST(bad_arguments)
{
    clockid_t id;
    CHECK_OP(tt_make_clockid(0, 1, (tt_clock)3, &id), ==, -EINVAL);
    CHECK_OP(tt_make_clockid(-1, 1, TT_CLOCK_SCHED, &id), ==, -EINVAL);
    CHECK_OP(tt_make_clockid(0, 1, TT_CLOCK_SCHED, NULL), ==, -EFAULT);
    CHECK_OP(tt_tid_total_ns(-5), ==, -EINVAL);
    CHECK_OP(tt_tid_total_ns(1 << 30), ==, -EINVAL);
    CHECK_OP(tt_process_total_ns(-1), ==, -EINVAL);
    CHECK_OP(tt_self_times(NULL), ==, -EFAULT);
    CHECK_OP(tt_process_times(0, NULL), ==, -EFAULT);
    CHECK_OP(tt_getrusage_thread(NULL), ==, -EFAULT);
    CHECK_OP(tt_thread_open(0, NULL), ==, -EFAULT);
    CHECK_OP(tt_thread_open(-2, &(tt_thread *){NULL}), ==, -EINVAL);
    CHECK_OP(tt_thread_total_ns(NULL), ==, -EFAULT);
    CHECK_OP(tt_thread_times(NULL, NULL), ==, -EFAULT);
    CHECK_OP(tt_thread_tid(NULL), ==, -EFAULT);
    tt_thread_close(NULL);
    CHECK_OP(tt_method_set((tt_method)42), ==, -EINVAL);
    CHECK(tt_method_name((tt_method)42) == NULL);
    CHECK(strcmp(tt_strerror(-ESRCH), tt_strerror(ESRCH)) == 0);
    CHECK(strlen(tt_strerror(-ENOSPC)) > 0);
    CHECK(strcmp(tt_strerror(-999999), "unknown error") == 0);
    /* EPERM also comes from a file that may not be replaced: the seccomp
     * hint names the clock calls it is about. */
    CHECK(strstr(tt_strerror(-EPERM), "from a CPU clock call") != NULL);
    CHECK(strcmp(tt_version(), TT_VERSION_STRING) == 0);
}

/* Any int64_t is a valid argument: the extremes (whose negation overflows)
 * and everything past the kernel's errno range read "unknown error". */
TT_TEST(strerror_of_any_value_is_defined)
{
    static const int64_t unknown[] = {INT64_MIN, INT64_MIN + 1, INT64_MAX, -4096, 4096,
                                      (int64_t)INT32_MIN, (int64_t)INT32_MAX, (int64_t)UINT32_MAX + 1};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *text = tt_strerror(unknown[i]);
        CHECK(text != NULL && strcmp(text, "unknown error") == 0);
    }
    CHECK(strcmp(tt_strerror(0), "success") == 0);
    CHECK(strcmp(tt_strerror(-4095), "unknown error") == 0); /* in range, but no errno */
    CHECK(strlen(tt_strerror(-EPERM)) > 0);
}

/* Readers on many threads share one handle; each sees a monotonic split. */
#define READERS 4
static tt_thread *shared_handle;
static _Atomic int shared_failures;

static void *shared_reader(void *arg)
{
    (void)arg;
    tt_times last = {0, 0, 0}, t;
    for (int i = 0; i < 2000; i++) {
        if (tt_thread_times(shared_handle, &t) != 0 || t.user_ns < last.user_ns ||
            t.system_ns < last.system_ns || t.user_ns + t.system_ns != t.total_ns)
            atomic_fetch_add(&shared_failures, 1);
        last = t;
    }
    return NULL;
}

TT_TEST(one_handle_many_readers)
{
    peer busy;
    pthread_t tb, th[READERS];
    start_peer(&busy, &tb, PEER_BURNS);
    CHECK_OP(tt_thread_open(busy.tid, &shared_handle), ==, 0);
    for (int i = 0; i < READERS; i++)
        pthread_create(&th[i], NULL, shared_reader, NULL);
    for (int i = 0; i < READERS; i++)
        pthread_join(th[i], NULL);
    CHECK_OP(atomic_load(&shared_failures), ==, 0);
    atomic_store(&busy.stop, 1);
    pthread_join(tb, NULL);
    tt_thread_close(shared_handle);
    tt_thread_close(busy.self_handle);
}

TT_TEST_MAIN()
