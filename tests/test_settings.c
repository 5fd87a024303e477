/* The readers of the environment against the table they are built from
 * (src/settings.def): every row's default, both ends of its range, a value
 * past each end and a malformed one, and what a bad value does (refused
 * with one line on stderr, or read as the fallback in silence). The table
 * also holds the public header's limits. */
#include "settings.h"
#include "../preload/run_file.h"
#include "threadtime/threadtime.h"
#include "tt_test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* What a reader call printed on stderr, caught in a file under TMPDIR. */
static char g_said[1024];
static int g_fd = -1, g_saved = -1;

static void catch_stderr(void)
{
    const char *dir = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/test_settings.XXXXXX", dir && *dir ? dir : ".");
    g_fd = mkstemp(path);
    CHECK(g_fd >= 0);
    unlink(path);
    fflush(stderr);
    g_saved = dup(2);
    dup2(g_fd, 2);
}

static const char *caught(void)
{
    fflush(stderr);
    dup2(g_saved, 2);
    close(g_saved);
    ssize_t got = pread(g_fd, g_said, sizeof g_said - 1, 0);
    g_said[got > 0 ? got : 0] = 0;
    close(g_fd);
    return g_said;
}

/* Reads row id as an unsigned with NAME=value (NULL: unset); *said is what
 * the reader printed. */
static int read_uint(tt__setting_id id, const char *value, uint64_t *out, const char **said)
{
    if (value)
        setenv(tt__settings[id].name, value, 1);
    else
        unsetenv(tt__settings[id].name);
    catch_stderr();
    int rc = tt__setting_uint(id, out);
    *said = caught();
    unsetenv(tt__settings[id].name);
    return rc;
}

static int read_enum(tt__setting_id id, const char *value, unsigned *out, const char **said)
{
    if (value)
        setenv(tt__settings[id].name, value, 1);
    else
        unsetenv(tt__settings[id].name);
    catch_stderr();
    int rc = tt__setting_enum(id, out);
    *said = caught();
    unsetenv(tt__settings[id].name);
    return rc;
}

/* A bad value: refused with one line naming it, *out untouched, or read as
 * expect with nothing said. */
static void check_bad(const tt__setting *s, int rc, const char *said, const char *value, uint64_t got, uint64_t expect)
{
    CHECK_OP(rc, ==, -EINVAL);
    if (s->refuse) {
        CHECK_OP(got, ==, 12345); /* the sentinel the caller put there */
        CHECK(strstr(said, s->name) != NULL && strstr(said, value) != NULL && strstr(said, s->text) != NULL);
        CHECK(strchr(said, '\n') == said + strlen(said) - 1);
    } else {
        CHECK_OP(got, ==, expect);
        CHECK_OP(said[0], ==, 0);
    }
    if (rc != -EINVAL || (s->refuse ? got != 12345 : got != expect))
        fprintf(stderr, "  (%s=\"%s\")\n", s->name, value);
}

static void check_uint_row(tt__setting_id id)
{
    const tt__setting *s = &tt__settings[id];
    int octal = s->type == TT__SETTING_MODE;
    const char *fmt = octal ? "0%llo" : "%llu";
    char text[64];
    const char *said;
    uint64_t v = 12345;
    CHECK_OP(read_uint(id, NULL, &v, &said), ==, 1);
    CHECK_OP(v, ==, s->dflt);
    v = 12345;
    CHECK_OP(read_uint(id, "", &v, &said), ==, 1);
    CHECK_OP(v, ==, s->dflt);
    /* Both ends, and the default written out, are read as they are. */
    uint64_t good[] = {s->min, s->max, s->dflt};
    for (size_t i = 0; i < 3; i++) {
        snprintf(text, sizeof text, fmt, (unsigned long long)good[i]);
        v = 12345;
        CHECK_OP(read_uint(id, text, &v, &said), ==, 0);
        CHECK_OP(v, ==, good[i]);
        CHECK_OP(said[0], ==, 0);
    }
    /* One past the top, below the bottom, not a number, a sign. */
    snprintf(text, sizeof text, fmt, (unsigned long long)s->max + 1);
    v = 12345;
    int rc = read_uint(id, text, &v, &said);
    check_bad(s, rc, said, text, v, s->dflt);
    if (s->min > 0) {
        snprintf(text, sizeof text, fmt, (unsigned long long)s->min - 1);
        v = 12345;
        rc = read_uint(id, text, &v, &said);
        check_bad(s, rc, said, text, v, s->dflt);
    }
    const char *malformed[] = {"12x", "-1", "lots", octal ? "0680" : "0x10"};
    for (size_t i = 0; i < 4; i++) {
        v = 12345;
        rc = read_uint(id, malformed[i], &v, &said);
        check_bad(s, rc, said, malformed[i], v, s->dflt);
    }
    if (octal) { /* without the owner's read and write */
        v = 12345;
        rc = read_uint(id, "0400", &v, &said);
        check_bad(s, rc, said, "0400", v, s->dflt);
        CHECK_OP(read_uint(id, "0640", &v, &said), ==, 0);
        CHECK_OP(v, ==, 0640);
    }
}

/* The index of value in s->values, counted here by hand. */
static int index_of(const tt__setting *s, const char *value)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", s->values);
    int i = 0;
    for (char *save, *tok = strtok_r(copy, "|", &save); tok; tok = strtok_r(NULL, "|", &save), i++)
        if (strcmp(tok, value) == 0)
            return i;
    return -1;
}

