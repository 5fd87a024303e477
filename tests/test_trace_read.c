/* The trace reader on damaged input: truncated at every length, wrong
 * signature, unknown version, a broken section, random corruption. Every
 * case gets an error message, and what comes before the damage decodes
 * exactly as in the intact file. Also the trace model's pairing against a
 * plain reference, and the core's grow and read helpers. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "event_test_util.h"
#include "trace_model.h"
#include "util.h"

#define MAIN_EVENTS 40
#define OTHER_EVENTS 25
#define PROBE_CALLS 3 /* 2 records each, and two markers */
#define MAIN_PROBE_RECORDS (2 * PROBE_CALLS + 2)

/* A real dump: two threads, values, texts and a literal (string table). */
static long make_trace(unsigned char **bytes)
{
    tt_log_options o = small_log(64, 4);
    if (tt_log_start(&o) != 0)
        return -1;
    tt_event_name(1, "value");
    tt_event_name(3, "text");
    tt_event_name(5, "probe \xe2\x86\x92");
    for (uint64_t i = 0; i < MAIN_EVENTS; i++)
        tt_event_value(1, i);
    /* Probes give the file a summary; the mount markers frame them. */
    tt_event_mount(9);
    for (int i = 0; i < PROBE_CALLS; i++)
        tt_probe_end(5, tt_probe_begin(5), i == 0);
    tt_event_unmount(9);
    tt_event_text(3, "some text");
    tt_event_literal(4, "a literal from the string table");
    pthread_t th;
    value_thread_arg other = {"other", OTHER_EVENTS};
    pthread_create(&th, NULL, value_thread, &other);
    pthread_join(th, NULL);
    tt_log_stop();
    char path[256];
    temp_path(path, sizeof path, "reader");
    long n = tt_log_dump(path) == 0 ? read_file(path, bytes) : -1;
    unlink(path);
    return n;
}

/* a from the damaged file, b from the intact one. A literal whose string
 * table was cut off keeps everything but its text. */
static int same_event(const tt__trace_event *a, const tt__trace_event *b)
{
    if (a->index != b->index || a->time != b->time || a->id != b->id || a->kind != b->kind)
        return 0;
    if (a->kind == TT__KIND_LITERAL && !a->text)
        return 1;
    return a->p0 == b->p0 && a->text_len == b->text_len &&
           (!a->text_len || memcmp(a->text, b->text, a->text_len) == 0);
}

/* Every event the damaged parse yields equals the intact one at the same
 * place; returns how many it yields. */
static uint64_t check_prefix(const tt__trace *good, const tt__trace *cut, int *mismatches)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < cut->nthreads && i < good->nthreads; i++) {
        const tt__trace_thread *c = &cut->threads[i], *g = &good->threads[i];
        for (uint64_t k = 0; k < c->head - c->first; k++) {
            tt__trace_event ec, eg;
            if (!tt__trace_event_at(cut, c, k, &ec))
                continue;
            n++;
            if (!tt__trace_event_at(good, g, k, &eg) || !same_event(&ec, &eg))
                (*mismatches)++;
        }
    }
    return n;
}

static unsigned char *g_bytes;
static long g_len;

static void need_trace(void)
{
    if (!g_bytes)
        g_len = make_trace(&g_bytes);
}

TT_TEST(intact_file_decodes)
{
    need_trace();
    CHECK_OP(g_len, >, 0);
    tt__trace t;
    CHECK_OP(tt__trace_open(&t, g_bytes, (size_t)g_len), ==, 0);
    CHECK(!t.damaged);
    CHECK_OP(t.nthreads, ==, 2);
    int mismatches = 0;
    CHECK_OP(check_prefix(&t, &t, &mismatches), ==, MAIN_EVENTS + 2 + MAIN_PROBE_RECORDS + OTHER_EVENTS);
    tt__trace_close(&t);
}

TT_TEST(truncated_at_every_length)
{
    need_trace();
    tt__trace good;
    CHECK_OP(tt__trace_open(&good, g_bytes, (size_t)g_len), ==, 0);
    int mismatches = 0, silent = 0, refused_late = 0;
    uint64_t last = 0;
    for (long len = 0; len < g_len; len++) {
        unsigned char *copy = malloc((size_t)len + 1); /* exact size: ASan sees any overread */
        memcpy(copy, g_bytes, (size_t)len);
        tt__trace t;
        int rc = tt__trace_open(&t, copy, (size_t)len);
        if (rc == 0) {
            uint64_t n = check_prefix(&good, &t, &mismatches);
            /* Cutting less off never yields fewer events. */
            if (n < last)
                mismatches++;
            last = n;
        } else if (len >= TT__TRACE_HEADER_SIZE) { /* the whole 1.1 header is there */
            refused_late++;
        }
        if (!t.damaged || !t.error[0])
            silent++;
        tt__trace_close(&t);
        free(copy);
    }
    CHECK_OP(mismatches, ==, 0);
    CHECK_OP(silent, ==, 0);
    CHECK_OP(refused_late, ==, 0);
    /* Cut inside the string table only: all events, only the literal lost. */
    CHECK_OP(last, ==, MAIN_EVENTS + 2 + MAIN_PROBE_RECORDS + OTHER_EVENTS);
    tt__trace_close(&good);
}

