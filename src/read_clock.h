/* One clock read in ns, for the core and for the programs built beside it
 * (the CLI, its benchmarks, the tests): the one place that turns a timespec
 * into ns. Never installed. Unlike internal.h it does not declare the
 * including file part of the library. */
#ifndef TT_READ_CLOCK_H
#define TT_READ_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#define TT__NS_PER_SEC INT64_C(1000000000)

/* One clock_gettime() on any clock id: ns >= 0, or -errno. */
static inline int64_t tt__read_clock(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return -errno;
    return (int64_t)ts.tv_sec * TT__NS_PER_SEC + ts.tv_nsec;
}

#endif /* TT_READ_CLOCK_H */
