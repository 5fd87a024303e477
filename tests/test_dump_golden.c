/* Golden tests of `threadtime dump`: a trace built here byte by byte (fixed
 * times, names, a string table, an overwritten ring, an uncommitted record,
 * intervals with and without a partner) is printed in every format and
 * compared with tests/golden/. A truncated copy must print what is intact,
 * say what is missing and exit with status 1.
 *
 *   test_dump_golden THREADTIME GOLDEN_DIR      compare
 *   TT_UPDATE_GOLDEN=1 test_dump_golden ...     rewrite the golden files
 *   TT_FUZZ_SEEDS=DIR test_dump_golden ...      also keep each input trace
 *                                               there (fuzz/seeds/) */
#include <string.h>
#include <sys/wait.h>

#include "event_test_util.h"

static const char *g_cli, *g_dir;

static void put_record(unsigned char *p, uint64_t time, unsigned kind, uint32_t id, uint64_t index,
                       uint64_t p0, uint64_t p1)
{
    uint64_t w[4] = {time, ((uint64_t)kind << TT__W1_KIND_SHIFT) | id | (index << TT__W1_TAG_SHIFT), p0, p1};
    memcpy(p, w, sizeof w);
}

static void put_text(unsigned char *p, uint64_t time, uint32_t id, uint64_t index, const char *text)
{
    uint64_t t[2] = {0, 0};
    memcpy(t, text, strnlen(text, 16));
    put_record(p, time, TT__KIND_TEXT, id, index, t[0], t[1]);
}

/* A section header at *off for a ring of `records`. */
static void put_section(unsigned char *buf, size_t *off, uint64_t head, uint64_t records, uint32_t stored,
                        uint32_t state, uint32_t tid, const char *name)
{
    tt__ring r = {.head = head, .slot_mask = (records - 1) * 32, .magic = TT__SECTION_MAGIC, .state = state,
                  .tid = tid, .stored = stored};
    memcpy(r.name, name, strlen(name));
    memcpy(buf + *off, &r, sizeof r);
    *off += sizeof r;
}

static const char g_strings[] = "a literal text";

/* Returns the file size. */
static size_t build_trace(unsigned char *buf)
{
    memset(buf, 0, 4096);
    tt__trace_header h = {.version_major = 1, .version_minor = 0, .header_size = 128, .section_size = 128,
                          .record_size = 32, .flags = TT__TRACE_END_ANCHOR,
                          .source = TT__TRACE_SOURCE_MONOTONIC_RAW, .sections = 2, .pid = 4242,
                          .anchors = {{1000000, 1000000, INT64_C(1700000000123456789)},
                                      {2000000, 2000000, INT64_C(1700000000124456789)}},
                          .ring_records = 8};
    memcpy(h.magic, TT__TRACE_MAGIC, TT__TRACE_MAGIC_LEN);
    size_t off = TT__TRACE_HEADER_SIZE_1_0; /* a 1.0 file: older traces must still read */

    /* Thread 100 "main": live, nothing lost. */
    put_section(buf, &off, 7, 8, 7, TT__RING_LIVE, 100, "main");
    put_record(buf + off, 1000500, TT__KIND_INSTANT, 1, 0, 0, 0), off += 32;
    put_text(buf + off, 1001000, 2, 1, "say \"hi\", then"), off += 32;
    put_record(buf + off, 1002250, TT__KIND_VALUE, 3, 2, 42, 0), off += 32;
    put_record(buf + off, 1003000, TT__KIND_BEGIN_CPU, 7, 3, 1000, 500), off += 32;
    put_record(buf + off, 1010000, TT__KIND_END_CPU, 7, 4, 5000, 700), off += 32;
    put_record(buf + off, 1010500, TT__KIND_LITERAL, 8, 5, 0, sizeof g_strings - 1), off += 32;
    put_record(buf + off, 1011000, TT__KIND_BEGIN, 9, 6, 0, 0), off += 32;

    /* Thread 101 "worker,2": exited; 2 records overwritten, 1 never
     * committed, an end without its begin. */
    put_section(buf, &off, 6, 4, 4, TT__RING_EXITED, 101, "worker,2");
    put_record(buf + off, 1004000, TT__KIND_BEGIN, 5, 2, 0, 0), off += 32;
    put_record(buf + off, 1006000, TT__KIND_INSTANT, 6, 0 /* wrong tag */, 0, 0), off += 32;
    put_record(buf + off, 1007000, TT__KIND_END, 5, 4, 0, 0), off += 32;
    put_record(buf + off, 1008000, TT__KIND_END, 3, 5, 0, 0), off += 32;

    h.strings_offset = off;
    h.strings_size = sizeof g_strings;
    memcpy(buf + off, g_strings, sizeof g_strings);
    off += sizeof g_strings;
    memcpy(buf, &h, TT__TRACE_HEADER_SIZE_1_0);
    return off;
}

