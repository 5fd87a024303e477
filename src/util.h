/* Chores the core, the CLI and the Python extension all need: growing an
 * array by doubling, reading a descriptor to its end through
 * interruptions (util.c), and a binary search (here). One home each. */
#ifndef TT_UTIL_H
#define TT_UTIL_H

#include <stddef.h>
#include <sys/types.h>

/* Makes room for at least need items of size bytes in items (capacity
 * *cap items): doubles from first (at least need), reallocates, and returns
 * the array, *cap updated. Returns items unchanged when it already has
 * room. Returns NULL, items and *cap untouched, when memory runs out or
 * need * size would overflow size_t; the caller still owns items. */
void *tt__grow(void *items, size_t *cap, size_t need, size_t size, size_t first);

/* read(2) that retries when a signal interrupts it. Returns the bytes read
 * (0 at the end) or -errno. */
ssize_t tt__read_retry(int fd, void *buf, size_t n);

/* Reads fd to its end into a fresh malloc'd buffer (*out, *len; free it):
 * a regular file by its size as a hint (it may grow or shrink meanwhile:
 * what was read is a snapshot), a pipe as a stream. Returns 0 or -errno
 * (-ENOMEM, also past SIZE_MAX). */
int tt__read_all(int fd, unsigned char **out, size_t *len);

/* The first i in [0, n) for which below(ctx, i) is 0, where below holds
 * for a prefix of the range and not after it (in a sorted array: the
 * entries less than a key): a lower bound, in about log2(n) calls. Inline,
 * so that a below known where it is called is inlined into the loop. */
static inline size_t tt__lower_bound(size_t n, int (*below)(const void *ctx, size_t i), const void *ctx)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (below(ctx, mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif /* TT_UTIL_H */
