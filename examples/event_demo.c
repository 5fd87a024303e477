/* A small multi-threaded program instrumented with events and CPU clocks.
 *
 * Three workers each run a few rounds of "compute" (CPU-bound) and "wait"
 * (sleeping) intervals recorded with CPU time, so the trace shows where CPU
 * went and where only wall time passed. The main thread dumps the log to
 * the path given as the first argument (default event_demo.trace).
 *
 *   event_demo out.trace && threadtime dump out.trace
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "threadtime/threadtime.h"

enum { EV_ROUND = 1, EV_COMPUTE = 2, EV_WAIT = 3, EV_RESULT = 4, EV_PHASE = 5 };

#define WORKERS 3
#define ROUNDS 4

static uint64_t spin(uint64_t n)
{
    uint64_t x = 88172645463325252u;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "worker-%d", me);
    tt_log_thread_name(name);
    for (int round = 0; round < ROUNDS; round++) {
        tt_event_value(EV_ROUND, (uint64_t)round);
        tt_event_begin_cpu(EV_COMPUTE);
        uint64_t r = spin(2000000u * (uint64_t)(me + 1));
        tt_event_end_cpu(EV_COMPUTE);
        tt_event_value(EV_RESULT, r & 0xffff);
        tt_event_begin_cpu(EV_WAIT);
        struct timespec ts = {0, 2000000L * (me + 1)};
        nanosleep(&ts, NULL);
        tt_event_end_cpu(EV_WAIT);
    }
    tt_event_literal(EV_PHASE, "worker finished");
    return NULL;
}

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1] : "event_demo.trace";
    /* Ring size from THREADTIME_RING (else the default); THREADTIME_FILE
     * makes the log crash-safe. */
    tt_log_options o = {.size = sizeof o, .max_threads = 16};
    int rc = tt_log_start(&o);
    if (rc != 0) {
        fprintf(stderr, "event_demo: tt_log_start: %s\n", tt_strerror(rc));
        return 1;
    }
    tt_log_thread_name("main");
    tt_event_text(EV_PHASE, "start workers");
    pthread_t th[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
    tt_event_text(EV_PHASE, "all joined");
    tt_log_stop();
    rc = tt_log_dump(out);
    if (rc != 0) {
        fprintf(stderr, "event_demo: tt_log_dump %s: %s\n", out, tt_strerror(rc));
        return 1;
    }
    tt_log_info info = {.size = sizeof info};
    tt_log_info_get(&info);
    printf("event_demo: %d workers, trace written to %s (clock %s, %.3f MHz)\n", WORKERS, out,
           info.source == TT_LOG_CLOCK_COUNTER ? "cycle counter" : "CLOCK_MONOTONIC_RAW", info.counter_hz / 1e6);
    return 0;
}
