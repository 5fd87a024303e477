/* What exact mode's clock read costs, and how much of it is the return from
 * the system call: the calling thread's SCHED clock (the caller-fast-path
 * clock id) read four ways, interleaved in blocks of 2,000 reads, 1,000
 * blocks; p10 and p50 of each way's ns per read.
 *   libc       clock_gettime() (libc hands a CPU clock id to the vDSO,
 *              which makes the system call)
 *   wrapped    the `syscall` instruction inside a function that is not
 *              inlined: one call and one return around it
 *   inline     the `syscall` instruction inline in the loop: no return
 *   getppid    a bare system call through libc, for scale
 * x86-64 only.   cc -O2 -o syscall_ret syscall_ret.c && ./syscall_ret */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The kernel's CPU clock id for "the calling thread, SCHED": ~0 in the pid
 * bits (the caller), the per-thread bit, clock 2. src/prim/clockid.h
 * builds it in the library. */
#define SELF_SCHED ((clockid_t)(~0u << 3 | 4u | 2u))

enum { BLOCK = 2000, BLOCKS = 1000, WAYS = 4 };

static inline long raw_clock_gettime(clockid_t id, struct timespec *ts)
{
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "0"((long)SYS_clock_gettime), "D"((long)id), "S"(ts)
                     : "rcx", "r11", "memory");
    return r;
}

__attribute__((noinline)) static long wrapped_clock_gettime(clockid_t id, struct timespec *ts)
{
    return raw_clock_gettime(id, ts);
}

static int64_t now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double ns[WAYS][BLOCKS];

int main(void)
{
    struct timespec ts;
    int64_t sum = 0;
    for (int b = 0; b < BLOCKS; b++) {
        int64_t t0 = now();
        for (int i = 0; i < BLOCK; i++) {
            clock_gettime(SELF_SCHED, &ts);
            sum += ts.tv_nsec;
        }
        int64_t t1 = now();
        for (int i = 0; i < BLOCK; i++) {
            wrapped_clock_gettime(SELF_SCHED, &ts);
            sum += ts.tv_nsec;
        }
        int64_t t2 = now();
        for (int i = 0; i < BLOCK; i++) {
            raw_clock_gettime(SELF_SCHED, &ts);
            sum += ts.tv_nsec;
        }
        int64_t t3 = now();
        for (int i = 0; i < BLOCK; i++)
            sum += getppid();
        int64_t t4 = now();
        ns[0][b] = (double)(t1 - t0) / BLOCK;
        ns[1][b] = (double)(t2 - t1) / BLOCK;
        ns[2][b] = (double)(t3 - t2) / BLOCK;
        ns[3][b] = (double)(t4 - t3) / BLOCK;
    }
    static const char *const names[WAYS] = {"libc", "wrapped", "inline", "getppid"};
    for (int w = 0; w < WAYS; w++) {
        qsort(ns[w], BLOCKS, sizeof ns[w][0], by_value);
        printf("%-8s p10 %4.0f  p50 %4.0f ns per call\n", names[w], ns[w][BLOCKS / 10], ns[w][BLOCKS / 2]);
    }
    return sum == 42; /* keeps the reads; never true in practice */
}
