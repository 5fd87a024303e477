/* Tests of the account logic without a JVM: segment arithmetic, ownership,
 * recycling with bounded memory, and consistent reads racing a writer (the
 * last part is what the TSan build of this test is for). */
#include "account.h"

#include <pthread.h>

#include "tt_test.h"

static int64_t clock_at_1000(pid_t tid)
{
    (void)tid;
    return 1000;
}

TT_TEST(segments_charge_closed_and_open_time)
{
    vt_account *a = vt_account_take(7);
    CHECK(a != NULL);
    CHECK(vt_account_self(a, 500) == 0);
    vt_account_open(a, 100, 42);
    CHECK(vt_account_self(a, 130) == 30);
    CHECK(vt_account_read(a, 7, clock_at_1000) == 900); /* open: up to the carrier's now */
    vt_account_close(a, 250);
    CHECK(vt_account_read(a, 7, clock_at_1000) == 150);
    vt_account_close(a, 900); /* nothing open: no charge */
    CHECK(vt_account_self(a, 5000) == 150);
    vt_account_open(a, 300, 42);
    vt_account_close(a, -22); /* a failed clock read closes without charging */
    CHECK(vt_account_self(a, 5000) == 150);
    vt_account_open(a, 400, 42);
    vt_account_close(a, 390); /* a clock that went back charges nothing */
    CHECK(vt_account_self(a, 5000) == 150);
    CHECK(vt_account_read(a, 8, clock_at_1000) == -1); /* another owner */
    vt_account_give(a);
    CHECK(vt_account_read(a, 7, clock_at_1000) == -1); /* ended */
    vt_account *b = vt_account_take(9);
    CHECK(b == a); /* the last account given is the first taken again */
    CHECK(vt_account_read(b, 9, clock_at_1000) == 0);
    CHECK(vt_account_read(b, 7, clock_at_1000) == -1);
    vt_account_give(b);
}

/* Threads start on one carrier and end on another: spares must flow back
 * through the pool instead of piling up. */
#define PER_ROUND 3000
static vt_account *g_handoff[PER_ROUND];

static void *take_round(void *arg)
{
    (void)arg;
    for (int i = 0; i < PER_ROUND; i++)
        g_handoff[i] = vt_account_take(i + 1);
    return NULL;
}

static void *give_round(void *arg)
{
    (void)arg;
    for (int i = 0; i < PER_ROUND; i++)
        vt_account_give(g_handoff[i]);
    return NULL;
}

static void run(void *(*fn)(void *))
{
    pthread_t t;
    pthread_create(&t, NULL, fn, NULL);
    pthread_join(t, NULL);
}

TT_TEST(accounts_are_recycled_across_threads)
{
    run(take_round);
    run(give_round);
    uint64_t after_first = vt_account_bytes();
    for (int round = 0; round < 20; round++) {
        run(take_round);
        for (int i = 0; i < PER_ROUND; i++)
            CHECK(g_handoff[i] != NULL);
        run(give_round);
    }
    /* Every round reuses what the earlier ones gave back (each exiting
     * thread hands its spares to the pool). */
    CHECK(vt_account_bytes() == after_first);
    CHECK(after_first < 2 * PER_ROUND * sizeof(vt_account));
}

/* One writer alternates open(2k, tid k) / close(2k+1); a reader's clock for
 * carrier k says 2k+1, so a consistent read is exactly the number of
 * segments begun, k. A torn read (a new tid with an old mark, a new total
 * with the segment still open) gives more than the writer has begun, or
 * goes backwards. */
#define SEGMENTS 200000
static vt_account *g_raced;
static int64_t g_begun;

static int64_t clock_of_segment(pid_t k) { return 2 * (int64_t)k + 1; }

static void *writer(void *arg)
{
    (void)arg;
    for (int64_t k = 1; k <= SEGMENTS; k++) {
        __atomic_store_n(&g_begun, k, __ATOMIC_RELEASE);
        vt_account_open(g_raced, 2 * k, (pid_t)k);
        vt_account_close(g_raced, 2 * k + 1);
    }
    return NULL;
}

static void *reader(void *arg)
{
    int *bad = arg;
    int64_t last = 0;
    for (;;) {
        int64_t r = vt_account_read(g_raced, 1, clock_of_segment);
        int64_t begun = __atomic_load_n(&g_begun, __ATOMIC_ACQUIRE);
        if (r < last || r > begun)
            (*bad)++;
        last = r;
        if (r == SEGMENTS)
            return NULL;
    }
}

TT_TEST(reads_racing_a_writer_are_consistent)
{
    g_raced = vt_account_take(1);
    int bad[2] = {0, 0};
    pthread_t w, r[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&r[i], NULL, reader, &bad[i]);
    pthread_create(&w, NULL, writer, NULL);
    pthread_join(w, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(r[i], NULL);
    CHECK(bad[0] == 0 && bad[1] == 0);
    CHECK(vt_account_read(g_raced, 1, clock_of_segment) == SEGMENTS);
    vt_account_give(g_raced);
}

/* The in-use count follows takes and gives made on different threads, and
 * keeps the share of threads that have ended. */
TT_TEST(accounts_in_use_count_takes_minus_gives_across_threads)
{
    int64_t before = vt_account_in_use();
    run(take_round);
    CHECK(vt_account_in_use() == before + PER_ROUND);
    vt_account *own = vt_account_take(PER_ROUND + 1);
    CHECK(vt_account_in_use() == before + PER_ROUND + 1);
    run(give_round);
    CHECK(vt_account_in_use() == before + 1);
    vt_account_give(own);
    CHECK(vt_account_in_use() == before);
}

TT_TEST_MAIN()
