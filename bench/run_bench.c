/* Benchmarks of `threadtime run` (make bench-run, bench/run_bench.py);
 * never part of the tests.
 *   run_bench create N    median CPU ns (the process's: creator and thread
 *                         both; wall time on this shared host varies by 2x
 *                         between batches) per pthread_create + pthread_join of an
 *                         empty thread over batches of 1000, N threads in all,
 *                         alternating batches through libc's own
 *                         pthread_create (bare) and the one the program
 *                         links to (the preload's, when preloaded): prints
 *                         "bare_ns interposed_ns"
 *   run_bench create N US the same for threads that each sleep US us (alive
 *                         long enough for the preload to read their wait
 *                         for a CPU at their end), in batches of 100
 *   run_bench idle N S    N threads blocked for S seconds (the sampler's
 *                         cost is then read from the report) */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read_clock.h"

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static void *empty(void *arg) { return arg; }

static long g_life_us;

static void *sleeps(void *arg)
{
    struct timespec d = {g_life_us / 1000000, g_life_us % 1000000 * 1000};
    while (nanosleep(&d, &d) != 0)
        ;
    return arg;
}

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_done;

static void *blocked(void *arg)
{
    pthread_mutex_lock(&g_mu);
    while (!g_done)
        pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
    return arg;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "create") == 0) {
        g_life_us = argc == 4 ? atol(argv[3]) : 0;
        int size = g_life_us ? 100 : 1000;
        long n = atol(argv[2]), batches = n / (2 * size);
        void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
        create_fn bare = libc ? (create_fn)dlsym(libc, "pthread_create") : NULL;
        if (batches < 1 || !bare)
            return 2;
        int64_t *per[2] = {calloc((size_t)batches, sizeof(int64_t)), calloc((size_t)batches, sizeof(int64_t))};
        for (long b = 0; b < batches; b++)
            for (int k = 0; k < 2; k++) {
                create_fn create = k ? pthread_create : bare;
                int64_t t0 = tt__read_clock(CLOCK_PROCESS_CPUTIME_ID);
                for (int i = 0; i < size; i++) {
                    pthread_t t;
                    if (create(&t, NULL, g_life_us ? sleeps : empty, NULL) != 0)
                        return 1;
                    pthread_join(t, NULL);
                }
                per[k][b] = (tt__read_clock(CLOCK_PROCESS_CPUTIME_ID) - t0) / size;
            }
        for (int k = 0; k < 2; k++)
            qsort(per[k], (size_t)batches, sizeof(int64_t), cmp_i64);
        printf("%lld %lld\n", (long long)per[0][batches / 2], (long long)per[1][batches / 2]);
        free(per[0]);
        free(per[1]);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "idle") == 0) {
        long n = atol(argv[2]);
        pthread_t *t = calloc((size_t)n, sizeof *t);
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 64 * 1024);
        for (long i = 0; i < n; i++)
            if (pthread_create(&t[i], &a, blocked, NULL) != 0)
                return 1;
        sleep((unsigned)atoi(argv[3]));
        pthread_mutex_lock(&g_mu);
        g_done = 1;
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_mu);
        for (long i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        free(t);
        return 0;
    }
    fprintf(stderr, "usage: run_bench create N | idle N SECONDS\n");
    return 2;
}
