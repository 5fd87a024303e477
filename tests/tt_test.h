/* A tiny test harness: each test file is one executable (one CTest test)
 * made of TT_TEST functions; a failed check prints where and what, and the
 * process exits non-zero. The closing line reads "N passed, N failed". */
#ifndef TT_TEST_H
#define TT_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*tt_test_fn)(void);
typedef struct tt_test_case {
    const char *name;
    tt_test_fn fn;
} tt_test_case;

#define TT_TEST_MAX 128
static tt_test_case tt_test_cases[TT_TEST_MAX];
static int tt_test_count;
static int tt_test_failed_checks;

#define TT_TEST(name)                                                              \
    static void name(void);                                                        \
    __attribute__((constructor)) static void tt_register_##name(void)              \
    {                                                                              \
        if (tt_test_count < TT_TEST_MAX)                                           \
            tt_test_cases[tt_test_count++] = (tt_test_case){#name, name};          \
    }                                                                              \
    static void name(void)

#define CHECK(cond)                                                                \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            tt_test_failed_checks++;                                               \
        }                                                                          \
    } while (0)

/* Compares two integers and prints both on failure. */
#define CHECK_OP(a, op, b)                                                         \
    do {                                                                           \
        long long tt_a_ = (long long)(a), tt_b_ = (long long)(b);                  \
        if (!(tt_a_ op tt_b_)) {                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s %s %s (%lld vs %lld)\n",      \
                    __FILE__, __LINE__, #a, #op, #b, tt_a_, tt_b_);                \
            tt_test_failed_checks++;                                               \
        }                                                                          \
    } while (0)

static inline int tt_test_main(int argc, char **argv)
{
    int passed = 0, failed = 0;
    const char *only = argc > 1 ? argv[1] : NULL;
    for (int i = 0; i < tt_test_count; i++) {
        if (only && strcmp(only, tt_test_cases[i].name) != 0)
            continue;
        int before = tt_test_failed_checks;
        tt_test_cases[i].fn();
        int ok = tt_test_failed_checks == before;
        printf("%s %s\n", ok ? "ok  " : "FAIL", tt_test_cases[i].name);
        fflush(stdout);
        ok ? passed++ : failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 && passed > 0 ? 0 : 1;
}

#define TT_TEST_MAIN() \
    int main(int argc, char **argv) { return tt_test_main(argc, argv); }

#endif /* TT_TEST_H */