TT_TEST(wrong_signature_and_version)
{
    need_trace();
    unsigned char *copy = malloc((size_t)g_len);
    memcpy(copy, g_bytes, (size_t)g_len);
    copy[0] = 'X';
    tt__trace t;
    CHECK_OP(tt__trace_open(&t, copy, (size_t)g_len), ==, -EINVAL);
    CHECK(strstr(t.error, "not a threadtime trace") != NULL);
    tt__trace_close(&t);
    memcpy(copy, g_bytes, (size_t)g_len);
    tt__trace_header h;
    memcpy(&h, copy, sizeof h);
    h.version_major = 2;
    memcpy(copy, &h, sizeof h);
    CHECK_OP(tt__trace_open(&t, copy, (size_t)g_len), ==, -EINVAL);
    CHECK(strstr(t.error, "version 2.") != NULL);
    tt__trace_close(&t);
    free(copy);
}

TT_TEST(broken_second_section_keeps_the_first)
{
    need_trace();
    tt__trace good;
    CHECK_OP(tt__trace_open(&good, g_bytes, (size_t)g_len), ==, 0);
    unsigned char *copy = malloc((size_t)g_len);
    memcpy(copy, g_bytes, (size_t)g_len);
    /* The second section starts after the header, the first section's
     * header and its records. */
    size_t second = TT__TRACE_HEADER_SIZE + TT__TRACE_SECTION_SIZE +
                    (size_t)good.threads[0].stored * TT__TRACE_RECORD_SIZE;
    memset(copy + second + offsetof(tt__ring, magic), 0xee, 4);
    tt__trace t;
    CHECK_OP(tt__trace_open(&t, copy, (size_t)g_len), ==, 0);
    CHECK(t.damaged && strstr(t.error, "section 2 of 2") != NULL);
    CHECK_OP(t.nthreads, ==, 1);
    int mismatches = 0;
    CHECK_OP(check_prefix(&good, &t, &mismatches), ==, count_committed(&good, &good.threads[0]));
    CHECK_OP(mismatches, ==, 0);
    tt__trace_close(&t);
    tt__trace_close(&good);
    free(copy);
}

/* Copies the dump and lets damage() change the copy; returns the parse. */
static int damaged_copy(unsigned char **copy, tt__trace *t, void (*damage)(unsigned char *, tt__trace_header *))
{
    *copy = malloc((size_t)g_len);
    memcpy(*copy, g_bytes, (size_t)g_len);
    tt__trace_header h;
    memcpy(&h, *copy, sizeof h);
    damage(*copy, &h);
    memcpy(*copy, &h, sizeof h);
    return tt__trace_open(t, *copy, (size_t)g_len);
}

static void names_past_the_end(unsigned char *b, tt__trace_header *h) { (void)b, h->names_offset = (uint64_t)g_len - 4; }
static void names_huge_size(unsigned char *b, tt__trace_header *h) { (void)b, h->names_size = UINT64_MAX - 7; }
static void name_too_long(unsigned char *b, tt__trace_header *h) { b[h->names_offset + 16 + 5] = 1; }
static void name_not_utf8(unsigned char *b, tt__trace_header *h) { b[h->names_offset + 8] = 0xc0; }
static void summary_count_overstated(unsigned char *b, tt__trace_header *h)
{
    tt__summary_header sh;
    memcpy(&sh, b + h->summary_offset, sizeof sh);
    sh.count = UINT32_MAX;
    memcpy(b + h->summary_offset, &sh, sizeof sh);
}
static void summary_entry_size(unsigned char *b, tt__trace_header *h)
{
    tt__summary_header sh;
    memcpy(&sh, b + h->summary_offset, sizeof sh);
    sh.entry_size = 8;
    memcpy(b + h->summary_offset, &sh, sizeof sh);
}
static void summary_offset_wraps(unsigned char *b, tt__trace_header *h) { (void)b, h->summary_offset = UINT64_MAX - 8; }

