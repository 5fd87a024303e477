/* getrandom(2) as a raw system call: glibc added its wrapper (and
 * <sys/random.h>) in 2.25, above the shipped natives' floor of 2.17
 * (docs/platforms.md). The kernel has had the call since 3.17; on an older
 * one it fails with ENOSYS, as the wrapper would. */
#ifndef TT_PRIM_RANDOM_H
#define TT_PRIM_RANDOM_H

#include <linux/random.h> /* GRND_NONBLOCK */
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* Up to n random bytes into buf; the count, or -1 with errno. */
static inline ssize_t tt__getrandom(void *buf, size_t n, unsigned flags)
{
    return (ssize_t)syscall(SYS_getrandom, buf, n, flags);
}

#endif /* TT_PRIM_RANDOM_H */
