/* The worst case for begin/end pairing: one thread records N begins of one
 * id, then N ends of another id, so no end finds its begin and every end
 * would search all N open begins if pairing were a linear search of the
 * stack. Writes the trace to argv[1] (N from argv[2], default 131072);
 * make bench-pairing times `threadtime dump --format chrome` and
 * `--summary` on it. */
#include <stdio.h>
#include <stdlib.h>

#include "threadtime/threadtime.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pair_bench OUT.trace [N]\n");
        return 2;
    }
    unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 131072ul;
    if (n == 0 || n > TT_LOG_RING_MAX / 2) {
        fprintf(stderr, "pair_bench: N must be 1..%u\n", TT_LOG_RING_MAX / 2);
        return 2;
    }
    uint32_t ring = TT_LOG_RING_MIN;
    while (ring < 2 * n)
        ring *= 2;
    tt_log_options o = {.size = sizeof o, .ring_records = ring, .max_threads = 2};
    int rc = tt_log_start(&o);
    if (rc != 0) {
        fprintf(stderr, "pair_bench: tt_log_start: %s\n", tt_strerror(rc));
        return 1;
    }
    for (unsigned long i = 0; i < n; i++)
        tt_event_begin(1);
    for (unsigned long i = 0; i < n; i++)
        tt_event_end(2);
    tt_log_stop();
    rc = tt_log_dump(argv[1]);
    if (rc != 0) {
        fprintf(stderr, "pair_bench: tt_log_dump %s: %s\n", argv[1], tt_strerror(rc));
        return 1;
    }
    printf("%lu begins of id 1, then %lu ends of id 2 -> %s\n", n, n, argv[1]);
    return 0;
}