/* A name table entry at *off (namespace ns). */
static void put_name_ns(unsigned char *buf, size_t *off, unsigned ns, uint64_t id, const char *name)
{
    uint64_t w = TT__NAME_WORD_NS(ns, id, strlen(name));
    memcpy(buf + *off, &w, sizeof w);
    memcpy(buf + *off + 8, name, strlen(name));
    *off += TT__NAME_ENTRY_SIZE(strlen(name));
}

static void put_name(unsigned char *buf, size_t *off, uint32_t id, const char *name)
{
    put_name_ns(buf, off, TT__NAMES_EVENT, id, name);
}

/* Damage to build_trace_1_1's tables; V12: the same trace as 1.2, with a
 * thread-name table (V12_HOSTILE: hostile names in it too). */
enum { INTACT, BAD_NAME, BAD_SUMMARY, HOSTILE, V12, V12_HOSTILE };

/* A 1.1 trace: names, a virtual thread whose request begins on one carrier
 * and ends (thrown, with CPU) on another, a platform thread's probes, an
 * interval placed by hand whose name is a probe's too, and a summary that
 * counted more calls than the rings kept. */
static size_t build_trace_1_1(unsigned char *buf, int damage)
{
    int v12 = damage == V12 || damage == V12_HOSTILE;
    int hostile = damage == HOSTILE || damage == V12_HOSTILE;
    memset(buf, 0, 4096);
    tt__trace_header h = {.version_major = 1, .version_minor = v12 ? 2 : 1, .header_size = TT__TRACE_HEADER_SIZE,
                          .section_size = 128, .record_size = 32, .flags = TT__TRACE_END_ANCHOR,
                          .source = TT__TRACE_SOURCE_MONOTONIC_RAW, .sections = 3, .pid = 4343,
                          .anchors = {{1000000, 1000000, INT64_C(1700000000123456789)},
                                      {2000000, 2000000, INT64_C(1700000000124456789)}},
                          .ring_records = 8};
    memcpy(h.magic, TT__TRACE_MAGIC, TT__TRACE_MAGIC_LEN);
    size_t off = sizeof h;

    /* HOSTILE: a thread name, a name and a text that would retitle the
     * terminal, clear it or start a C1 control sequence if printed raw. */
    put_section(buf, &off, 4, 8, 4, TT__RING_EXITED, 200, hostile ? "\x1b]0;pwn\x07\\" : "carrier-0");
    put_record(buf + off, 1001000, TT__KIND_MOUNT, 0, 0, 77, 0), off += 32;
    put_record(buf + off, 1001100, TT__KIND_BEGIN_CPU, 7, 1, 1000, 200), off += 32;
    put_text(buf + off, 1001200, 11, 2, hostile ? "\x1b]0;x\x07\r\n\xc2\x9b\x7f" : "parked"), off += 32;
    put_record(buf + off, 1001300, TT__KIND_UNMOUNT, 0, 3, 77, 0), off += 32;

    put_section(buf, &off, 4, 8, 4, TT__RING_LIVE, 201, "carrier-1");
    put_record(buf + off, 1005000, TT__KIND_MOUNT, 0, 0, 77, 0), off += 32;
    put_record(buf + off, 1005100, TT__KIND_INSTANT, 10, 1, 0, 0), off += 32;
    put_record(buf + off, 1006000, TT__KIND_END_CPU, 7, 2, 3000, 300 | TT__END_CPU_THROWN), off += 32;
    put_record(buf + off, 1006100, TT__KIND_UNMOUNT, 0, 3, 77, 0), off += 32;

    /* 1.2: the section keeps the first 15 bytes of the whole name. */
    put_section(buf, &off, 7, 8, 7, TT__RING_LIVE, 202, v12 ? "main-worker-wit" : "main");
    put_record(buf + off, 1002000, TT__KIND_BEGIN, 9, 0, 0, 0), off += 32;
    /* w2 = 1: what a caller inlined from an older header leaves in a
     * reused slot; a plain end never reads as thrown. */
    put_record(buf + off, 1003000, TT__KIND_END, 9, 1, 1, 0), off += 32;
    put_record(buf + off, 1004000, TT__KIND_BEGIN, 9, 2, 0, 0), off += 32;
    put_record(buf + off, 1006000, TT__KIND_END_THROWN, 9, 3, 0, 0), off += 32;
    put_record(buf + off, 1007000, TT__KIND_BEGIN, 12, 4, 0, 0), off += 32;
    put_record(buf + off, 1007500, TT__KIND_END, 12, 5, 0, 0), off += 32;
    put_record(buf + off, 1008000, TT__KIND_INSTANT, 10, 6, 0, 0), off += 32;

    h.names_offset = off;
    put_name(buf, &off, 7, "request");
    put_name(buf, &off, 9, "java.util.Base64$Encoder::encode");
    put_name(buf, &off, 10, damage == BAD_NAME  ? "x"
                            : hostile ? "tick\x1b[2J\xc2\x9b\"q\",\r\n\\ \xc3\xa9"
                                                : "tick, \xc3\xa9t\xc3\xa9");
    put_name(buf, &off, 11, "phase");
    put_name(buf, &off, 12, "java.util.Base64$Encoder::encode"); /* an overload: one row with id 9 */
    h.names_size = off - h.names_offset;
    if (damage == BAD_NAME) /* the third entry claims 300 bytes */
        buf[h.names_offset + 16 + 40 + 4] = 0x2c, buf[h.names_offset + 16 + 40 + 5] = 1;

    h.summary_offset = off;
    /* Entries as 1.1 wrote them: 72 bytes, before the measured ends' fields. */
    tt__summary_header sh = {.entry_size = damage == BAD_SUMMARY ? 12 : TT__SUMMARY_ENTRY_SIZE_1_1, .count = 2,
                             .overflow_calls = 3};
    tt__summary_entry se[2] = {
        {.id = 7, .sums = {.calls = 1, .total = 4900, .max = 4900, .thrown = 1, .cpu_apart = 1}},
        {.id = 9, .sums = {.calls = 5, .total = 6000, .max = 2000, .thrown = 1}},
    };
    memcpy(buf + off, &sh, sizeof sh), off += sizeof sh;
    for (size_t i = 0; i < 2; i++)
        memcpy(buf + off, &se[i], TT__SUMMARY_ENTRY_SIZE_1_1), off += TT__SUMMARY_ENTRY_SIZE_1_1;
    h.summary_size = off - h.summary_offset;
    if (v12) {
        /* Thread 202's whole name; 200's, which its section's name does
         * not start (a reused tid), is not shown; virtual thread 77's. */
        h.thread_names_offset = off;
        put_name_ns(buf, &off, TT__NAMES_OS_THREAD, 202,
                    hostile ? "main-worker-wit\x1b]0;pwn\x07\r\n\"q\",\\\xc2\x9b" : "main-worker-with-a-long-name");
        put_name_ns(buf, &off, TT__NAMES_OS_THREAD, 200, "not carrier-0");
        put_name_ns(buf, &off, TT__NAMES_VTHREAD, 77, hostile ? "w\x1b[2J\xc2\x9b\"v\",\r\n\\ \xc3\xa9" : "worker-v, \xc3\xa9");
        put_name_ns(buf, &off, TT__NAMES_VTHREAD, UINT64_C(0x123456789a), "far");
        h.thread_names_size = off - h.thread_names_offset;
    }
    memcpy(buf, &h, sizeof h);
    return off;
}

