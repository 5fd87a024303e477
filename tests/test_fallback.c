/* Method selection and fallback: forcing a method off, a seccomp filter
 * refusing CPU clockids the way container runtimes can, and a mount
 * namespace without /proc. */
#include "tt_test.h"
#include "threadtime/threadtime.h"

#include <errno.h>
#include <linux/filter.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MS INT64_C(1000000)

static void check_split(const tt_times *t)
{
    CHECK_OP(t->user_ns + t->system_ns, ==, t->total_ns);
    CHECK_OP(t->user_ns, >=, 0);
    CHECK_OP(t->system_ns, >=, 0);
}

static void burn(void)
{
    volatile uint64_t x = 0;
    for (int i = 0; i < 20000000; i++)
        x += (uint64_t)i;
}

/* Checks that every per-thread call answers through the active fallback. */
static void check_fallback_answers(void)
{
    int64_t precise = tt_self_total_ns();
    CHECK_OP(precise, >=, 0);
    CHECK_OP(tt_self_user_raw_ns(), >=, 0);
    CHECK_OP(tt_self_system_raw_ns(), >=, 0);
    CHECK_OP(tt_tid_total_ns(gettid()), >=, 0);
    CHECK_OP(tt_tid_total_ns(1 << 22), ==, -ESRCH);
    tt_times t;
    CHECK_OP(tt_self_times(&t), ==, 0);
    check_split(&t);
    tt_thread *h;
    CHECK_OP(tt_thread_open(0, &h), ==, 0);
    CHECK_OP(tt_thread_times(h, &t), ==, 0);
    check_split(&t);
    CHECK_OP(tt_thread_total_ns(h), >=, 0);
    tt_thread_close(h);
    CHECK_OP(tt_process_total_ns(0), >=, 0);
}

TT_TEST(forced_methods)
{
    burn();
    CHECK_OP(tt_method_active(), ==, TT_METHOD_CLOCKID);
    CHECK_OP(tt_method_set(TT_METHOD_PROCFS), ==, 0);
    CHECK_OP(tt_method_active(), ==, TT_METHOD_PROCFS);
    check_fallback_answers();
    /* /proc's total is in clock ticks: never above the precise clock. */
    CHECK_OP(tt_self_total_ns(), <=, tt_clock_ns(0, 1, TT_CLOCK_SCHED));
    CHECK_OP(tt_method_set(TT_METHOD_GETRUSAGE), ==, 0);
    CHECK_OP(tt_method_active(), ==, TT_METHOD_GETRUSAGE);
    check_fallback_answers();
    CHECK_OP(tt_method_set(TT_METHOD_AUTO), ==, 0);
    CHECK_OP(tt_method_active(), ==, TT_METHOD_CLOCKID);
    CHECK(strcmp(tt_method_name(tt_method_active()), "clockid") == 0);
}

/* Installs a filter that makes clock_gettime() on any CPU clockid (the
 * negative ones) fail with err; CLOCK_MONOTONIC and friends still work. */
static int refuse_cpu_clockids(int err)
{
    /* The low 32 bits of the first argument: the clockid. */
    const unsigned arg0 = offsetof(struct seccomp_data, args[0]) +
                          (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0);
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg0),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000u, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -errno;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return -errno;
    return 0;
}

static void under_seccomp(int err)
{
    pid_t child = fork();
    if (child == 0) {
        if (refuse_cpu_clockids(err) != 0)
            _exit(100);
        clockid_t id;
        struct timespec ts;
        tt_make_clockid(0, 1, TT_CLOCK_VIRT, &id);
        if (clock_gettime(id, &ts) == 0 || errno != err)
            _exit(101); /* the filter did not bite */
        burn();
        check_fallback_answers();
        CHECK_OP(tt_method_active(), ==, TT_METHOD_PROCFS);
        CHECK_OP(tt_method_set(TT_METHOD_CLOCKID), ==, -ENOTSUP);
        CHECK_OP(tt_method_active(), ==, TT_METHOD_PROCFS);
        CHECK_OP(tt_clock_ns(0, 1, TT_CLOCK_VIRT), ==, -err);
        _exit(tt_test_failed_checks > 99 ? 99 : tt_test_failed_checks);
    }
    int status = 0;
    CHECK_OP(waitpid(child, &status, 0), ==, child);
    CHECK(WIFEXITED(status));
    CHECK_OP(WEXITSTATUS(status), ==, 0);
}

