/* The event log across process events: crash-safe recovery after SIGKILL
 * and SIGSEGV, fork (the child's own log, the parent's intact), and events
 * recorded from signal handlers. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

/* glibc before 2.35 names the target thread only through the union. */
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#include "event_test_util.h"

#define DOOMED_EVENTS 3000
#define HELPER_EVENTS 50

/* The child: a crash-safe log, events from two threads (one exits), then
 * death by sig without any chance to write anything more. */
static void doomed_child(const char *path, int sig)
{
    tt_log_options o = small_log(4096, 4);
    o.crash_file = path;
    if (tt_log_start(&o) != 0)
        _exit(3);
    tt_log_thread_name("doomed");
    pthread_t th;
    value_thread_arg helper = {"helper", HELPER_EVENTS};
    pthread_create(&th, NULL, value_thread, &helper);
    pthread_join(th, NULL);
    for (uint64_t i = 0; i < DOOMED_EVENTS; i++)
        tt_event_value(1, i);
    tt_event_text(3, "last words");
    if (sig == SIGSEGV) {
        /* A real fault (not raise): a store to a page with no access. The
         * default action, so a sanitizer's handler does not intercept it. */
        signal(SIGSEGV, SIG_DFL);
        volatile char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        page[0] = 1;
    }
    raise(sig);
    _exit(4);
}

static void check_recovery(int sig)
{
    char path[256];
    temp_path(path, sizeof path, sig == SIGKILL ? "crash_kill" : "crash_segv");
    pid_t pid = fork();
    if (pid == 0)
        doomed_child(path, sig);
    int status = 0;
    CHECK_OP(waitpid(pid, &status, 0), ==, pid);
    CHECK(WIFSIGNALED(status));
    CHECK_OP(WTERMSIG(status), ==, sig);
    loaded_trace lt;
    CHECK_OP(load_trace(path, &lt), ==, 0);
    if (lt.rc == 0) {
        CHECK(!lt.t.damaged);
        CHECK(lt.t.h.flags & TT__TRACE_RING_LAYOUT);
        CHECK_OP(lt.t.h.pid, ==, pid);
        CHECK_OP(lt.t.nthreads, ==, 2);
        const tt__trace_thread *main_th = find_thread(&lt.t, (uint32_t)pid);
        CHECK(main_th != NULL);
        if (main_th) {
            CHECK(strcmp(main_th->name, "doomed") == 0);
            CHECK_OP(main_th->state, ==, TT__RING_LIVE);
            /* Every committed event is there, in order. */
            CHECK_OP(main_th->head - main_th->first, ==, DOOMED_EVENTS + 1);
            uint64_t k;
            tt__trace_event ev;
            for (k = 0; k < DOOMED_EVENTS; k++)
                if (!tt__trace_event_at(&lt.t, main_th, k, &ev) || ev.id != 1 || ev.p0 != k)
                    break;
            CHECK_OP(k, ==, DOOMED_EVENTS);
            CHECK(tt__trace_event_at(&lt.t, main_th, DOOMED_EVENTS, &ev) && ev.text_len == 10 &&
                  memcmp(ev.text, "last words", 10) == 0);
        }
        for (uint32_t i = 0; i < lt.t.nthreads; i++) {
            const tt__trace_thread *th = &lt.t.threads[i];
            if (th->tid == (uint32_t)pid)
                continue;
            CHECK(strcmp(th->name, "helper") == 0);
            CHECK_OP(th->state, ==, TT__RING_EXITED);
            CHECK_OP(count_committed(&lt.t, th), ==, HELPER_EVENTS);
        }
    }
    free_trace(&lt);
    unlink(path);
}

TT_TEST(crash_safe_file_survives_sigkill) { check_recovery(SIGKILL); }

TT_TEST(crash_safe_file_survives_sigsegv) { check_recovery(SIGSEGV); }

