/* The consistent split's scaling (tt__split_scale), driven directly. */
#include "tt_test.h"
#include "internal.h"

#define MS INT64_C(1000000)

static void check(const tt_times *t, int64_t sched)
{
    CHECK_OP(t->user_ns + t->system_ns, ==, t->total_ns);
    CHECK_OP(t->total_ns, ==, sched);
    CHECK_OP(t->user_ns, >=, 0);
    CHECK_OP(t->system_ns, >=, 0);
}

TT_TEST(only_user_ticks_gives_all_to_user)
{
    tt__split prev = {0};
    tt_times t;
    tt__split_scale(&prev, 8 * MS, 8 * MS, 10 * MS, &t);
    check(&t, 10 * MS);
    CHECK_OP(t.user_ns, ==, 10 * MS);
}

TT_TEST(only_system_ticks_gives_all_to_system)
{
    tt__split prev = {0};
    tt_times t;
    tt__split_scale(&prev, 0, 4 * MS, 7 * MS, &t);
    check(&t, 7 * MS);
    CHECK_OP(t.system_ns, ==, 7 * MS);
}

TT_TEST(no_ticks_yet_counts_as_user)
{
    tt__split prev = {0};
    tt_times t;
    tt__split_scale(&prev, 0, 0, 3 * MS, &t);
    check(&t, 3 * MS);
    CHECK_OP(t.user_ns, ==, 3 * MS);
}

TT_TEST(scales_in_tick_proportion)
{
    tt__split prev = {0};
    tt_times t;
    /* 3 user ticks, 1 system tick, 100 ms runtime: 75 / 25. */
    tt__split_scale(&prev, 12 * MS, 16 * MS, 100 * MS, &t);
    check(&t, 100 * MS);
    CHECK_OP(t.user_ns, ==, 75 * MS);
    CHECK_OP(t.system_ns, ==, 25 * MS);
}

TT_TEST(a_system_tick_does_not_take_user_back)
{
    tt__split prev = {0};
    tt_times a, b;
    tt__split_scale(&prev, 4 * MS, 4 * MS, 40 * MS, &a); /* all user so far */
    tt__split_scale(&prev, 4 * MS, 8 * MS, 41 * MS, &b); /* one system tick lands */
    check(&b, 41 * MS);
    CHECK_OP(b.user_ns, >=, a.user_ns);
    CHECK_OP(b.system_ns, >=, a.system_ns);
    CHECK_OP(b.user_ns, ==, 40 * MS);
}

TT_TEST(older_runtime_returns_the_last_answer)
{
    tt__split prev = {0};
    tt_times a, b;
    tt__split_scale(&prev, 4 * MS, 8 * MS, 50 * MS, &a);
    tt__split_scale(&prev, 4 * MS, 8 * MS, 45 * MS, &b); /* a racing reader's older sample */
    CHECK_OP(b.user_ns, ==, a.user_ns);
    CHECK_OP(b.system_ns, ==, a.system_ns);
}

TT_TEST(huge_values_do_not_overflow)
{
    tt__split prev = {0};
    tt_times t;
    int64_t year = INT64_C(365) * 24 * 3600 * 1000000000;
    tt__split_scale(&prev, 30 * year, 40 * year, 40 * year, &t);
    check(&t, 40 * year);
    CHECK_OP(t.system_ns, ==, 10 * year);
}

/* Random walks of raw samples: the guarantees hold at every step. */
TT_TEST(random_walks_keep_the_guarantees)
{
    uint64_t seed = 88172645463325252u;
    for (int walk = 0; walk < 200; walk++) {
        tt__split prev = {0};
        tt_times last = {0, 0, 0};
        int64_t virt = 0, prof = 0, sched = 0;
        for (int step = 0; step < 500; step++) {
            seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
            switch (seed % 4) {
            case 0: virt += 4 * MS, prof += 4 * MS; break; /* user tick */
            case 1: prof += 4 * MS; break;                 /* system tick */
            default: break;                                /* no tick */
            }
            sched += (int64_t)(seed >> 40) % (6 * MS);
            tt_times t;
            tt__split_scale(&prev, virt, prof, sched, &t);
            CHECK_OP(t.user_ns + t.system_ns, ==, t.total_ns);
            CHECK_OP(t.user_ns, >=, last.user_ns);
            CHECK_OP(t.system_ns, >=, last.system_ns);
            CHECK_OP(t.total_ns, <=, sched);
            last = t;
        }
    }
}

/* A handle a thread opens on itself starts from the kernel's split, so it
 * never reads below what getrusage() (or /proc, the same figure) said
 * before. Many getrusage() reads between bursts of system calls make the
 * kernel clamp its previous answer, which a fresh scaling would not know. */
TT_TEST(a_self_handle_never_reads_below_the_kernels_earlier_split)
{
    for (int round = 0; round < 50; round++) {
        tt_times k, h;
        for (int i = 0; i < 200; i++) {
            CHECK_OP(tt_getrusage_thread(&k), ==, 0);
            for (volatile int spin = 0; spin < 2000; spin++) {
            }
        }
        tt_thread *self;
        CHECK_OP(tt_thread_open(0, &self), ==, 0);
        CHECK_OP(tt_thread_times(self, &h), ==, 0);
        CHECK_OP(h.user_ns, >=, k.user_ns);
        CHECK_OP(h.system_ns, >=, k.system_ns);
        tt_thread_close(self);
    }
}

TT_TEST_MAIN()
