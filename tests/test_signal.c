/* The calls cpu.h lists as async-signal-safe, made from a signal handler
 * that keeps interrupting the same calls on the same thread and handle
 * (what a SIGPROF sampler does), while another thread reads that handle
 * too and the main flow switches methods. Every call completes (a lock
 * here would deadlock), and each figure promised monotonic stays so across
 * main flow, handler and method changes. */
#include "tt_test.h"
#include "threadtime/threadtime.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Figures promised monotonic, in the order read_all() fills them. */
enum {
    F_SELF_TOTAL, F_SELF_USER, F_SELF_PROF, F_TID0_TOTAL, F_PROCESS_TOTAL,
    F_HANDLE_TOTAL, F_HANDLE_USER,
    F_HANDLE_U, F_HANDLE_S, F_HANDLE_T, F_TIMES_U, F_TIMES_S, F_TIMES_T,
    NF
};

/* Handler interruptions wanted in each phase. The main flow runs until it
 * has had them, however the scheduler spreads them. */
#define WANTED_SIGNALS 1000
/* A run whose rounds and handler runs both stand still this long has
 * deadlocked (a round takes microseconds); one that takes longer than the
 * limit in all is reported as too slow. */
#define STALL_SECONDS 60
#define LIMIT_SECONDS 900

/* Progress of the child, shared with the watching parent. */
typedef struct progress {
    _Atomic long rounds, signals;
} progress;
static progress *g_progress;

static tt_thread *g_handle;
static _Atomic int64_t g_main_pub[NF]; /* the main flow's last answers */
static _Atomic int64_t g_hand_max[NF]; /* the handler's last answers */
static _Atomic long g_signals, g_handler_errors, g_handler_backwards;
static _Atomic int g_done;
/* Phase 1: main flow and handler make one call, tt_thread_times on the
 * same handle, so most interruptions land inside it. Phase 2: all calls. */
static _Atomic int g_phase = 1;

/* Every async-signal-safe call once; the monotonic figures into v.
 * Returns the number of calls that failed. */
static int read_all(int64_t v[NF], int with_procfs)
{
    int errors = 0;
    tt_times t;
    if (atomic_load_explicit(&g_phase, memory_order_relaxed) == 1) {
        for (int f = 0; f < NF; f++)
            v[f] = 0;
        errors += tt_thread_times(g_handle, &t) != 0;
        v[F_HANDLE_U] = t.user_ns, v[F_HANDLE_S] = t.system_ns, v[F_HANDLE_T] = t.total_ns;
        return errors;
    }
    v[F_SELF_TOTAL] = tt_self_total_ns();
    v[F_SELF_USER] = tt_self_user_raw_ns();
    v[F_SELF_PROF] = tt_self_prof_raw_ns();
    v[F_TID0_TOTAL] = tt_tid_total_ns(0);
    v[F_PROCESS_TOTAL] = tt_process_total_ns(0);
    v[F_HANDLE_TOTAL] = tt_thread_total_ns(g_handle);
    v[F_HANDLE_USER] = tt_thread_user_raw_ns(g_handle);
    errors += tt_thread_times(g_handle, &t) != 0;
    v[F_HANDLE_U] = t.user_ns, v[F_HANDLE_S] = t.system_ns, v[F_HANDLE_T] = t.total_ns;
    errors += tt_self_times(&t) != 0;
    v[F_TIMES_U] = t.user_ns, v[F_TIMES_S] = t.system_ns, v[F_TIMES_T] = t.total_ns;
    for (int f = 0; f < NF; f++)
        errors += v[f] < 0;
    /* The rest: no monotonic promise, but they must answer. */
    errors += tt_self_system_raw_ns() < 0;
    errors += tt_tid_user_raw_ns(0) < 0;
    errors += tt_process_user_raw_ns(0) < 0;
    errors += tt_process_times(0, &t) != 0;
    errors += tt_clock_ns(0, 1, TT_CLOCK_SCHED) < 0;
    errors += tt_getrusage_thread(&t) != 0;
    errors += tt_thread_tid(g_handle) <= 0;
    clockid_t id;
    errors += tt_make_clockid(0, 1, TT_CLOCK_VIRT, &id) != 0;
    if (with_procfs) {
        tt_procfs_stat st;
        errors += tt_procfs_read(0, 0, &st) != 0;
    }
    return errors;
}

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    static int64_t last[NF]; /* only this handler touches it (not nested) */
    int64_t before[NF], v[NF];
    for (int f = 0; f < NF; f++)
        before[f] = atomic_load_explicit(&g_main_pub[f], memory_order_relaxed);
    long n = atomic_fetch_add_explicit(&g_signals, 1, memory_order_relaxed);
    atomic_store_explicit(&g_progress->signals, n + 1, memory_order_relaxed);
    if (read_all(v, n % 16 == 0) != 0)
        atomic_fetch_add_explicit(&g_handler_errors, 1, memory_order_relaxed);
    for (int f = 0; f < NF; f++) {
        if (v[f] < before[f] || v[f] < last[f])
            atomic_fetch_add_explicit(&g_handler_backwards, 1, memory_order_relaxed);
        last[f] = v[f];
        atomic_store_explicit(&g_hand_max[f], v[f], memory_order_relaxed);
    }
    errno = saved;
}

/* Sends the storm to the main thread until it is done. */
static void *storm(void *arg)
{
    pthread_t target = *(pthread_t *)arg;
    while (!atomic_load_explicit(&g_done, memory_order_acquire))
        if (pthread_kill(target, SIGPROF) != 0)
            break;
    return NULL;
}

