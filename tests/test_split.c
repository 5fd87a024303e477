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

/* tt_times_with_total: a lagging kernel split brought up to a later,
 * precise total. */
TT_TEST(with_total_divides_the_new_runtime_as_the_kernel_did)
{
    tt_times k = {75 * MS, 25 * MS, 100 * MS}, t;
    CHECK_OP(tt_times_with_total(&k, 104 * MS, &t), ==, 0);
    CHECK_OP(t.total_ns, ==, 104 * MS);
    CHECK_OP(t.user_ns, ==, 78 * MS);
    CHECK_OP(t.system_ns, ==, 26 * MS);
}

TT_TEST(with_total_never_goes_below_the_kernels_parts)
{
    uint64_t seed = 2463534242u;
    for (int i = 0; i < 100000; i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        tt_times k = {(int64_t)(seed % (1000 * MS)), (int64_t)((seed >> 20) % (1000 * MS)), 0}, t;
        k.total_ns = k.user_ns + k.system_ns;
        int64_t total = k.total_ns + (int64_t)((seed >> 40) % (4 * MS));
        CHECK_OP(tt_times_with_total(&k, total, &t), ==, 0);
        CHECK_OP(t.total_ns, ==, total);
        CHECK_OP(t.user_ns + t.system_ns, ==, total);
        CHECK_OP(t.user_ns, >=, k.user_ns);
        CHECK_OP(t.system_ns, >=, k.system_ns);
    }
}

TT_TEST(with_total_keeps_the_kernels_figure_when_it_is_later)
{
    tt_times k = {3 * MS, 1 * MS, 4 * MS}, t;
    CHECK_OP(tt_times_with_total(&k, 2 * MS, &t), ==, 0);
    CHECK_OP(t.user_ns, ==, 3 * MS);
    CHECK_OP(t.system_ns, ==, 1 * MS);
    CHECK_OP(t.total_ns, ==, 4 * MS);
}

TT_TEST(with_total_of_an_empty_split_is_all_user)
{
    tt_times k = {0, 0, 0}, t;
    CHECK_OP(tt_times_with_total(&k, 5 * MS, &t), ==, 0);
    CHECK_OP(t.user_ns, ==, 5 * MS);
    CHECK_OP(t.system_ns, ==, 0);
    k.system_ns = k.total_ns = 2 * MS; /* only system so far: stays so */
    CHECK_OP(tt_times_with_total(&k, 5 * MS, &t), ==, 0);
    CHECK_OP(t.system_ns, ==, 5 * MS);
}

TT_TEST(with_total_refuses_bad_arguments)
{
    tt_times k = {MS, MS, 2 * MS}, t = {7, 7, 14};
    CHECK_OP(tt_times_with_total(NULL, MS, &t), ==, -EFAULT);
    CHECK_OP(tt_times_with_total(&k, MS, NULL), ==, -EFAULT);
    CHECK_OP(tt_times_with_total(&k, -1, &t), ==, -EINVAL);
    tt_times neg = {-1, MS, 0};
    CHECK_OP(tt_times_with_total(&neg, MS, &t), ==, -EINVAL);
    tt_times big = {INT64_MAX, 1, 0};
    CHECK_OP(tt_times_with_total(&big, MS, &t), ==, -EINVAL);
    CHECK_OP(t.user_ns, ==, 7); /* untouched */
    /* out may be the input */
    CHECK_OP(tt_times_with_total(&k, 4 * MS, &k), ==, 0);
    CHECK_OP(k.user_ns, ==, 2 * MS);
    CHECK_OP(k.total_ns, ==, 4 * MS);
}

TT_TEST_MAIN()
