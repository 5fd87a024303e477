/* A program for the `threadtime run` tests (test_run.py).
 *
 *   run_threads short N   starts N threads, each alive 1-5 ms (a little
 *                         CPU, then a sleep), joined; each prints
 *                         "tid user_ns system_ns" as its last act, read with
 *                         getrusage(RUSAGE_THREAD): the truth the report
 *                         is checked against.
 *   run_threads kill      ends 10 threads, starts 2 that keep burning, then
 *                         kills the whole process with SIGKILL.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t g_print = PTHREAD_MUTEX_INITIALIZER;

static void burn_us(long us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    do
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void *short_life(void *arg)
{
    long i = (long)arg;
    burn_us(200 + 100 * (i % 5));
    struct timespec d = {0, (1 + i % 4) * 1000000L};
    nanosleep(&d, NULL);
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    pthread_mutex_lock(&g_print);
    printf("%d %lld %lld\n", gettid(), (long long)ru.ru_utime.tv_sec * 1000000000LL + ru.ru_utime.tv_usec * 1000LL,
           (long long)ru.ru_stime.tv_sec * 1000000000LL + ru.ru_stime.tv_usec * 1000LL);
    fflush(stdout);
    pthread_mutex_unlock(&g_print);
    return NULL;
}

static void *forever(void *arg)
{
    (void)arg;
    for (;;)
        burn_us(1000);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "short") == 0) {
        long n = atol(argv[2]);
        pthread_t *t = calloc((size_t)n, sizeof *t);
        for (long i = 0; i < n; i++)
            if (pthread_create(&t[i], NULL, short_life, (void *)i) != 0)
                return 1;
        for (long i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        free(t);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "kill") == 0) {
        pthread_t t;
        for (long i = 0; i < 10; i++) {
            if (pthread_create(&t, NULL, short_life, (void *)i) != 0)
                return 1;
            pthread_join(t, NULL);
        }
        for (int i = 0; i < 2; i++)
            if (pthread_create(&t, NULL, forever, NULL) != 0)
                return 1;
        burn_us(300000); /* the sampler (100 ms) has sampled by now */
        kill(getpid(), SIGKILL);
    }
    fprintf(stderr, "usage: run_threads short N | kill\n");
    return 2;
}