/* Probes whose ends carry a figure their caller measured (kinds 12 and 13,
 * tt_probe_end_measured): a virtual thread's call that begins on one
 * carrier and ends, thrown, on another with its own CPU; one with its time
 * mounted; one whose account was unreadable; a summary of 104-byte entries
 * with the measured totals. MEASURED_RINGS: the same without the summary,
 * so that --summary counts the pairs. */
enum { MEASURED = 100, MEASURED_RINGS = 101 };

static size_t build_trace_measured(unsigned char *buf, int which)
{
    memset(buf, 0, 4096);
    tt__trace_header h = {.version_major = 1, .version_minor = 1, .header_size = TT__TRACE_HEADER_SIZE,
                          .section_size = 128, .record_size = 32, .flags = TT__TRACE_END_ANCHOR,
                          .source = TT__TRACE_SOURCE_MONOTONIC_RAW, .sections = 3, .pid = 4444,
                          .anchors = {{1000000, 1000000, INT64_C(1700000000123456789)},
                                      {2000000, 2000000, INT64_C(1700000000124456789)}},
                          .ring_records = 8};
    memcpy(h.magic, TT__TRACE_MAGIC, TT__TRACE_MAGIC_LEN);
    size_t off = sizeof h;
    put_section(buf, &off, 3, 8, 3, TT__RING_LIVE, 300, "carrier-0");
    put_record(buf + off, 1001000, TT__KIND_MOUNT, 0, 0, 88, 0), off += 32;
    put_record(buf + off, 1001100, TT__KIND_BEGIN, 20, 1, 0, 0), off += 32;
    put_record(buf + off, 1001200, TT__KIND_UNMOUNT, 0, 2, 88, 0), off += 32;

    put_section(buf, &off, 3, 8, 3, TT__RING_LIVE, 301, "carrier-1");
    put_record(buf + off, 1004000, TT__KIND_MOUNT, 0, 0, 88, 0), off += 32;
    put_record(buf + off, 1005000, TT__KIND_END_CPU_TOTAL, 20, 1, 2500, TT__END_CPU_THROWN), off += 32;
    put_record(buf + off, 1005100, TT__KIND_UNMOUNT, 0, 2, 88, 0), off += 32;

    put_section(buf, &off, 6, 8, 6, TT__RING_LIVE, 302, "main");
    put_record(buf + off, 1002000, TT__KIND_BEGIN, 21, 0, 0, 0), off += 32;
    put_record(buf + off, 1003000, TT__KIND_END_MOUNTED, 21, 1, 800, 0), off += 32;
    put_record(buf + off, 1006000, TT__KIND_BEGIN, 22, 2, 0, 0), off += 32;
    put_record(buf + off, 1006500, TT__KIND_END_CPU_TOTAL, 22, 3, UINT64_MAX, 0), off += 32;
    put_record(buf + off, 1007000, TT__KIND_BEGIN, 20, 4, 0, 0), off += 32;
    put_record(buf + off, 1007400, TT__KIND_END_CPU_TOTAL, 20, 5, 300, 0), off += 32;

    h.names_offset = off;
    put_name(buf, &off, 20, "java.util.zip.Deflater::deflate");
    put_name(buf, &off, 21, "mounted");
    put_name(buf, &off, 22, "unreadable");
    h.names_size = off - h.names_offset;
    if (which == MEASURED) {
        h.summary_offset = off;
        tt__summary_header sh = {.entry_size = sizeof(tt__summary_entry), .count = 3};
        tt__summary_entry se[3] = {
            {.id = 20, .sums = {.calls = 2, .total = 4300, .max = 3900, .thrown = 1, .cpu_total_calls = 2,
                                .cpu_total_ns = 2800}},
            {.id = 21, .sums = {.calls = 1, .total = 1000, .max = 1000, .mounted_calls = 1, .mounted_ns = 800}},
            {.id = 22, .sums = {.calls = 1, .total = 500, .max = 500, .cpu_apart = 1}},
        };
        memcpy(buf + off, &sh, sizeof sh), off += sizeof sh;
        memcpy(buf + off, se, sizeof se), off += sizeof se;
        h.summary_size = off - h.summary_offset;
    }
    memcpy(buf, &h, sizeof h);
    return off;
}