TT_TEST(damaged_names_and_summary_cost_only_themselves)
{
    need_trace();
    tt__trace good;
    CHECK_OP(tt__trace_open(&good, g_bytes, (size_t)g_len), ==, 0);
    CHECK(!good.damaged && good.has_summary);
    CHECK_OP(good.nnames, ==, 3);
    CHECK_OP(good.nsummary, ==, 1);
    CHECK(good.nsummary == 1 && good.summary[0].id == 5 && good.summary[0].sums.calls == PROBE_CALLS &&
          good.summary[0].sums.thrown == 1);
    static const struct {
        void (*damage)(unsigned char *, tt__trace_header *);
        const char *message;
        uint32_t names, summary;
    } cases[] = {
        {names_past_the_end, "name table missing or cut off", 0, 1},
        {names_huge_size, "name table missing or cut off", 0, 1},
        {name_too_long, "name table damaged at byte", 1, 1}, /* the second entry: the first stays */
        {name_not_utf8, "is not UTF-8; dropped", 2, 1},
        {summary_count_overstated, "probe summary cut off", 3, 1},
        {summary_entry_size, "entries of 8 bytes", 3, 0},
        {summary_offset_wraps, "probe summary missing or cut off", 3, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        unsigned char *copy;
        tt__trace t;
        CHECK_OP(damaged_copy(&copy, &t, cases[c].damage), ==, 0);
        if (!strstr(t.error, cases[c].message))
            fprintf(stderr, "case %zu: %s\n", c, t.error);
        CHECK(t.damaged && strstr(t.error, cases[c].message) != NULL);
        CHECK_OP(t.nnames, ==, cases[c].names);
        CHECK_OP(t.nsummary, ==, cases[c].summary);
        /* Every event is still there, as in the intact file. */
        int mismatches = 0;
        CHECK_OP(check_prefix(&good, &t, &mismatches), ==, MAIN_EVENTS + 2 + MAIN_PROBE_RECORDS + OTHER_EVENTS);
        CHECK_OP(mismatches, ==, 0);
        tt__trace_close(&t);
        free(copy);
    }
    tt__trace_close(&good);
}

TT_TEST(random_corruption_never_crashes)
{
    need_trace();
    unsigned char *copy = malloc((size_t)g_len);
    uint64_t x = 0x9E3779B97F4A7C15u;
    int odd = 0;
    for (int round = 0; round < 3000; round++) {
        memcpy(copy, g_bytes, (size_t)g_len);
        for (int flips = 0; flips < 1 + round % 8; flips++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            copy[x % (uint64_t)g_len] ^= (unsigned char)(1u << (x >> 61));
        }
        tt__trace t;
        int rc = tt__trace_open(&t, copy, (size_t)g_len);
        if (rc != 0 && rc != -EINVAL)
            odd++;
        for (uint32_t i = 0; rc == 0 && i < t.nthreads; i++) {
            tt__trace_event ev;
            uint64_t n = t.threads[i].head - t.threads[i].first;
            for (uint64_t k = 0; k < n && k < 100000; k++)
                if (tt__trace_event_at(&t, &t.threads[i], k, &ev) && ev.text && ev.text_len > 255)
                    odd++;
        }
        tt__trace_close(&t);
    }
    CHECK_OP(odd, ==, 0);
    free(copy);
}

/* ---- the trace model's pairing ---- */

#define PAIR_RECORDS 3000

typedef struct got_pair {
    uint64_t begin_k, end_k;
} got_pair;

typedef struct pairs_seen {
    got_pair *pairs;
    size_t n;
    size_t open;
} pairs_seen;

static void seen_track(void *ctx, const tt__track *tr)
{
    (void)ctx;
    (void)tr;
}

static void seen_event(void *ctx, const tt__track *tr, const tt__step *ev, const tt__step *b)
{
    pairs_seen *c = ctx;
    (void)tr;
    if (b && c->n < PAIR_RECORDS)
        c->pairs[c->n++] = (got_pair){b->k, ev->k};
}

static void seen_open(void *ctx, const tt__track *tr, const tt__step *b)
{
    (void)tr;
    (void)b;
    ((pairs_seen *)ctx)->open++;
}

/* Begins and ends of four ids in a random order on one thread: the model
 * pairs each end with the latest open begin of its id, exactly as a plain
 * search of the stack from its top does (the rule the model replaced with
 * a per-id chain to make it linear). */
TT_TEST(pairing_matches_a_stack_search)
{
    tt_log_options o = small_log(4096, 2);
    CHECK_OP(tt_log_start(&o), ==, 0);
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < PAIR_RECORDS; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t id = 1 + (uint32_t)(x % 4);
        if ((x >> 8) % 5 < 3)
            tt_event_begin(id);
        else
            tt_event_end(id);
    }
    tt_log_stop();
    char path[256];
    temp_path(path, sizeof path, "pairs");
    unsigned char *bytes = NULL;
    long len = tt_log_dump(path) == 0 ? read_file(path, &bytes) : -1;
    unlink(path);
    CHECK(len > 0);
    tt__trace t;
    CHECK_OP(tt__trace_open(&t, bytes, (size_t)len), ==, 0);
    const tt__trace_thread *th = NULL;
    for (uint32_t i = 0; i < t.nthreads; i++)
        if (t.threads[i].head - t.threads[i].first == PAIR_RECORDS)
            th = &t.threads[i];
    CHECK(th != NULL);
    pairs_seen seen = {calloc(PAIR_RECORDS, sizeof(got_pair)), 0, 0};
    const tt__walk_ops ops = {seen_track, seen_event, NULL, seen_open};
    CHECK_OP(tt__trace_walk(&t, &ops, &seen), ==, 0);
    /* The reference: a stack of open begins, searched from its top. */
    uint64_t *stack = calloc(PAIR_RECORDS, sizeof *stack);
    uint32_t *ids = calloc(PAIR_RECORDS, sizeof *ids);
    size_t depth = 0, n = 0, mismatches = 0;
    tt__trace_event ev;
    for (uint64_t k = 0; th && k < PAIR_RECORDS; k++) {
        if (!tt__trace_event_at(&t, th, k, &ev))
            continue;
        if (ev.kind == TT__KIND_BEGIN) {
            stack[depth] = k, ids[depth++] = ev.id;
            continue;
        }
        size_t j = depth;
        while (j > 0 && ids[j - 1] != ev.id)
            j--;
        if (j == 0)
            continue;
        mismatches += n >= seen.n || seen.pairs[n].begin_k != stack[j - 1] || seen.pairs[n].end_k != k;
        n++;
        memmove(stack + j - 1, stack + j, (depth - j) * sizeof *stack);
        memmove(ids + j - 1, ids + j, (depth - j) * sizeof *ids);
        depth--;
    }
    CHECK_OP(n, >, 100);
    CHECK_OP(seen.n, ==, n);
    CHECK_OP(mismatches, ==, 0);
    CHECK_OP(seen.open, ==, depth);
    free(stack);
    free(ids);
    free(seen.pairs);
    tt__trace_close(&t);
    free(bytes);
}

