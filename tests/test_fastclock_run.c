/* The fast clock's re-arm (slow_read) against what can happen between its
 * steps, forced at the exact point instead of waited for: this file builds
 * src/fastclock.c itself with its test hook defined, so the test's own code
 * runs inside the re-arm. The library's copy of fastclock.c is then never
 * linked (every symbol it defines is defined here first).
 *
 *   - RUN_CHECKED: the re-arm has just found the field still armed and so
 *     decided that the run of anchors goes on; the hook blocks the thread
 *     there. The kernel's count of the thread's switches (getrusage) says
 *     it left its CPU, so no answer after that may carry the old run.
 *   - GEN_LOADED: the re-arm has just read the anchor's generation; the
 *     hook raises a signal whose handler reads the clock and so re-arms
 *     first. Two real reads, two anchors: they must not share a number. */
#include "tt_test.h"

static void test_hook(int point);
enum { GEN_LOADED = 1, RUN_CHECKED = 2 };
#define TT__FAST_TEST_HOOK(point) test_hook(point)
#include "fastclock.c"

#include <signal.h>
#include <sys/resource.h>
#include <time.h>

#define US INT64_C(1000)

/* What the next hook call at that point does (0: nothing), and what it saw. */
static volatile sig_atomic_t g_act_at;
static long g_switched;   /* the thread's switches over the hook's sleep (-1: no sleep) */
static int g_run_went_on; /* the hook found the run going on: field armed, a run on */
static uint64_t g_handler_anchor;

static long thread_switches(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw + ru.ru_nivcsw : -1;
}

static void on_signal(int sig)
{
    (void)sig;
    tt__fast_ns(&g_handler_anchor);
}

static void test_hook(int point)
{
    if (g_act_at != point)
        return;
    g_act_at = 0;
    if (point == RUN_CHECKED) {
        fast_state *s = &t_fast;
        /* The field still armed here means it was at the re-arm's check. */
        g_run_went_on = s->run != 0 && __atomic_load_n(&s->area->rseq_cs, __ATOMIC_RELAXED) == OURS;
        long before = thread_switches();
        struct timespec ts = {0, 200 * US};
        nanosleep(&ts, NULL);
        long after = thread_switches();
        g_switched = before < 0 || after < 0 ? -1 : after - before;
    } else {
        raise(SIGUSR1);
    }
}

static int fast_on(void) { return tt_fast_clock() == TT_FAST_RSEQ; }

TT_TEST(a_switch_after_the_run_check_ends_the_run)
{
    if (!fast_on()) {
        printf("  skipped: %s\n", tt_fast_clock_name());
        return;
    }
    /* 1 ns: every read is a re-arm, so the second read below re-arms with
     * the first one's anchor still armed. */
    int64_t old = tt__fast_span_set(1);
    int tried = 0;
    for (int i = 0; i < 2000 && tried < 20; i++) {
        uint64_t r1, r2, r3;
        tt__fast_ns_run(&r1);
        g_switched = -1;
        g_run_went_on = 0;
        g_act_at = RUN_CHECKED;
        tt__fast_ns_run(&r2);
        tt__fast_ns_run(&r3);
        g_act_at = 0;
        /* Counts only where the run was on (the first anchor kept), the
         * re-arm went the "goes on" way, and the kernel saw the switch. */
        if (r1 == UINT64_MAX || !g_run_went_on || g_switched <= 0)
            continue;
        tried++;
        CHECK_OP(r2, !=, r1);
        CHECK_OP(r3, !=, r1);
    }
    printf("  %d re-arms switched out right after their run check\n", tried);
    CHECK_OP(tried, >, 0);
    if (old > 0)
        tt__fast_span_set(old);
}

TT_TEST(a_handler_that_re_arms_first_keeps_its_anchor_number)
{
    if (!fast_on()) {
        printf("  skipped: %s\n", tt_fast_clock_name());
        return;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    int64_t old = tt__fast_span_set(1);
    int tried = 0;
    for (int i = 0; i < 2000 && tried < 20; i++) {
        uint64_t a1, a2, a3;
        tt__fast_ns(&a1);
        g_handler_anchor = UINT64_MAX;
        g_act_at = GEN_LOADED;
        tt__fast_ns(&a2);
        tt__fast_ns(&a3);
        g_act_at = 0;
        if (g_handler_anchor == UINT64_MAX)
            continue; /* the handler's re-arm dropped its anchor */
        tried++;
        /* The handler's anchor and the interrupted re-arm's, or the next
         * one's, are two real reads: two numbers. */
        if (a2 != UINT64_MAX)
            CHECK_OP(a2, !=, g_handler_anchor);
        if (a3 != UINT64_MAX)
            CHECK_OP(a3, !=, g_handler_anchor);
    }
    printf("  %d re-arms interrupted by a handler's re-arm\n", tried);
    CHECK_OP(tried, >, 0);
    signal(SIGUSR1, SIG_DFL);
    if (old > 0)
        tt__fast_span_set(old);
}

TT_TEST_MAIN()