/* Runs the CLI in dir on dir/input.trace (a fixed relative name, so error
 * messages are the same on every run), output to dir/output; returns its
 * exit status. */
static int run_cli(const char *args, const char *dir)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' dump %s input.trace > output 2>&1", dir, g_cli, args);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void compare(const char *out, const char *golden_name)
{
    char golden[512];
    snprintf(golden, sizeof golden, "%s/%s", g_dir, golden_name);
    unsigned char *got = NULL, *want = NULL;
    long ng = read_file(out, &got);
    if (getenv("TT_UPDATE_GOLDEN")) {
        FILE *f = fopen(golden, "w");
        CHECK(f != NULL);
        if (f) {
            fwrite(got, 1, (size_t)ng, f);
            fclose(f);
        }
    } else {
        long nw = read_file(golden, &want);
        CHECK(nw >= 0);
        int same = nw == ng && memcmp(got, want, (size_t)ng) == 0;
        if (!same)
            fprintf(stderr, "output differs from %s; see %s\n", golden, out);
        CHECK(same);
    }
    free(got);
    free(want);
}

/* which: 0 for the 1.0 trace, else 1 + a damage kind of the 1.1 one. */
static void golden_trace_case(int which, const char *args, const char *golden_name, size_t cut, int want_status)
{
    unsigned char buf[4096];
    size_t len = which >= MEASURED ? build_trace_measured(buf, which)
                 : which         ? build_trace_1_1(buf, which - 1)
                                 : build_trace(buf);
    if (cut)
        len = cut;
    char dir[256], trace[300], out[300];
    temp_path(dir, sizeof dir, "golden");
    mkdir(dir, 0700);
    snprintf(trace, sizeof trace, "%s/input.trace", dir);
    snprintf(out, sizeof out, "%s/output", dir);
    FILE *f = fopen(trace, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    fwrite(buf, 1, len, f);
    fclose(f);
    CHECK_OP(run_cli(args, dir), ==, want_status);
    compare(out, golden_name);
    const char *seeds = getenv("TT_FUZZ_SEEDS");
    if (seeds) {
        char seed[512];
        snprintf(seed, sizeof seed, "%s/%s.trace", seeds, golden_name);
        rename(trace, seed);
    }
    unlink(trace);
    if (!tt_test_failed_checks) {
        unlink(out);
        rmdir(dir);
    }
}

static void golden_case(const char *args, const char *golden_name, size_t cut, int want_status)
{
    golden_trace_case(0, args, golden_name, cut, want_status);
}

/* Status 1: thread 101's record that never committed lies between intact
 * ones, so the reader says it dropped it. */
TT_TEST(text) { golden_case("", "dump.txt", 0, 1); }
TT_TEST(csv) { golden_case("--format csv", "dump.csv", 0, 1); }
TT_TEST(json) { golden_case("--format json", "dump.json", 0, 1); }
TT_TEST(chrome) { golden_case("--format chrome", "dump.chrome.json", 0, 1); }
/* Cut in the second thread's records: the first thread in full, what is
 * left of the second, the message, status 1. */
TT_TEST(truncated) { golden_case("", "dump-truncated.txt", 128 + 128 + 7 * 32 + 128 + 2 * 32 + 5, 1); }
TT_TEST(not_a_trace) { golden_case("", "dump-not-a-trace.txt", 7, 2); }
/* 1.1: names in every format, the virtual thread's own track and column,
 * the summary; damaged tables are reported and the rest printed. */
TT_TEST(v11_text) { golden_trace_case(1 + INTACT, "", "dump11.txt", 0, 0); }
TT_TEST(v11_csv) { golden_trace_case(1 + INTACT, "--format csv", "dump11.csv", 0, 0); }
TT_TEST(v11_json) { golden_trace_case(1 + INTACT, "--format json", "dump11.json", 0, 0); }
TT_TEST(v11_chrome) { golden_trace_case(1 + INTACT, "--format chrome", "dump11.chrome.json", 0, 0); }
TT_TEST(v11_summary) { golden_trace_case(1 + INTACT, "--summary", "summary11.txt", 0, 0); }
TT_TEST(v11_summary_json) { golden_trace_case(1 + INTACT, "--summary --format json", "summary11.json", 0, 0); }
TT_TEST(v11_bad_name) { golden_trace_case(1 + BAD_NAME, "--format csv", "dump11-bad-name.csv", 0, 1); }
/* 1.2: whole thread names where the section agrees, virtual threads' names
 * on their tracks and in every format; hostile ones escaped. */
TT_TEST(v12_text) { golden_trace_case(1 + V12, "", "dump12.txt", 0, 0); }
TT_TEST(v12_csv) { golden_trace_case(1 + V12, "--format csv", "dump12.csv", 0, 0); }
TT_TEST(v12_json) { golden_trace_case(1 + V12, "--format json", "dump12.json", 0, 0); }
TT_TEST(v12_chrome) { golden_trace_case(1 + V12, "--format chrome", "dump12.chrome.json", 0, 0); }
TT_TEST(v12_hostile_text) { golden_trace_case(1 + V12_HOSTILE, "", "hostile12.txt", 0, 0); }
TT_TEST(v12_hostile_json) { golden_trace_case(1 + V12_HOSTILE, "--format json", "hostile12.json", 0, 0); }
TT_TEST(v12_hostile_chrome) { golden_trace_case(1 + V12_HOSTILE, "--format chrome", "hostile12.chrome.json", 0, 0); }
TT_TEST(v11_bad_summary) { golden_trace_case(1 + BAD_SUMMARY, "--summary", "summary11-bad.txt", 0, 1); }
/* Ends with a caller-measured figure: named by what they count in every
 * format, paired across carriers, CPU totals without a split in --summary,
 * from the accumulators and from the rings alike. */
TT_TEST(measured_text) { golden_trace_case(MEASURED, "", "measured.txt", 0, 0); }
TT_TEST(measured_csv) { golden_trace_case(MEASURED, "--format csv", "measured.csv", 0, 0); }
TT_TEST(measured_json) { golden_trace_case(MEASURED, "--format json", "measured.json", 0, 0); }
TT_TEST(measured_chrome) { golden_trace_case(MEASURED, "--format chrome", "measured.chrome.json", 0, 0); }
TT_TEST(measured_summary) { golden_trace_case(MEASURED, "--summary", "measured-summary.txt", 0, 0); }
TT_TEST(measured_summary_json) { golden_trace_case(MEASURED, "--summary --format json", "measured-summary.json", 0, 0); }
TT_TEST(measured_summary_rings) { golden_trace_case(MEASURED_RINGS, "--summary", "measured-summary-rings.txt", 0, 0); }
/* Hostile names and texts: every text format escapes control characters
 * (the goldens show how), and no output holds one raw. */
static void no_raw_controls(int kind, const char *args)
{
    unsigned char buf[4096];
    size_t len = build_trace_1_1(buf, kind);
    char dir[256], path[300];
    temp_path(dir, sizeof dir, "hostile");
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/input.trace", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    fwrite(buf, 1, len, f);
    fclose(f);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' dump %s input.trace > output 2>/dev/null", dir, g_cli, args);
    CHECK_OP(system(cmd), ==, 0);
    snprintf(path, sizeof path, "%s/output", dir);
    unsigned char *out = NULL;
    long n = read_file(path, &out);
    CHECK(n > 0);
    for (long i = 0; i < n; i++) {
        int bad = (out[i] < 0x20 && out[i] != '\n') || out[i] == 0x7f || (out[i] == 0xc2 && i + 1 < n && out[i + 1] >= 0x80 && out[i + 1] <= 0x9f);
        if (bad)
            fprintf(stderr, "%s: raw control byte 0x%02x at %ld\n", args, out[i], i);
        CHECK(!bad);
        if (bad)
            break;
    }
    free(out);
    unlink(path);
    snprintf(path, sizeof path, "%s/input.trace", dir);
    unlink(path);
    rmdir(dir);
}

TT_TEST(hostile_text) { golden_trace_case(1 + HOSTILE, "", "hostile.txt", 0, 0); }
TT_TEST(hostile_csv) { golden_trace_case(1 + HOSTILE, "--format csv", "hostile.csv", 0, 0); }
TT_TEST(hostile_summary) { golden_trace_case(1 + HOSTILE, "--summary", "hostile-summary.txt", 0, 0); }
TT_TEST(hostile_json) { golden_trace_case(1 + HOSTILE, "--format json", "hostile.json", 0, 0); }
TT_TEST(hostile_never_raw)
{
    static const char *const args[] = {"", "--format csv", "--format json", "--format chrome", "--summary",
                                       "--summary --format json"};
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
        no_raw_controls(HOSTILE, args[i]);
        no_raw_controls(V12_HOSTILE, args[i]);
    }
}

