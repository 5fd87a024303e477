/* Method selection and fallback: forcing a method off, and a seccomp filter
 * refusing CPU clockids the way container runtimes can. */
#include "tt_test.h"
#include "threadtime/threadtime.h"

#include <errno.h>
#include <linux/filter.h>
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

TT_TEST_MAIN()