TT_TEST(seccomp_eperm_falls_back_to_procfs) { under_seccomp(EPERM); }
TT_TEST(seccomp_enosys_falls_back_to_procfs) { under_seccomp(ENOSYS); }

/* ---- every figure documented monotonic, across a change of source ---- */

typedef struct figures {
    int64_t self_total, self_user, self_prof, tid0_total, process_total;
    int64_t handle_total, handle_user;
    tt_times self_times, handle_times;
} figures;

static void take(tt_thread *h, figures *f)
{
    f->self_total = tt_self_total_ns();
    f->self_user = tt_self_user_raw_ns();
    f->self_prof = tt_self_prof_raw_ns();
    f->tid0_total = tt_tid_total_ns(0);
    f->process_total = tt_process_total_ns(0);
    f->handle_total = tt_thread_total_ns(h);
    f->handle_user = tt_thread_user_raw_ns(h);
    CHECK_OP(tt_self_times(&f->self_times), ==, 0);
    CHECK_OP(tt_thread_times(h, &f->handle_times), ==, 0);
    check_split(&f->self_times);
    check_split(&f->handle_times);
    CHECK_OP(f->self_total, >=, 0);
    CHECK_OP(f->self_user, >=, 0);
    CHECK_OP(f->self_prof, >=, 0);
    CHECK_OP(f->process_total, >=, 0);
    CHECK_OP(f->handle_total, >=, 0);
    CHECK_OP(f->handle_user, >=, 0);
}

static void check_times_not_back(const tt_times *a, const tt_times *b)
{
    CHECK_OP(b->user_ns, >=, a->user_ns);
    CHECK_OP(b->system_ns, >=, a->system_ns);
    CHECK_OP(b->total_ns, >=, a->total_ns);
}

/* b was taken after a: nothing went back. */
static void check_not_back(const figures *a, const figures *b)
{
    CHECK_OP(b->self_total, >=, a->self_total);
    CHECK_OP(b->self_user, >=, a->self_user);
    CHECK_OP(b->self_prof, >=, a->self_prof);
    CHECK_OP(b->tid0_total, >=, a->tid0_total);
    CHECK_OP(b->process_total, >=, a->process_total);
    CHECK_OP(b->handle_total, >=, a->handle_total);
    CHECK_OP(b->handle_user, >=, a->handle_user);
    check_times_not_back(&a->self_times, &b->self_times);
    check_times_not_back(&a->handle_times, &b->handle_times);
}

/* Forcing each method in turn, then back to detection: each source rounds
 * the same runtime differently (ns, us, clock ticks). */
TT_TEST(monotonic_across_forced_method_changes)
{
    static const tt_method order[] = {TT_METHOD_CLOCKID, TT_METHOD_PROCFS, TT_METHOD_GETRUSAGE,
                                      TT_METHOD_CLOCKID, TT_METHOD_GETRUSAGE, TT_METHOD_PROCFS,
                                      TT_METHOD_AUTO};
    tt_thread *h;
    CHECK_OP(tt_thread_open(0, &h), ==, 0);
    figures last, now;
    burn();
    take(h, &last);
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        CHECK_OP(tt_method_set(order[i]), ==, 0);
        for (int round = 0; round < 3; round++) {
            take(h, &now);
            check_not_back(&last, &now);
            last = now;
            burn();
        }
    }
    tt_thread_close(h);
    CHECK_OP(tt_method_active(), ==, TT_METHOD_CLOCKID);
}

/* Runs fn in a forked child; its exit status is the number of failed
 * checks, or 77 for a skip it explains on stderr. */