/* ---- the input is never destroyed, never mapped, never waited on ---- */

static int run_sh(const char *dir, const char *what)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s", dir, what);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A directory with input.trace (the 1.1 trace) in it; returns its size. */
static size_t io_setup(char *dir, size_t n, unsigned char *buf)
{
    size_t len = build_trace_1_1(buf, INTACT);
    temp_path(dir, n, "io");
    mkdir(dir, 0700);
    char path[300];
    snprintf(path, sizeof path, "%s/input.trace", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fwrite(buf, 1, len, f);
        fclose(f);
    }
    return len;
}

static int input_intact(const char *dir, const unsigned char *buf, size_t len)
{
    char path[300];
    snprintf(path, sizeof path, "%s/input.trace", dir);
    unsigned char *now = NULL;
    long n = read_file(path, &now);
    int same = n == (long)len && memcmp(now, buf, len) == 0;
    free(now);
    return same;
}

static int output_says(const char *dir, const char *text)
{
    char path[300];
    snprintf(path, sizeof path, "%s/output", dir);
    unsigned char *out = NULL;
    long n = read_file(path, &out);
    int found = n > 0 && memmem(out, (size_t)n, text, strlen(text)) != NULL;
    if (!found)
        fprintf(stderr, "expected '%s' in %s\n", text, path);
    free(out);
    return found;
}

