/* The legacy /proc reader with hostile thread names. */
#include "tt_test.h"
#include "threadtime/threadtime.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <unistd.h>

/* Names a thread may give itself (the kernel keeps 15 bytes). Each would
 * shift the fields of a parser that stops at the first ')' or splits on
 * white space. */
static const char *const hostile[] = {
    "a) b c", "x) 1 2 3 4 5", ")", "((", ") R 1 2 3", "new\nline) 7", " ", "9 9 9 9 9 9 9",
};

typedef struct named {
    const char *name;
    _Atomic pid_t tid;
    _Atomic int stop;
} named;

static void *named_main(void *arg)
{
    named *n = arg;
    prctl(PR_SET_NAME, n->name, 0, 0, 0);
    volatile uint64_t x = 0;
    for (int i = 0; i < 3000000; i++)
        x += (uint64_t)i;
    atomic_store(&n->tid, gettid());
    while (!atomic_load(&n->stop))
        usleep(1000);
    return NULL;
}

TT_TEST(hostile_names_parse)
{
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        named n = {.name = hostile[i]};
        pthread_t th;
        CHECK_OP(pthread_create(&th, NULL, named_main, &n), ==, 0);
        while (atomic_load(&n.tid) == 0)
            usleep(100);
        tt_procfs_stat st;
        int rc = tt_procfs_read(0, n.tid, &st);
        CHECK_OP(rc, ==, 0);
        if (rc == 0) {
            if (strcmp(st.name, hostile[i]) != 0)
                fprintf(stderr, "name %zu: got '%s'\n", i, st.name);
            CHECK(strcmp(st.name, hostile[i]) == 0);
            CHECK(st.state == 'S' || st.state == 'R' || st.state == 'D');
            CHECK_OP(st.user_ns, >=, 0);
            CHECK_OP(st.system_ns, >=, 0);
            /* The parsed CPU time is this thread's, not a shifted field:
             * never above the precise clock, never far below it. */
            int64_t precise = tt_tid_total_ns(n.tid);
            CHECK_OP(st.user_ns + st.system_ns, <=, precise);
            CHECK_OP(st.user_ns + st.system_ns, >=, precise - INT64_C(20000000));
        }
        atomic_store(&n.stop, 1);
        pthread_join(th, NULL);
    }
}

TT_TEST(process_and_missing)
{
    tt_procfs_stat st;
    CHECK_OP(tt_procfs_read(0, 0, &st), ==, 0);
    CHECK_OP(tt_procfs_read(getpid(), getpid(), &st), ==, 0);
    CHECK_OP(tt_procfs_read(0, 0, NULL), ==, -EFAULT);
    CHECK_OP(tt_procfs_read(-1, 0, &st), ==, -EINVAL);
    /* pid_max is at most 4M: this tid never exists. */
    CHECK_OP(tt_procfs_read(0, 1 << 23, &st), ==, -ESRCH);
}

TT_TEST_MAIN()
