/* threadtime bench: the method table and the sampling harness.
 *
 * A method is a loop body run n times per sample ("batch"): the harness
 * times whole batches with CLOCK_MONOTONIC and sizes them so a batch lasts
 * well above the timer's own cost, then reports per-call figures. Each
 * area of the library adds its methods in its own file (bench_clock.c,
 * bench_event.c) and lists them in a NULL-terminated table. */
#ifndef TT_CLI_BENCH_H
#define TT_CLI_BENCH_H

#include <stdint.h>

typedef struct tt__bench_method {
    const char *name;        /* e.g. "virt_self"; what --methods selects */
    const char *description; /* one line for --list */
    /* Per measuring thread, before timing; may be NULL. Returns 0 or -errno
     * (the method is then reported as skipped with tt_strerror's text). */
    int (*setup)(void **state);
    /* Runs the measured call n times. Returns a value folded into a sink so
     * the compiler cannot drop the calls. */
    uint64_t (*run)(void *state, uint64_t n);
    /* Per measuring thread, after timing; may be NULL. */
    void (*teardown)(void *state);
    /* Run once before any thread starts / after all stopped; may be NULL.
     * (e.g. start and stop the event log.) Returns 0 or -errno. */
    int (*global_setup)(void);
    void (*global_teardown)(void);
} tt__bench_method;

/* The tables, each ending with an entry whose name is NULL. */
extern const tt__bench_method tt__bench_clock_methods[];
extern const tt__bench_method tt__bench_event_methods[];

/* Name of the method every other one is compared with. */
#define TT_BENCH_BASELINE "procfs_stat"

/* Entry point of `threadtime bench`. */
int tt__cli_bench(int argc, char **argv);

#endif /* TT_CLI_BENCH_H */