static void io_teardown(const char *dir)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!tt_test_failed_checks)
        CHECK_OP(system(cmd), ==, 0);
}

/* -o naming the input, by its name, a symlink or a hard link: refused
 * before the output is opened, the input byte for byte as it was. */
TT_TEST(output_over_input_refused)
{
    unsigned char buf[4096];
    char dir[256], cmd[1024];
    size_t len = io_setup(dir, sizeof dir, buf);
    static const char *const outs[] = {"input.trace", "sym.trace", "hard.trace", "./input.trace"};
    CHECK_OP(run_sh(dir, "ln -s input.trace sym.trace && ln input.trace hard.trace"), ==, 0);
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
        snprintf(cmd, sizeof cmd, "'%s' dump --format chrome -o %s input.trace > output 2>&1", g_cli, outs[i]);
        CHECK_OP(run_sh(dir, cmd), ==, 2);
        CHECK(output_says(dir, "it is the input"));
        CHECK(input_intact(dir, buf, len));
    }
    /* Another output is written, and the input still untouched. */
    snprintf(cmd, sizeof cmd, "'%s' dump -o other.txt input.trace > output 2>&1", g_cli);
    CHECK_OP(run_sh(dir, cmd), ==, 0);
    CHECK(input_intact(dir, buf, len));
    io_teardown(dir);
}