static void check_enum_row(tt__setting_id id)
{
    const tt__setting *s = &tt__settings[id];
    const char *said;
    unsigned v = 12345;
    CHECK(index_of(s, s->dflt_value) >= 0);
    CHECK_OP(read_enum(id, NULL, &v, &said), ==, 1);
    CHECK_OP(v, ==, index_of(s, s->dflt_value));
    CHECK_OP(read_enum(id, "", &v, &said), ==, 1);
    CHECK_OP(v, ==, index_of(s, s->dflt_value));
    char copy[256];
    snprintf(copy, sizeof copy, "%s", s->values);
    int n = 0;
    for (char *save, *tok = strtok_r(copy, "|", &save); tok; tok = strtok_r(NULL, "|", &save), n++) {
        v = 12345;
        CHECK_OP(read_enum(id, tok, &v, &said), ==, 0);
        CHECK_OP(v, ==, n);
        CHECK_OP(said[0], ==, 0);
    }
    CHECK(n >= 2);
    int expect = index_of(s, s->fallback ? s->fallback : s->dflt_value);
    CHECK(expect >= 0);
    /* Another word, a value with a space, one in capitals, a prefix of
     * the first value. */
    char upper[64], prefix[64];
    snprintf(upper, sizeof upper, "%s", s->dflt_value);
    for (char *p = upper; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    snprintf(prefix, sizeof prefix, "%.*s", (int)strcspn(s->values, "|") - 1, s->values);
    char spaced[64];
    snprintf(spaced, sizeof spaced, " %s", s->dflt_value);
    const char *bad[] = {"sundial", spaced, upper, prefix};
    for (size_t i = 0; i < 4; i++) {
        if (!bad[i][0] || index_of(s, bad[i]) >= 0) /* "0" has no prefix; "1" no capital */
            continue;
        v = 12345;
        int rc = read_enum(id, bad[i], &v, &said);
        check_bad(s, rc, said, bad[i], v, (uint64_t)expect);
    }
}

TT_TEST(every_row_reads_its_range_and_refuses_or_falls_back_outside_it)
{
    for (int id = 0; id < TT__SET_COUNT; id++) {
        const tt__setting *s = &tt__settings[id];
        CHECK(strncmp(s->name, "THREADTIME_", 11) == 0);
        CHECK(strncmp(s->text, s->name, strlen(s->name)) == 0);
        switch (s->type) {
        case TT__SETTING_UINT:
        case TT__SETTING_MODE:
            CHECK(s->min <= s->dflt && s->dflt <= s->max);
            CHECK(s->fallback == NULL); /* a number falls back to its default */
            check_uint_row((tt__setting_id)id);
            break;
        case TT__SETTING_ENUM:
            check_enum_row((tt__setting_id)id);
            break;
        case TT__SETTING_PATH:
            setenv(s->name, "some/file", 1);
            CHECK(tt__setting_path((tt__setting_id)id) != NULL &&
                  strcmp(tt__setting_path((tt__setting_id)id), "some/file") == 0);
            setenv(s->name, "", 1);
            CHECK(tt__setting_path((tt__setting_id)id) == NULL);
            unsetenv(s->name);
            CHECK(tt__setting_path((tt__setting_id)id) == NULL);
            break;
        }
    }
}

TT_TEST(the_table_holds_the_public_limits)
{
    CHECK_OP(tt__settings[TT__SET_RING].max, ==, TT_LOG_RING_MAX);
    CHECK_OP(tt__settings[TT__SET_RING].dflt, ==, TT_LOG_RING_DEFAULT);
    CHECK_OP(tt__settings[TT__SET_THREADS].max, ==, TT_LOG_THREADS_MAX);
    CHECK_OP(tt__settings[TT__SET_THREADS].dflt, ==, TT_LOG_THREADS_DEFAULT);
    /* The fields these rows stand in for are 32 bits wide. */
    CHECK_OP(tt__settings[TT__SET_FORK_FILES].max, ==, UINT32_MAX);
    /* The most a run file's reader takes: more would record files that
     * threadtime run then refuses. */
    CHECK_OP(tt__settings[TT__SET_RUN_THREADS].max, ==, TT_RUN_THREAD_CAP_MAX);
    CHECK_OP(tt__settings[TT__SET_RUN_SAMPLES].max, ==, TT_RUN_SAMPLE_CAP_MAX);
    CHECK_OP(tt__settings[TT__SET_RUN_THREADS].min, >=, 1);
    CHECK_OP(tt__settings[TT__SET_RUN_SAMPLES].min, >=, 1);
    /* THREADTIME_CLOCK's values are read as tt_log_clock by their index. */
    CHECK_OP(index_of(&tt__settings[TT__SET_CLOCK], "counter"), ==, TT_LOG_CLOCK_COUNTER);
    CHECK_OP(index_of(&tt__settings[TT__SET_CLOCK], "monotonic"), ==, TT_LOG_CLOCK_MONOTONIC);
    CHECK_OP(index_of(&tt__settings[TT__SET_CLOCK], "auto"), ==, TT_LOG_CLOCK_AUTO);
}

TT_TEST_MAIN()
