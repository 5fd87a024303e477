/* The cycle counter's calibration finishes under a signal storm. It sleeps
 * through two windows; a thread that a profiler or an interval timer
 * interrupts more often than its timer slack must still get out of them.
 * The storm here is the kernel's own interval timer, which fires whatever
 * the scheduler does, and the slack is raised so that each interruption
 * would add far more than the timer's period to a sleep that restarts
 * from its remainder. */
#include "tt_test.h"
#include "event_internal.h"

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STORM_PERIOD_US 1000             /* one SIGALRM per ms */
#define SLACK_NS (10L * 1000 * 1000)     /* 10 ms of timer slack */
#define LIMIT_SECONDS 60                 /* the calibration sleeps ~25 ms */

static volatile sig_atomic_t g_alarms;

static void on_alarm(int sig)
{
    (void)sig;
    g_alarms++;
}

/* In a child: exit 0 once calibrated, 2 if no alarm interrupted it, 3 if
 * the storm could not be set up. */
static void calibrate_in_storm(void)
{
    struct sigaction sa = {.sa_handler = on_alarm}; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    struct itimerval it = {.it_interval = {0, STORM_PERIOD_US}, .it_value = {0, STORM_PERIOD_US}};
    if (prctl(PR_SET_TIMERSLACK, SLACK_NS, 0, 0, 0) != 0 || sigaction(SIGALRM, &sa, NULL) != 0 ||
        setitimer(ITIMER_REAL, &it, NULL) != 0)
        _exit(3);
    double hz;
    (void)tt__counter_calibrated(&hz);
    _exit(g_alarms > 0 ? 0 : 2);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

TT_TEST(calibration_ends_under_a_signal_storm)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid < 0)
        return;
    if (pid == 0)
        calibrate_in_storm();
    int64_t deadline = mono_ns() + (int64_t)LIMIT_SECONDS * 1000000000;
    int status = 0;
    pid_t got;
    while ((got = waitpid(pid, &status, WNOHANG)) == 0 && mono_ns() < deadline) {
        struct timespec ten_ms = {0, 10 * 1000 * 1000};
        nanosleep(&ten_ms, NULL);
    }
    if (got == 0) {
        fprintf(stderr, "calibration still asleep after %d s of SIGALRM every %d us\n",
                LIMIT_SECONDS, STORM_PERIOD_US);
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    CHECK(got == pid);
    CHECK(WIFEXITED(status));
    CHECK_OP(WEXITSTATUS(status), ==, 0);
}

TT_TEST_MAIN()