/* ---- the core's helpers ---- */

TT_TEST(grow_doubles_and_refuses_overflow)
{
    size_t cap = 0;
    int *a = tt__grow(NULL, &cap, 1, sizeof *a, 16);
    CHECK(a != NULL);
    CHECK_OP(cap, ==, 16);
    int *same = tt__grow(a, &cap, 16, sizeof *a, 16);
    CHECK(same == a);
    a = tt__grow(a, &cap, 17, sizeof *a, 16);
    CHECK(a != NULL);
    CHECK_OP(cap, ==, 32);
    /* need * size past SIZE_MAX, and a count whose doubling would wrap:
     * NULL, the array and its capacity untouched. */
    CHECK(tt__grow(a, &cap, SIZE_MAX / 2, sizeof *a, 16) == NULL);
    CHECK(tt__grow(a, &cap, SIZE_MAX, 1, 16) == NULL);
    CHECK_OP(cap, ==, 32);
    a[31] = 7;
    CHECK_OP(a[31], ==, 7);
    free(a);
}

static void *pipe_writer(void *arg)
{
    int fd = *(int *)arg;
    unsigned char chunk[4096];
    for (int i = 0; i < 64; i++) {
        memset(chunk, i, sizeof chunk);
        if (write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk)
            break;
    }
    close(fd);
    return NULL;
}

/* A pipe holds less than the writer sends (64 KiB here against 256 KiB):
 * tt__read_all reads it as a stream, to its end. */
TT_TEST(read_all_reads_a_pipe_to_its_end)
{
    int fds[2];
    CHECK_OP(pipe(fds), ==, 0);
    pthread_t th;
    pthread_create(&th, NULL, pipe_writer, &fds[1]);
    unsigned char *buf = NULL;
    size_t len = 0;
    CHECK_OP(tt__read_all(fds[0], &buf, &len), ==, 0);
    pthread_join(th, NULL);
    close(fds[0]);
    CHECK_OP(len, ==, 64 * 4096);
    int bad = 0;
    for (size_t i = 0; buf && i < len; i++)
        bad += buf[i] != (unsigned char)(i / 4096);
    CHECK_OP(bad, ==, 0);
    free(buf);
}

TT_TEST_MAIN()