/* THREADTIME_DUMP_AT_EXIT (or .exit_dump_path): exit() writes the trace. */
TT_TEST(dump_at_exit)
{
    char path[256];
    temp_path(path, sizeof path, "at_exit");
    unlink(path);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("THREADTIME_DUMP_AT_EXIT", path, 1);
        if (tt_log_start(NULL) != 0)
            _exit(3);
        tt_event_text(6, "bye");
        exit(0);
    }
    int status = 0;
    CHECK_OP(waitpid(pid, &status, 0), ==, pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    loaded_trace lt;
    CHECK_OP(load_trace(path, &lt), ==, 0);
    if (lt.rc == 0) {
        CHECK_OP(lt.t.nthreads, ==, 1);
        CHECK(lt.t.h.flags & TT__TRACE_END_ANCHOR);
        tt__trace_event ev;
        CHECK(lt.t.nthreads == 1 && tt__trace_event_at(&lt.t, &lt.t.threads[0], 0, &ev) && ev.id == 6);
    }
    free_trace(&lt);
    unlink(path);
}

/* Event ids present in a trace, as a bit set of ids 0..31. */
static unsigned ids_in(const tt__trace *t)
{
    unsigned set = 0;
    tt__trace_event ev;
    for (uint32_t i = 0; i < t->nthreads; i++)
        for (uint64_t k = 0; k < t->threads[i].head - t->threads[i].first; k++)
            if (tt__trace_event_at(t, &t->threads[i], k, &ev) && ev.id < 32)
                set |= 1u << ev.id;
    return set;
}