static void in_child(void (*fn)(void))
{
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        fn();
        _exit(tt_test_failed_checks > 99 ? 99 : tt_test_failed_checks);
    }
    int status = 0;
    CHECK_OP(waitpid(child, &status, 0), ==, child);
    CHECK(WIFEXITED(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
        return;
    CHECK_OP(WEXITSTATUS(status), ==, 0);
}

static void refuse_or_die(int err)
{
    if (refuse_cpu_clockids(err) != 0)
        _exit(100);
    clockid_t id;
    struct timespec ts;
    tt_make_clockid(0, 1, TT_CLOCK_SCHED, &id);
    /* CPU clockids always make a real system call (the vDSO only answers
     * the static clocks), so the filter sees this one. */
    if (clock_gettime(id, &ts) == 0 || errno != err)
        _exit(101);
}

/* A sandbox that installs its filter after start-up: the reads before and
 * after it come from different sources. */
static void seccomp_mid_run(void)
{
    tt_thread *h;
    CHECK_OP(tt_thread_open(0, &h), ==, 0);
    figures before, after, later;
    burn();
    take(h, &before);
    refuse_or_die(EPERM);
    take(h, &after);
    check_not_back(&before, &after);
    burn();
    take(h, &later);
    check_not_back(&after, &later);
    tt_thread_close(h);
}

TT_TEST(monotonic_across_seccomp_refusal_mid_run) { in_child(seccomp_mid_run); }

/* tt_method_active() answers for what would be used now, before any read
 * has met the filter. */
static void method_active_under_seccomp(void)
{
    refuse_or_die(ENOSYS);
    CHECK_OP(tt_method_active(), ==, TT_METHOD_PROCFS);
    CHECK_OP(tt_self_total_ns(), >=, 0);
    CHECK_OP(tt_method_active(), ==, TT_METHOD_PROCFS);
}

TT_TEST(method_active_reports_the_method_that_answers) { in_child(method_active_under_seccomp); }

/* ---- clockids refused and no /proc ---- */

/* Hides /proc from this process only: a private mount namespace (a user
 * namespace too when not privileged) with an empty tmpfs over /proc.
 * Returns 0, or -errno when the kernel does not allow it. */
static int hide_proc(void)
{
    if (unshare(CLONE_NEWNS) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
        return -errno;
    /* Private first: nothing mounted here may reach the parent's namespace. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return -errno;
    if (mount("tt-no-proc", "/proc", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k") != 0)
        return -errno;
    return 0;
}

static int g_hold[2];

static void *held_thread(void *arg)
{
    *(pid_t *)arg = gettid();
    char c;
    /* Blocks until the main thread closes the write end: the thread is
     * alive for every check below. */
    while (read(g_hold[0], &c, 1) > 0)
        ;
    return NULL;
}

static void without_proc(void)
{
    int rc = hide_proc();
    if (rc != 0) {
        fprintf(stderr, "SKIP without_clockids_or_proc: cannot hide /proc here (%s)\n", tt_strerror(rc));
        _exit(77);
    }
    tt_procfs_stat st;
    if (tt_procfs_read(0, 0, &st) != -ESRCH)
        _exit(102); /* /proc still answers */
    pid_t other = 0;
    pthread_t th;
    CHECK_OP(pipe(g_hold), ==, 0);
    CHECK_OP(pthread_create(&th, NULL, held_thread, &other), ==, 0);
    while (__atomic_load_n(&other, __ATOMIC_ACQUIRE) == 0)
        sched_yield();
    refuse_or_die(EPERM);

    /* The caller and its process: getrusage() answers. */
    CHECK_OP(tt_self_total_ns(), >=, 0);
    CHECK_OP(tt_self_user_raw_ns(), >=, 0);
    CHECK_OP(tt_self_system_raw_ns(), >=, 0);
    CHECK_OP(tt_tid_total_ns(0), >=, 0);
    CHECK_OP(tt_tid_total_ns(gettid()), >=, 0);
    CHECK_OP(tt_process_total_ns(0), >=, 0);
    CHECK_OP(tt_process_total_ns(getpid()), >=, 0);
    tt_times t;
    CHECK_OP(tt_self_times(&t), ==, 0);
    check_split(&t);
    CHECK_OP(tt_process_times(0, &t), ==, 0);
    tt_thread *h;
    CHECK_OP(tt_thread_open(gettid(), &h), ==, 0);
    CHECK_OP(tt_thread_times(h, &t), ==, 0);
    check_split(&t);
    CHECK_OP(tt_thread_total_ns(h), >=, 0);
    tt_thread_close(h);
    CHECK_OP(tt_method_active(), ==, TT_METHOD_GETRUSAGE);

    /* Tasks that exist but nothing can read: the refusal, not "missing". */
    CHECK_OP(tt_tid_total_ns(other), ==, -EPERM);
    CHECK_OP(tt_thread_open(other, &h), ==, -EPERM);
    CHECK_OP(tt_process_total_ns(getppid()), ==, -EPERM);
    CHECK_OP(tt_process_times(getppid(), &t), ==, -EPERM);
    /* Tasks that do not exist are still named so. */
    CHECK_OP(tt_tid_total_ns(1 << 22), ==, -ESRCH);
    CHECK_OP(tt_process_total_ns(1 << 22), ==, -ESRCH);

    close(g_hold[1]);
    CHECK_OP(pthread_join(th, NULL), ==, 0);
}

TT_TEST(without_clockids_or_proc_errors_are_true) { in_child(without_proc); }

TT_TEST_MAIN()