TT_TEST(directory_input_says_so)
{
    unsigned char buf[4096];
    char dir[256], cmd[1024];
    io_setup(dir, sizeof dir, buf);
    snprintf(cmd, sizeof cmd, "mkdir d && '%s' dump d > output 2>&1", g_cli);
    CHECK_OP(run_sh(dir, cmd), ==, 2);
    CHECK(output_says(dir, "d is a directory"));
    io_teardown(dir);
}

/* A pipe is read as a stream (here /dev/stdin, whose writer is there from
 * the start); a named FIFO that no process writes and /dev/zero are
 * refused at once (timeout turns a hang into status 124). */
TT_TEST(fifo_input_is_a_stream)
{
    unsigned char buf[4096];
    char dir[256], cmd[1024];
    io_setup(dir, sizeof dir, buf);
    snprintf(cmd, sizeof cmd, "cat input.trace | timeout 20 '%s' dump --format csv /dev/stdin > output 2>&1", g_cli);
    CHECK_OP(run_sh(dir, cmd), ==, 0);
    CHECK(output_says(dir, "202,main,,6,8000,500,instant,10"));
    snprintf(cmd, sizeof cmd, "mkfifo p && timeout 20 '%s' dump p > output 2>&1", g_cli);
    CHECK_OP(run_sh(dir, cmd), ==, 2);
    CHECK(output_says(dir, "p is a pipe that no process has open for writing"));
    snprintf(cmd, sizeof cmd, "timeout 20 '%s' dump /dev/zero > output 2>&1", g_cli);
    CHECK_OP(run_sh(dir, cmd), ==, 2);
    CHECK(output_says(dir, "neither a regular file nor a pipe"));
    io_teardown(dir);
}