TT_TEST(fork_child_gets_its_own_log)
{
    tt_log_options o = small_log(256, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_event(1);
    char child_path[256];
    temp_path(child_path, sizeof child_path, "fork_child");
    pid_t pid = fork();
    if (pid == 0) {
        /* The child's log runs, is empty, and holds only what it records. */
        tt_log_info info = {.size = sizeof info};
        int ok = tt_log_info_get(&info) == 0 && info.running;
        tt_event(2);
        ok = ok && tt_log_dump(child_path) == 0;
        loaded_trace lt;
        ok = ok && load_trace(child_path, &lt) == 0 && ids_in(&lt.t) == 1u << 2;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK_OP(waitpid(pid, &status, 0), ==, pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    unlink(child_path);
    tt_event(3);
    loaded_trace lt;
    CHECK_OP(dump_and_load("fork_parent", &lt), ==, 0);
    CHECK_OP(ids_in(&lt.t), ==, (1u << 1) | (1u << 3));
    free_trace(&lt);
    CHECK_OP(tt_log_stop(), ==, 0);
}

/* A child granted a crash file (fork_files) records into its own. */
TT_TEST(fork_of_crash_safe_log_uses_a_new_file)
{
    char path[256], child_file[300];
    temp_path(path, sizeof path, "fork_crash");
    tt_log_options o = small_log(256, 4);
    o.crash_file = path;
    o.fork_files = 1;
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_event(1);
    pid_t pid = fork();
    if (pid == 0) {
        tt_event(2);
        _exit(0);
    }
    int status = 0;
    CHECK_OP(waitpid(pid, &status, 0), ==, pid);
    tt_event(3);
    snprintf(child_file, sizeof child_file, "%s.%d", path, (int)pid);
    loaded_trace child, parent;
    CHECK_OP(load_trace(child_file, &child), ==, 0);
    if (child.rc == 0)
        CHECK_OP(ids_in(&child.t), ==, 1u << 2);
    CHECK_OP(load_trace(path, &parent), ==, 0);
    if (parent.rc == 0)
        CHECK_OP(ids_in(&parent.t), ==, (1u << 1) | (1u << 3));
    free_trace(&child);
    free_trace(&parent);
    CHECK_OP(tt_log_stop(), ==, 0);
    unlink(child_file);
    unlink(path);
}

/* A dump into a pipe: the pipe stays a pipe (a dump to a regular file is
 * renamed into place, which must never happen to a device or FIFO) and
 * what comes out of it is a whole trace. */
TT_TEST(dump_into_a_fifo)
{
    char fifo[256], copy[256];
    temp_path(fifo, sizeof fifo, "fifo");
    temp_path(copy, sizeof copy, "fifo_copy");
    unlink(fifo);
    CHECK_OP(mkfifo(fifo, 0600), ==, 0);
    pid_t pid = fork();
    if (pid == 0) {
        /* The reader: copy everything from the FIFO into a file. */
        int in = open(fifo, O_RDONLY), out = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        char buf[4096];
        ssize_t n;
        while ((n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n)
                _exit(1);
        _exit(n == 0 && close(out) == 0 ? 0 : 1);
    }
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_event_value(1, 77);
    CHECK_OP(tt_log_stop(), ==, 0);
    CHECK_OP(tt_log_dump(fifo), ==, 0);
    int status = 0;
    CHECK_OP(waitpid(pid, &status, 0), ==, pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat sb;
    CHECK(stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
    loaded_trace lt;
    CHECK_OP(load_trace(copy, &lt), ==, 0);
    if (lt.rc == 0)
        CHECK_OP(ids_in(&lt.t), ==, 1u << 1);
    free_trace(&lt);
    unlink(fifo);
    unlink(copy);
}

/* A dump that cannot be written (here: the file-size limit, as a full disk
 * would) fails with the errno, leaves no partial file, and loses nothing:
 * the next dump has every event. */
TT_TEST(failed_dump_loses_nothing)
{
    char path[256];
    temp_path(path, sizeof path, "efbig");
    unlink(path);
    tt_log_options o = small_log(4096, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    for (uint64_t i = 0; i < 4000; i++)
        tt_event_value(1, i);
    struct rlimit old, small = {64 * 1024, 0};
    getrlimit(RLIMIT_FSIZE, &old);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &small);
    CHECK_OP(tt_log_dump(path), ==, -EFBIG);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    CHECK(access(path, F_OK) != 0);
    loaded_trace lt;
    CHECK_OP(dump_and_load("efbig_again", &lt), ==, 0);
    const tt__trace_thread *th = find_thread(&lt.t, (uint32_t)gettid());
    CHECK(th && count_committed(&lt.t, th) == 4000);
    free_trace(&lt);
    CHECK_OP(tt_log_stop(), ==, 0);
}

/* ---- signal handlers ---- */

/* Lock-free atomic: safe in a handler, and the handler may run on another
 * thread than the one that waits for it. */
static atomic_int g_handled;

static void on_signal(int sig)
{
    (void)sig;
    tt_event_value(9, (uint64_t)atomic_load(&g_handled));
    atomic_fetch_add(&g_handled, 1);
}

static void install(int sig, void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

TT_TEST(events_from_a_signal_handler_interleave_whole)
{
    tt_log_options o = small_log(1u << 20, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    install(SIGALRM, on_signal);
    atomic_store(&g_handled, 0);
    struct itimerval every = {{0, 200}, {0, 200}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &every, NULL);
    uint64_t written = 0;
    /* Bounded below the ring so nothing is overwritten. */
    while (atomic_load(&g_handled) < 100 && written < 500000) {
        tt_event_value(1, written++);
        for (volatile int spin = 0; spin < 100; spin++)
            ;
    }
    setitimer(ITIMER_REAL, &off, NULL);
    int handled = atomic_load(&g_handled);
    signal(SIGALRM, SIG_DFL);
    CHECK_OP(handled, >, 0);
    loaded_trace lt;
    CHECK_OP(dump_and_load("signal", &lt), ==, 0);
    const tt__trace_thread *th = find_thread(&lt.t, (uint32_t)gettid());
    CHECK(th != NULL);
    if (th) {
        CHECK_OP(th->overwritten, ==, 0);
        CHECK_OP(th->head - th->first, ==, written + (uint64_t)handled);
        uint64_t next_main = 0, next_handler = 0;
        tt__trace_event ev;
        int bad = 0;
        for (uint64_t k = 0; k < th->head - th->first; k++) {
            if (!tt__trace_event_at(&lt.t, th, k, &ev))
                bad++;
            else if (ev.id == 1)
                bad += ev.p0 != next_main++;
            else if (ev.id == 9)
                bad += ev.p0 != next_handler++;
            else
                bad++;
        }
        CHECK_OP(bad, ==, 0);
        CHECK_OP(next_main, ==, written);
        CHECK_OP(next_handler, ==, handled);
    }
    free_trace(&lt);
    CHECK_OP(tt_log_stop(), ==, 0);
}

static void *wait_for_signal(void *p)
{
    spin_until(p);
    return NULL;
}

TT_TEST(first_event_of_a_thread_in_a_signal_handler)
{
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    install(SIGUSR1, on_signal);
    atomic_store(&g_handled, 0);
    atomic_int done = 0;
    pthread_t th;
    pthread_create(&th, NULL, wait_for_signal, &done);
    pthread_kill(th, SIGUSR1);
    while (atomic_load(&g_handled) == 0)
        sched_yield();
    atomic_store(&done, 1);
    pthread_join(th, NULL);
    signal(SIGUSR1, SIG_DFL);
    loaded_trace lt;
    CHECK_OP(dump_and_load("signal_first", &lt), ==, 0);
    CHECK_OP(lt.t.nthreads, ==, 1);
    if (lt.t.nthreads == 1) {
        tt__trace_event ev;
        CHECK(tt__trace_event_at(&lt.t, &lt.t.threads[0], 0, &ev) && ev.id == 9);
        CHECK_OP(lt.t.threads[0].state, ==, TT__RING_EXITED);
    }
    free_trace(&lt);
    CHECK_OP(tt_log_stop(), ==, 0);
}

/* A handler that lands while its thread takes its ring (the first event
 * of a run) records too. A timer aimed at this thread fires first a little
 * after it is set, at a delay that sweeps 0.2-10 us over the rounds, so
 * that in some rounds its signal arrives inside the registration (at the
 * return of one of its system calls); each round is a new run, so the
 * thread registers again. The handler records only while armed, and counts
 * what it records: the trace must hold exactly that many handler events, in
 * order, in every round, wherever the signals fell. */
static atomic_int g_armed;

static void on_timer(int sig)
{
    (void)sig;
    if (atomic_load(&g_armed)) {
        tt_event_value(9, (uint64_t)atomic_load(&g_handled));
        atomic_fetch_add(&g_handled, 1);
    }
}

TT_TEST(a_handler_inside_the_first_events_registration_records)
{
    install(SIGUSR2, on_timer);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGUSR2;
    sev.sigev_notify_thread_id = gettid();
    timer_t timer;
    CHECK_OP(timer_create(CLOCK_MONOTONIC, &sev, &timer), ==, 0);
    struct itimerspec off = {{0, 0}, {0, 0}};
    int bad_rounds = 0, rounds = 400;
    for (int round = 0; round < rounds; round++) {
        /* Then every 50 us: sparse enough that the thread runs between them. */
        struct itimerspec soon = {{0, 50000}, {0, 200 + (round % 100) * 100}};
        tt_log_options o = small_log(4096, 4);
        CHECK_OP(tt_log_start(&o), ==, 0);
        atomic_store(&g_handled, 0);
        atomic_store(&g_armed, 1);
        timer_settime(timer, 0, &soon, NULL);
        tt_event_value(1, 0); /* this run's first event: the registration */
        /* At least one handler ran, so every round checks one: a bounded wait. */
        for (long spins = 0; atomic_load(&g_handled) == 0 && spins < 100000000L; spins++)
            sched_yield();
        timer_settime(timer, 0, &off, NULL);
        atomic_store(&g_armed, 0);
        int handled = atomic_load(&g_handled);
        CHECK_OP(handled, >, 0);
        loaded_trace lt;
        CHECK_OP(dump_and_load("first_event_signal", &lt), ==, 0);
        const tt__trace_thread *th = find_thread(&lt.t, (uint32_t)gettid());
        uint64_t mains = 0, handlers = 0;
        int out_of_order = 0;
        tt__trace_event ev;
        for (uint64_t k = 0; th && k < th->head - th->first; k++) {
            if (!tt__trace_event_at(&lt.t, th, k, &ev))
                out_of_order++;
            else if (ev.id == 1)
                mains++;
            else if (ev.id == 9)
                out_of_order += ev.p0 != handlers++;
        }
        int bad = !th || mains != 1 || handlers != (uint64_t)handled || out_of_order != 0;
        if (bad && bad_rounds++ == 0)
            fprintf(stderr,
                    "round %d (the first bad one): %d handlers ran; the trace holds %" PRIu64
                    " of their events and %" PRIu64 " of the thread's 1, %d out of order\n",
                    round, handled, handlers, mains, out_of_order);
        free_trace(&lt);
        CHECK_OP(tt_log_stop(), ==, 0);
    }
    timer_delete(timer);
    signal(SIGUSR2, SIG_DFL);
    CHECK_OP(bad_rounds, ==, 0);
}

TT_TEST_MAIN()
