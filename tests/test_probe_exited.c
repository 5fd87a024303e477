/* A thread past its probe table's exit destructor (a later thread-specific
 * destructor that probes) has no table and gets no new one: its probes
 * count nothing, and must cost no system call either, in particular not
 * the two rt_sigprocmask of a table's first claim. The truth is the
 * kernel's: a seccomp filter on that thread alone sends SIGSYS for each
 * rt_sigprocmask it makes, and the handler counts them. */
#include "tt_test.h"

#include "event_test_util.h"

#include "test_seccomp.h"

#include <pthread.h>
#include <signal.h>

static volatile sig_atomic_t g_masks; /* rt_sigprocmask calls trapped */
static long g_in_probes = -1;         /* of those, made by the probes */
static int g_no_filter;               /* the kernel (or qemu-user) took no filter */
static pthread_key_t g_late;

static void on_sigsys(int sig, siginfo_t *si, void *p)
{
    (void)sig;
    (void)si;
    sigsys_fail_call(p); /* counted, not done */
    g_masks++;
}

/* Runs after the library's destructor (its key was made first). */
static void late_destructor(void *v)
{
    (void)v;
    /* This thread only (no SECCOMP_FILTER_FLAG_TSYNC). */
    if (install_filter(__NR_rt_sigprocmask, -1, SECCOMP_RET_TRAP, 1) != 0) {
        g_no_filter = 1;
        return;
    }
    g_masks = 0;
    for (int i = 0; i < 100; i++)
        tt_probe_end(31, tt_probe_begin(31), 0);
    g_in_probes = g_masks;
}

static void *probing_thread(void *arg)
{
    (void)arg;
    tt_probe_end(31, tt_probe_begin(31), 0); /* claims the thread's table */
    pthread_setspecific(g_late, &g_late);
    return NULL;
}

TT_TEST(probes_past_the_exit_destructor_make_no_system_call)
{
#ifndef FILTER_ARCH
    printf("  SKIP: no seccomp filter for this architecture here\n");
    return;
#endif
    struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
    sigemptyset(&sa.sa_mask);
    CHECK_OP(sigaction(SIGSYS, &sa, NULL), ==, 0);
    tt_log_options o = small_log(64, 4);
    CHECK_OP(tt_log_start(&o), ==, 0);
    CHECK_OP(pthread_key_create(&g_late, late_destructor), ==, 0);
    pthread_t t;
    CHECK_OP(pthread_create(&t, NULL, probing_thread, NULL), ==, 0);
    pthread_join(t, NULL);
    CHECK_OP(tt_log_stop(), ==, 0);
    pthread_key_delete(g_late);
    signal(SIGSYS, SIG_DFL);
    if (g_no_filter) {
        printf("  SKIP: this kernel (or emulator: qemu-user) installs no seccomp filter\n");
        return;
    }
    CHECK_OP(g_in_probes, ==, 0);
}

TT_TEST_MAIN()