/* Two pairs of one id, each lasting 0.6 * INT64_MAX ns (a damaged or
 * hostile file can hold any times): --summary's total saturates at
 * INT64_MAX instead of overflowing (UBSan in the sanitizer build; a
 * negative total before). */
TT_TEST(summary_total_saturates)
{
    unsigned char buf[1024];
    memset(buf, 0, sizeof buf);
    tt__trace_header h = {.version_major = 1, .version_minor = 0, .header_size = 128, .section_size = 128,
                          .record_size = 32, .flags = TT__TRACE_END_ANCHOR,
                          .source = TT__TRACE_SOURCE_MONOTONIC_RAW, .sections = 1, .pid = 1,
                          .anchors = {{1000, 1000, 0}, {2000, 2000, 0}}, .ring_records = 4};
    memcpy(h.magic, TT__TRACE_MAGIC, TT__TRACE_MAGIC_LEN);
    memcpy(buf, &h, TT__TRACE_HEADER_SIZE_1_0);
    size_t off = TT__TRACE_HEADER_SIZE_1_0;
    const uint64_t d = UINT64_C(0x6000000000000000);
    put_section(buf, &off, 4, 4, 4, TT__RING_EXITED, 7, "t");
    put_record(buf + off, 1000, TT__KIND_BEGIN, 5, 0, 0, 0), off += 32;
    put_record(buf + off, 1000 + d, TT__KIND_END, 5, 1, 0, 0), off += 32;
    put_record(buf + off, 1000 + d, TT__KIND_BEGIN, 5, 2, 0, 0), off += 32;
    put_record(buf + off, 1000 + 2 * d, TT__KIND_END, 5, 3, 0, 0), off += 32;
    char dir[256], path[300];
    temp_path(dir, sizeof dir, "extreme");
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/input.trace", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    fwrite(buf, 1, off, f);
    fclose(f);
    CHECK_OP(run_cli("--summary --format json", dir), ==, 0);
    CHECK(output_says(dir, "\"calls\":2,\"total_ns\":9223372036854775807,"));
    io_teardown(dir);
}

/* The 1.0 trace has no summary: the pairs in the rings, said so. */
TT_TEST(v10_summary) { golden_case("--summary", "summary10.txt", 0, 1); }

/* Seeded random damage to the 1.1 trace (flipped bytes, cuts) through every
 * output: the CLI always ends with status 0, 1 or 2, never a crash or a
 * sanitizer report (the ASan build runs its own CLI). */
TT_TEST(random_damage_never_crashes)
{
    static const char *const formats[] = {"--format chrome", "--format csv", "--format json", "--summary",
                                          "--summary --format json"};
    char dir[256], trace[300], out[300];
    temp_path(dir, sizeof dir, "golden_fuzz");
    mkdir(dir, 0700);
    snprintf(trace, sizeof trace, "%s/input.trace", dir);
    snprintf(out, sizeof out, "%s/output", dir);
    unsigned char buf[4096];
    uint64_t x = 0x2545F4914F6CDD1Du;
    int bad = 0;
    for (int round = 0; round < 60 && !bad; round++) {
        size_t len = build_trace_1_1(buf, INTACT);
        for (int flips = 0; flips < 1 + round % 6; flips++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[x % len] ^= (unsigned char)(1u << (x >> 61));
        }
        if (round % 4 == 3)
            len = (size_t)(x >> 32) % len;
        FILE *f = fopen(trace, "wb");
        if (!f)
            break;
        fwrite(buf, 1, len, f);
        fclose(f);
        for (size_t k = 0; k < sizeof formats / sizeof *formats; k++) {
            int st = run_cli(formats[k], dir);
            unsigned char *text = NULL;
            long n = read_file(out, &text);
            int report = n > 0 && text && (memmem(text, (size_t)n, "Sanitizer", 9) || memmem(text, (size_t)n, "runtime error", 13));
            if (st < 0 || st > 2 || report) {
                fprintf(stderr, "round %d, %s: status %d%s\n", round, formats[k], st, report ? ", sanitizer report" : "");
                bad = 1;
            }
            free(text);
        }
    }
    CHECK(!bad);
    unlink(trace);
    unlink(out);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_dump_golden THREADTIME GOLDEN_DIR\n");
        return 2;
    }
    g_cli = argv[1];
    g_dir = argv[2];
    return tt_test_main(argc - 2, argv + 2);
}
