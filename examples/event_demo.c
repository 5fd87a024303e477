/* A small multi-threaded program instrumented with events and CPU clocks.
 *
 * Three workers each run a few rounds of "compute" (CPU-bound) and "wait"
 * (sleeping) intervals recorded with CPU time, so the trace shows where CPU
 * went and where only wall time passed; a probed function counts every call
 * in the trace's summary, and two "carrier" threads play a virtual thread
 * that starts a request on one carrier and finishes it on the other. Every
 * id is named. The main thread dumps the log to the path given as the first
 * argument (default event_demo.trace).
 *
 *   event_demo out.trace && threadtime dump out.trace
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "threadtime/threadtime.h"

enum { EV_ROUND = 1, EV_COMPUTE = 2, EV_WAIT = 3, EV_RESULT = 4, EV_PHASE = 5, EV_CHECKSUM = 6, EV_REQUEST = 7 };

static const char *const names[] = {
    [EV_ROUND] = "round", [EV_COMPUTE] = "compute", [EV_WAIT] = "wait", [EV_RESULT] = "result",
    [EV_PHASE] = "phase", [EV_CHECKSUM] = "checksum()", [EV_REQUEST] = "request",
};

/* The virtual thread the carriers take turns running, a Java thread id. */
#define VTHREAD 101

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

/* A probed function: every call counted in the summary, even those the
 * small rings of the fuzz seeds no longer hold. */
static uint64_t checksum(uint64_t r)
{
    uint64_t t0 = tt_probe_begin(EV_CHECKSUM);
    uint64_t c = spin(1000 + (r & 0xff));
    tt_probe_end(EV_CHECKSUM, t0, (c & 7) == 0);
    return c;
}

/* Half a request: carrier 0 mounts the virtual thread and begins it (CPU
 * included), carrier 1 mounts it again later and ends it. */
static uint64_t g_request_t0;

static void *carrier(void *arg)
{
    int second = (int)(intptr_t)arg;
    tt_log_thread_name(second ? "carrier-1" : "carrier-0");
    tt_event_mount(VTHREAD);
    if (!second) {
        g_request_t0 = tt_probe_begin_cpu(EV_REQUEST);
        tt_event_text(EV_PHASE, "parked");
    } else {
        tt_event_text(EV_PHASE, "resumed");
        tt_probe_end_cpu(EV_REQUEST, g_request_t0, 0);
    }
    tt_event_unmount(VTHREAD);
    return NULL;
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
        tt_event_value(EV_RESULT, checksum(r) & 0xffff);
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
    for (unsigned id = 1; id < sizeof names / sizeof *names; id++)
        tt_event_name(id, names[id]);
    for (int i = 0; i < 2; i++) {
        pthread_t c;
        pthread_create(&c, NULL, carrier, (void *)(intptr_t)i);
        pthread_join(c, NULL);
    }
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
