/* threadtime bench: the event log's methods, beside the bare counter read
 * they are measured against and the shared-ring design they improve on. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "bench.h"
#include "threadtime/threadtime.h"

/* Wraps many times during a run: what is measured is the steady state of
 * a full flight recorder. */
#define BENCH_RING_RECORDS 65536u

static int log_start(void)
{
    tt_log_options o = {.size = sizeof o, .ring_records = BENCH_RING_RECORDS, .max_threads = 64};
    return tt_log_start(&o);
}

static void log_stop(void) { tt_log_stop(); }

/* The same log with each CPU bound also recording the run-queue wait. */
static int log_start_wait(void)
{
    tt_log_options o = {.size = sizeof o, .ring_records = BENCH_RING_RECORDS, .max_threads = 64,
                        .wait_on_cpu_intervals = 1};
    return tt_log_start(&o);
}

static uint64_t run_rdtsc(void *state, uint64_t n)
{
    (void)state;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += tt__counter_read();
    return sum;
}

static uint64_t run_event_int(void *state, uint64_t n)
{
    (void)state;
    for (uint64_t i = 0; i < n; i++)
        tt_event(1);
    return n;
}

/* The text comes through the state pointer so the compiler cannot fold
 * the copy into two constant stores. */
static char text16[] = "0123456789abcdef";

static int setup_text(void **state)
{
    *state = text16;
    return 0;
}

static uint64_t run_event_str16(void *state, uint64_t n)
{
    const char *text = state;
    for (uint64_t i = 0; i < n; i++)
        tt_event_text(2, text);
    return n;
}

static uint64_t run_event_value(void *state, uint64_t n)
{
    (void)state;
    for (uint64_t i = 0; i < n; i++)
        tt_event_value(3, i);
    return n;
}

/* A begin/end pair through the exported functions (the parentheses stop the
 * inline macros): what a binding calls, the baseline of probe_begin_end. */
static uint64_t run_event_begin_end(void *state, uint64_t n)
{
    (void)state;
    for (uint64_t i = 0; i < n; i++) {
        (tt_event_begin)(4);
        (tt_event_end)(4);
    }
    return n;
}

/* A probe pair: the same two records plus the end's addition to the
 * thread's accumulator (a table lookup and five one-instruction adds). */
static uint64_t run_probe_begin_end(void *state, uint64_t n)
{
    (void)state;
    for (uint64_t i = 0; i < n; i++)
        tt_probe_end(5, tt_probe_begin(5), 0);
    return n;
}

/* A CPU pair through the exported functions: what interval(id, cpu=True)
 * calls; with log_start_wait, each bound adds one schedstat pread and a
 * record. */
static uint64_t run_event_cpu(void *state, uint64_t n)
{
    (void)state;
    for (uint64_t i = 0; i < n; i++) {
        tt_event_begin_cpu(7);
        tt_event_end_cpu(7);
    }
    return n;
}

static uint64_t run_probe_cpu(void *state, uint64_t n)
{
    (void)state;
    for (uint64_t i = 0; i < n; i++)
        tt_probe_end_cpu(6, tt_probe_begin_cpu(6), 0);
    return n;
}

/* The design that does not scale: every thread appends to one ring through
 * one atomic index, so the index's cache line moves between cores on every
 * event. Records are {counter, id} like event_int's smallest form. */
typedef struct shared_ring {
    _Alignas(64) _Atomic uint64_t next;
    _Alignas(64) uint64_t records[BENCH_RING_RECORDS][2];
} shared_ring;

static shared_ring *g_shared;

static int shared_setup(void)
{
    g_shared = aligned_alloc(64, sizeof *g_shared);
    if (!g_shared)
        return -ENOMEM;
    atomic_init(&g_shared->next, 0);
    return 0;
}

static void shared_teardown(void)
{
    free(g_shared);
    g_shared = NULL;
}

static uint64_t run_shared_ring(void *state, uint64_t n)
{
    (void)state;
    for (uint64_t i = 0; i < n; i++) {
        /* Relaxed: the index only hands out slots; nothing is published. */
        uint64_t k = atomic_fetch_add_explicit(&g_shared->next, 1, memory_order_relaxed);
        uint64_t *rec = g_shared->records[k & (BENCH_RING_RECORDS - 1)];
        rec[0] = tt__counter_read();
        rec[1] = 1;
    }
    return n;
}

const tt__bench_method tt__bench_event_methods[] = {
    {.name = "rdtsc", .description = "bare cycle-counter read (the floor an event is measured against)",
     .run = run_rdtsc},
    {.name = "event_int", .description = "tt_event(id): one 32-byte record in the thread's ring",
     .run = run_event_int, .global_setup = log_start, .global_teardown = log_stop},
    {.name = "event_str16", .description = "tt_event_text(id, 16-char string), copied into the record",
     .setup = setup_text, .run = run_event_str16, .global_setup = log_start, .global_teardown = log_stop},
    {.name = "event_value", .description = "tt_event_value(id, 64-bit value)",
     .run = run_event_value, .global_setup = log_start, .global_teardown = log_stop},
    {.name = "event_begin_end", .description = "tt_event_begin + tt_event_end, exported calls: one op is the pair",
     .run = run_event_begin_end, .global_setup = log_start, .global_teardown = log_stop},
    {.name = "probe_begin_end", .description = "tt_probe_begin + tt_probe_end: the pair plus the per-thread accumulator",
     .run = run_probe_begin_end, .global_setup = log_start, .global_teardown = log_stop},
    {.name = "probe_cpu", .description = "tt_probe_begin_cpu + tt_probe_end_cpu: with CPU time (one counter read per record on CPU)",
     .run = run_probe_cpu, .global_setup = log_start, .global_teardown = log_stop},
    {.name = "event_cpu", .description = "tt_event_begin_cpu + tt_event_end_cpu: one op is the pair",
     .run = run_event_cpu, .global_setup = log_start, .global_teardown = log_stop},
    {.name = "event_cpu_wait", .description = "the same pair with the run-queue wait at each bound (THREADTIME_CPU_WAIT=1): "
     "+ 2 schedstat preads and 2 records",
     .run = run_event_cpu, .global_setup = log_start_wait, .global_teardown = log_stop},
    {.name = "shared_ring_atomic", .description = "one ring for all threads, one global atomic index (does not scale)",
     .run = run_shared_ring, .global_setup = shared_setup, .global_teardown = shared_teardown},
    {.name = NULL},
};
