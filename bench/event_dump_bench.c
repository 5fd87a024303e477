/* Dump speed: four threads record 10 million events in all (instants,
 * values, 16-byte texts and intervals), then the log is dumped to the
 * binary trace file named by argv[1] and the time is printed. The Chrome
 * conversion is timed separately on that file (make bench-event-dump). */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "read_clock.h"
#include "threadtime/threadtime.h"

#define THREADS 4
#define EVENTS_PER_THREAD 2500000u
#define RING (1u << 22) /* >= EVENTS_PER_THREAD: nothing is overwritten */

static void *writer(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < EVENTS_PER_THREAD; i += 4) {
        tt_event_begin(5);
        tt_event_value(6, i);
        tt_event_text(7, "sixteen-byte-txt");
        tt_event_end(5);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "event_dump_bench.trace";
    tt_log_options o = {.size = sizeof o, .ring_records = RING, .max_threads = THREADS + 1};
    int rc = tt_log_start(&o);
    if (rc != 0) {
        fprintf(stderr, "event_dump_bench: tt_log_start: %s\n", tt_strerror(rc));
        return 1;
    }
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, writer, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    tt_log_stop();
    /* A new file on a quiet disk: replacing an existing file makes ext4
     * flush it at the rename, and earlier dirty pages throttle our writes;
     * both measure the disk's backlog, not the dump. */
    unlink(path);
    sync();
    tt_times c0, c1;
    tt_process_times(0, &c0);
    int64_t t0 = tt__read_clock(CLOCK_MONOTONIC);
    rc = tt_log_dump(path);
    int64_t t1 = tt__read_clock(CLOCK_MONOTONIC);
    tt_process_times(0, &c1);
    if (rc != 0) {
        fprintf(stderr, "event_dump_bench: tt_log_dump %s: %s\n", path, tt_strerror(rc));
        return 1;
    }
    printf("binary dump of %u events (%u threads): %.3f s wall, %.3f s CPU -> %s\n", THREADS * EVENTS_PER_THREAD,
           THREADS, (double)(t1 - t0) / 1e9, (double)(c1.total_ns - c0.total_ns) / 1e9, path);
    return 0;
}
