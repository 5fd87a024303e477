/* A thread's probe table is cleared at its first probe of each run; a
 * signal handler on that thread that probes right then must keep its call.
 * The interleaving is forced, not waited for: this file builds
 * src/event_probe.c itself with its test hook defined, and the hook raises
 * a signal just before the owner clears its table. The library's copy of
 * event_probe.c is then never linked (every symbol it defines is defined
 * here first). The truth is the handler's own count of its runs. */
#include "tt_test.h"

static void test_hook(void);
#define TT__PROBE_TEST_HOOK() test_hook()
#include "event_probe.c"

#include <signal.h>
#include <stdatomic.h>

#include "event_test_util.h"
#include "trace_model.h"

static volatile sig_atomic_t g_raise;
static atomic_long g_handled;

static void test_hook(void)
{
    if (!g_raise)
        return;
    g_raise = 0;
    raise(SIGUSR1);
}

static void on_signal(int sig)
{
    (void)sig;
    tt_probe_end(60, tt_probe_begin(60), 1);
    atomic_fetch_add(&g_handled, 1);
}

static uint64_t calls_of(const tt__trace *t, uint32_t id)
{
    for (uint32_t i = 0; i < t->nsummary; i++)
        if (t->summary[i].id == id)
            return t->summary[i].sums.calls;
    return 0;
}

TT_TEST(a_handler_that_probes_during_the_reset_keeps_its_call)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    /* The first run claims the thread's table, the later ones reuse it:
     * both clear it. */
    for (int round = 0; round < 3; round++) {
        tt_log_options o = small_log(64, 4);
        CHECK_OP(tt_log_start(&o), ==, 0);
        atomic_store(&g_handled, 0);
        g_raise = 1;
        tt_probe_end(21, tt_probe_begin(21), 0); /* the run's first sum here: the reset */
        g_raise = 0;
        CHECK_OP(tt_log_stop(), ==, 0);
        long handled = atomic_load(&g_handled);
        CHECK_OP(handled, ==, 1);
        loaded_trace lt;
        if (dump_and_load("reset", &lt) == 0) {
            CHECK_OP(calls_of(&lt.t, 21), ==, 1);
            CHECK_OP(calls_of(&lt.t, 60), ==, handled);
        }
        free_trace(&lt);
    }
    signal(SIGUSR1, SIG_DFL);
}

TT_TEST_MAIN()
