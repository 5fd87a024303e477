/* Could the perf_event mmap page of a per-thread software event stand in for
 * rseq's field as "this thread was switched out since the anchor"? (Linux
 * 6.19 and later keep rseq_cs set across a blocking call, docs/fast-clock.md.)
 * Never part of the tests; `make bench-perf-page`.
 *
 * Each thread opens PERF_COUNT_SW_TASK_CLOCK on itself and maps the event's
 * first page. The kernel rewrites that page (its seqlock `lock` moves) when
 * it brings the event's times up to date. This program measures, on this
 * kernel:
 *   1. whether the page moved across every switch it can provoke: a 200 us
 *      sleep, a futex wait that times out, and preemption by a busy thread
 *      pinned to the same CPU (seen when that thread's own clock advanced
 *      inside the interval), and how often it moved with no switch at all;
 *   2. what reading the page costs (its seqlock and time_running), beside
 *      one rdtsc;
 *   3. what the event costs each context switch: two threads pinned to one
 *      CPU hand a futex word back and forth, with and without an event on
 *      each, rounds interleaved; the process's CPU time per switch (CPU
 *      time, not wall time: other load on a shared host waits apart).
 * It also prints the page's cap_user_time bits: without cap_user_time the
 * page cannot extrapolate the time since it was written.
 *
 * usage: perf_page_probe [ROUNDS]   (default 5) */
#include <errno.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "read_clock.h"
#include "threadtime/arch.h" /* tt__counter_read */

typedef struct page {
    int fd;
    volatile struct perf_event_mmap_page *p;
} page;

static int page_open(page *pg)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    pg->fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (pg->fd < 0)
        return -errno;
    void *m = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, pg->fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;
        close(pg->fd);
        return -e;
    }
    pg->p = m;
    return 0;
}

static void page_close(page *pg)
{
    munmap((void *)pg->p, (size_t)sysconf(_SC_PAGESIZE));
    close(pg->fd);
}

static uint32_t page_seq(const page *pg) { return __atomic_load_n(&pg->p->lock, __ATOMIC_ACQUIRE); }

static void spin(int n)
{
    volatile uint64_t x = 1;
    for (int i = 0; i < n; i++)
        x = x * 6364136223846793005u + 1;
}

static void pin(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
}

/* ---- 1. does the page move at every switch? ---- */

static atomic_int busy_stop;
static void *busy(void *arg)
{
    pin(*(int *)arg);
    while (!atomic_load_explicit(&busy_stop, memory_order_relaxed))
        spin(1000);
    return NULL;
}

static void detection(void)
{
    page pg;
    int rc = page_open(&pg);
    if (rc < 0) {
        printf("perf_event_open(task-clock): %s\n", strerror(-rc));
        return;
    }
    printf("page: cap_user_time=%u cap_user_time_zero=%u cap_user_rdpmc=%u\n", (unsigned)pg.p->cap_user_time,
           (unsigned)pg.p->cap_user_time_zero, (unsigned)pg.p->cap_user_rdpmc);
    int moved = 0, n = 200;
    for (int i = 0; i < n; i++) {
        uint32_t s0 = page_seq(&pg);
        struct timespec ts = {0, 200 * 1000};
        nanosleep(&ts, NULL);
        moved += page_seq(&pg) != s0;
    }
    printf("sleep 200us: page moved %d of %d\n", moved, n);
    moved = 0;
    for (int i = 0; i < n; i++) {
        uint32_t s0 = page_seq(&pg), word = 0;
        struct timespec ts = {0, 200 * 1000};
        syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
        moved += page_seq(&pg) != s0;
    }
    printf("futex wait 200us: page moved %d of %d\n", moved, n);
    /* Preemption: a busy thread on our CPU; its clock advancing strictly
     * inside [s0, s1] means it ran there, so we were switched out. */
    int cpu = sched_getcpu();
    pin(cpu);
    atomic_store(&busy_stop, 0);
    pthread_t t;
    pthread_create(&t, NULL, busy, &cpu);
    clockid_t bc;
    pthread_getcpuclockid(t, &bc);
    int preempted = 0, missed = 0, quiet = 0, quiet_moved = 0;
    int64_t w0 = tt__read_clock(CLOCK_MONOTONIC);
    while (preempted < 200 && tt__read_clock(CLOCK_MONOTONIC) - w0 < 10 * TT__NS_PER_SEC) {
        uint32_t s0 = page_seq(&pg);
        int64_t b0 = tt__read_clock(bc);
        spin(40000);
        int64_t b1 = tt__read_clock(bc);
        uint32_t s1 = page_seq(&pg);
        if (b1 > b0) {
            preempted++;
            missed += s1 == s0;
        } else {
            quiet++;
            quiet_moved += s1 != s0;
        }
    }
    atomic_store(&busy_stop, 1);
    pthread_join(t, NULL);
    printf("preempted by a busy thread on the same CPU: %d intervals, page did not move in %d; "
           "%d intervals without a switch, page moved in %d\n",
           preempted, missed, quiet, quiet_moved);
    page_close(&pg);
}