/* Another thread reading the same handle: its own answers never go back. */
static void *reader(void *arg)
{
    long *backwards = arg;
    tt_times last = {0, 0, 0}, t;
    int64_t last_total = 0;
    while (!atomic_load_explicit(&g_done, memory_order_acquire)) {
        int64_t total = tt_thread_total_ns(g_handle);
        if (tt_thread_times(g_handle, &t) != 0 || total < last_total || t.user_ns < last.user_ns ||
            t.system_ns < last.system_ns || t.total_ns < last.total_ns)
            ++*backwards;
        last = t;
        last_total = total;
    }
    return NULL;
}

static const tt_method g_methods[] = {TT_METHOD_AUTO, TT_METHOD_PROCFS, TT_METHOD_CLOCKID,
                                      TT_METHOD_GETRUSAGE};

static void storm_run(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    CHECK_OP(sigaction(SIGPROF, &sa, NULL), ==, 0);
    CHECK_OP(tt_thread_open(0, &g_handle), ==, 0);
    pthread_t self = pthread_self(), ts, tr;
    long reader_backwards = 0;
    CHECK_OP(pthread_create(&ts, NULL, storm, &self), ==, 0);
    CHECK_OP(pthread_create(&tr, NULL, reader, &reader_backwards), ==, 0);

    int64_t last[NF] = {0}, v[NF];
    long rounds = 0, errors = 0, backwards = 0, phase_end = WANTED_SIGNALS;
    for (;;) {
        long signals = atomic_load_explicit(&g_signals, memory_order_relaxed);
        if (signals >= phase_end) {
            if (atomic_load(&g_phase) == 2)
                break;
            atomic_store(&g_phase, 2);
            phase_end = signals + WANTED_SIGNALS;
        }
        /* Phase 2: a method change every 256 rounds. */
        if (atomic_load(&g_phase) == 2 && rounds % 256 == 0)
            CHECK_OP(tt_method_set(g_methods[(rounds / 256) % 4]), ==, 0);
        int64_t hand[NF];
        for (int f = 0; f < NF; f++)
            hand[f] = atomic_load_explicit(&g_hand_max[f], memory_order_relaxed);
        errors += read_all(v, rounds % 64 == 0) != 0;
        for (int f = 0; f < NF; f++) {
            /* Not below our own last answer, nor below any answer a
             * handler gave before this round began. */
            if (v[f] < last[f] || v[f] < hand[f]) {
                if (backwards++ < 5)
                    fprintf(stderr, "figure %d went back: %lld after %lld (handler %lld)\n", f,
                            (long long)v[f], (long long)last[f], (long long)hand[f]);
            }
            last[f] = v[f];
            atomic_store_explicit(&g_main_pub[f], v[f], memory_order_relaxed);
        }
        atomic_store_explicit(&g_progress->rounds, ++rounds, memory_order_relaxed);
    }
    atomic_store_explicit(&g_done, 1, memory_order_release);
    CHECK_OP(pthread_join(ts, NULL), ==, 0);
    CHECK_OP(pthread_join(tr, NULL), ==, 0);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPROF, &sa, NULL);
    CHECK_OP(tt_method_set(TT_METHOD_AUTO), ==, 0);
    tt_thread_close(g_handle);

    printf("  %ld rounds, %ld handler runs\n", rounds, atomic_load(&g_signals));
    CHECK_OP(errors, ==, 0);
    CHECK_OP(backwards, ==, 0);
    CHECK_OP(reader_backwards, ==, 0);
    CHECK_OP(atomic_load(&g_handler_errors), ==, 0);
    CHECK_OP(atomic_load(&g_handler_backwards), ==, 0);
}

/* In a child, so that a deadlock is reported instead of hanging the suite. */
TT_TEST(async_signal_safe_calls_complete_and_stay_monotonic_under_a_signal_storm)
{
    g_progress = mmap(NULL, sizeof *g_progress, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(g_progress != MAP_FAILED);
    if (g_progress == MAP_FAILED)
        return;
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        storm_run();
        fflush(NULL);
        _exit(tt_test_failed_checks > 99 ? 99 : tt_test_failed_checks);
    }
    /* Bounded poll in 10 ms steps, watching the child's progress. */
    int status = 0;
    pid_t got = 0;
    long last_rounds = -1, last_signals = -1;
    int still = 0, total = 0;
    while ((got = waitpid(child, &status, WNOHANG)) == 0) {
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        if (++total % 100 != 0)
            continue;
        long r = atomic_load(&g_progress->rounds), n = atomic_load(&g_progress->signals);
        still = r == last_rounds && n == last_signals ? still + 1 : 0;
        last_rounds = r, last_signals = n;
        if (still >= STALL_SECONDS || total >= LIMIT_SECONDS * 100) {
            fprintf(stderr, "signal storm %s: %ld rounds, %ld handler runs after %d s\n",
                    still >= STALL_SECONDS ? "made no progress for a minute (a call deadlocked)" : "too slow",
                    r, n, total / 100);
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            CHECK(!"signal storm did not finish");
            munmap(g_progress, sizeof *g_progress);
            return;
        }
    }
    munmap(g_progress, sizeof *g_progress);
    CHECK_OP(got, ==, child);
    CHECK(WIFEXITED(status));
    CHECK_OP(WEXITSTATUS(status), ==, 0);
}

TT_TEST_MAIN()