/* ---- 2. read cost ---- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t median(uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    return v[n / 2];
}

static void read_cost(void)
{
    page pg;
    if (page_open(&pg) < 0)
        return;
    enum { N = 200000 };
    static uint64_t t_rdtsc[N], t_page[N];
    volatile uint64_t sink = 0;
    for (int i = 0; i < N; i++) {
        uint64_t a = tt__counter_read();
        sink += tt__counter_read();
        t_rdtsc[i] = tt__counter_read() - a;
        a = tt__counter_read();
        uint32_t s;
        uint64_t run;
        do {
            s = page_seq(&pg);
            run = pg.p->time_running;
        } while (__atomic_load_n(&pg.p->lock, __ATOMIC_ACQUIRE) != s);
        sink += tt__counter_read() + run;
        t_page[i] = tt__counter_read() - a;
    }
    printf("read, counter ticks with two counter reads around (p50): rdtsc %llu, rdtsc + page seqlock read %llu\n",
           (unsigned long long)median(t_rdtsc, N), (unsigned long long)median(t_page, N));
    page_close(&pg);
}

/* ---- 3. per-switch cost ---- */

typedef struct pingpong {
    _Atomic uint32_t word;
    int cpu, with_event, rounds;
} pingpong;

static void futex_wait(_Atomic uint32_t *w, uint32_t v) { syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0); }
static void futex_wake(_Atomic uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

/* Each side waits for its parity, then hands over: one switch per turn. */
static void *side(void *arg)
{
    pingpong *pp = arg;
    pin(pp->cpu);
    page pg;
    int ev = pp->with_event && page_open(&pg) == 0;
    for (int i = 0; i < pp->rounds; i++) {
        uint32_t v;
        while ((v = atomic_load(&pp->word)) % 2 == 0)
            futex_wait(&pp->word, v);
        atomic_fetch_add(&pp->word, 1);
        futex_wake(&pp->word);
    }
    if (ev)
        page_close(&pg);
    return NULL;
}

static double switch_ns(int with_event, int rounds)
{
    pingpong pp = {.word = 0, .cpu = sched_getcpu(), .with_event = with_event, .rounds = rounds};
    pin(pp.cpu);
    page pg;
    int ev = with_event && page_open(&pg) == 0;
    pthread_t t;
    pthread_create(&t, NULL, side, &pp);
    int64_t w0 = tt__read_clock(CLOCK_PROCESS_CPUTIME_ID);
    for (int i = 0; i < rounds; i++) {
        atomic_fetch_add(&pp.word, 1); /* odd: the other side's turn */
        futex_wake(&pp.word);
        uint32_t v;
        while ((v = atomic_load(&pp.word)) % 2 == 1)
            futex_wait(&pp.word, v);
    }
    int64_t w1 = tt__read_clock(CLOCK_PROCESS_CPUTIME_ID);
    pthread_join(t, NULL);
    if (ev)
        page_close(&pg);
    return (double)(w1 - w0) / (2.0 * rounds);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    if (rounds < 1 || rounds > 100) {
        fprintf(stderr, "usage: perf_page_probe [ROUNDS (1..100)]\n");
        return 2;
    }
    cpu_set_t all;
    sched_getaffinity(0, sizeof all, &all);
    detection();
    sched_setaffinity(0, sizeof all, &all);
    read_cost();
    double off[100], on[100];
    for (int r = 0; r < rounds; r++) {
        off[r] = switch_ns(0, 20000);
        on[r] = switch_ns(1, 20000);
        sched_setaffinity(0, sizeof all, &all);
    }
    uint64_t a[100], b[100];
    for (int r = 0; r < rounds; r++) {
        a[r] = (uint64_t)off[r];
        b[r] = (uint64_t)on[r];
    }
    printf("futex hand-off on one CPU, CPU ns per switch (median of %d rounds): without the event %llu, with a "
           "task-clock event on each thread %llu\n",
           rounds, (unsigned long long)median(a, rounds), (unsigned long long)median(b, rounds));
    return 0;
}
