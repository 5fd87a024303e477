/* threadtime dump: a trace file (a dump, or a crash-safe file after the
 * process died) as text, CSV, JSON or Chrome trace JSON, or its --summary.
 * This file is the command: its arguments, reading the input into memory
 * (never mapping it: a file whose size another process controls can be
 * cut under a mapping, which kills the reader with SIGBUS), and refusing
 * an output that would overwrite the input. The formats are in dump_*.c.
 *
 * Times are CLOCK_MONOTONIC_RAW ns rebased to the trace's start anchor. */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump.h"
#include "run.h"
#include "threadtime/threadtime.h"
#include "util.h"

int tt__cli_dump(int argc, char **argv);

static void usage(FILE *f)
{
    fprintf(f, "usage: threadtime dump [--format text|csv|json|chrome|csv-series] [--summary] [--group] [-o OUT] FILE\n"
               "Prints a trace file written by tt_log_dump() or left by a crash-safe log,\n"
               "or a recording kept by threadtime run -o (--group folds numbered thread names).\n"
               "  --format  text (default; per-thread deltas in ns), csv, json, or chrome\n"
               "            (Chrome trace JSON for Perfetto / chrome://tracing; ts in us);\n"
               "            csv-series: a run recording's time series as CSV\n"
               "  --summary per event name (or id): calls, total, mean, p50, p99 and max wall\n"
               "            time, and CPU where recorded, sorted by total; then the hits of\n"
               "            instant events such as line probes (text or json)\n"
               "  -o OUT    write there instead of standard output (never over FILE itself)\n"
               "FILE is a regular file or a pipe (read to its end). Names and texts from the\n"
               "trace are escaped: control characters never reach the terminal.\n"
               "Exit status: 0, 1 if the file is damaged (what is intact is still printed),\n"
               "2 for a usage error or an unreadable file.\n");
}

/* A pipe's first bytes, read without waiting: 0 (nothing yet, a writer
 * is there), -1 (no process has it open for writing, so it would read as
 * empty or block forever), or how many bytes landed in first[]. */
static ssize_t pipe_probe(int fd, unsigned char *first, size_t n)
{
    ssize_t got;
    do
        got = read(fd, first, n);
    while (got < 0 && errno == EINTR);
    if (got == 0)
        return -1;
    return got < 0 ? 0 : got;
}

/* The most read at a time: an input is never read far past what it said
 * it holds. */
#define LOAD_STEP ((size_t)1 << 20)

static uint64_t add_sat(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

/* The end of table [off, off + size) of a trace header, when the header is
 * long enough to hold that field (1.0 headers stop before the name table). */
static uint64_t table_end(const tt__trace_header *h, size_t field, uint64_t off, uint64_t size)
{
    return field + 2 * sizeof(uint64_t) <= h->header_size ? add_sat(off, size) : 0;
}

/* How many bytes the input may hold by what its first `have` bytes say:
 * the most a trace's header allows (every section with the largest ring,
 * every table), a run recording's exact length (its files' lengths read
 * one by one: then more than `have` until the last is known), or `have`
 * itself when they start neither: the reader says what the input is not
 * from those bytes, without reading the rest. */
static uint64_t stated_end(const unsigned char *b, size_t have)
{
    if (have < TT__TRACE_MAGIC_LEN)
        return TT__TRACE_MAGIC_LEN;
    if (memcmp(b, TT__TRACE_MAGIC, TT__TRACE_MAGIC_LEN) == 0) {
        if (have < TT__TRACE_HEADER_SIZE)
            return TT__TRACE_HEADER_SIZE; /* a 1.0 file may end sooner: the reader judges */
        tt__trace_header h;
        memcpy(&h, b, sizeof h);
        uint64_t section = TT__TRACE_SECTION_SIZE + (uint64_t)TT_LOG_RING_MAX * TT__TRACE_RECORD_SIZE;
        uint64_t end = add_sat(h.header_size > TT__TRACE_HEADER_SIZE ? h.header_size : TT__TRACE_HEADER_SIZE,
                               h.sections * section); /* < 2^61: no overflow */
        uint64_t tables[] = {
            table_end(&h, offsetof(tt__trace_header, strings_offset), h.strings_offset, h.strings_size),
            table_end(&h, offsetof(tt__trace_header, names_offset), h.names_offset, h.names_size),
            table_end(&h, offsetof(tt__trace_header, summary_offset), h.summary_offset, h.summary_size),
            table_end(&h, offsetof(tt__trace_header, thread_names_offset), h.thread_names_offset,
                      h.thread_names_size)};
        for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
            end = tables[i] > end ? tables[i] : end;
        return end;
    }
    if (!tt__run_set_is(b, have))
        return have;
    tt__runset_header h;
    if (have < offsetof(tt__runset_header, files))
        return sizeof h;
    memcpy(&h.version, b + offsetof(tt__runset_header, version), sizeof h.version);
    size_t hsize = tt__runset_header_size(h.version);
    if (!hsize)
        return have; /* an unknown version: the parser says so */
    if (have < hsize)
        return hsize;
    memcpy(&h, b, hsize);
    uint64_t off = hsize + (uint64_t)h.cmd_len;
    for (uint32_t i = 0; i < h.files; i++) {
        uint64_t n;
        if (have < off + sizeof n)
            return off + sizeof n;
        memcpy(&n, b + off, sizeof n);
        off = add_sat(off + sizeof n, n);
        if (off == UINT64_MAX)
            break;
    }
    return off;
}

/* Reads the input at path into *buf: its first bytes, then in steps up to
 * what they say it holds (stated_end), so that neither a sparse file of
 * many GB nor an endless pipe is read past that. Returns 0, or 2 with a
 * message on stderr. *st: the input's identity, for the output check. */
static int load(const char *path, unsigned char **buf, size_t *len, struct stat *st)
{
    /* O_NONBLOCK: opening a FIFO that no one writes must not wait. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 || fstat(fd, st) != 0) {
        fprintf(stderr, "threadtime dump: %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return 2;
    }
    size_t cap = 4096, got = 0;
    unsigned char *b = malloc(cap);
    ssize_t nfirst = 0;
    const char *refuse = S_ISDIR(st->st_mode) ? "is a directory, not a trace file"
                         : !S_ISREG(st->st_mode) && !S_ISFIFO(st->st_mode)
                             ? "is neither a regular file nor a pipe; refusing to read it as a trace"
                             : NULL;
    if (!refuse && b && S_ISFIFO(st->st_mode) && (nfirst = pipe_probe(fd, b, cap)) < 0)
        refuse = "is a pipe that no process has open for writing (start the writer first, or pipe the "
                 "trace into threadtime dump /dev/stdin)";
    got = nfirst > 0 ? (size_t)nfirst : 0;
    int rc = b ? 0 : -ENOMEM;
    if (!refuse && rc == 0 && fcntl(fd, F_SETFL, 0) != 0) /* blocking again: a pipe's writer may be slow */
        rc = -errno;
    while (!refuse && rc == 0) {
        uint64_t want = stated_end(b, got);
        if (want <= got)
            break;
        size_t step = want - got < LOAD_STEP ? (size_t)(want - got) : LOAD_STEP;
        unsigned char *nb = tt__grow(b, &cap, got + step, 1, 0);
        if (!nb) {
            rc = -ENOMEM;
            break;
        }
        b = nb;
        ssize_t n = tt__read_retry(fd, b + got, step);
        if (n <= 0) {
            rc = (int)n; /* 0: the end, short of what was stated (the reader says so) */
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    if (refuse)
        fprintf(stderr, "threadtime dump: %s %s\n", path, refuse);
    else if (rc != 0)
        fprintf(stderr, "threadtime dump: reading %s: %s\n", path, strerror(-rc));
    if (refuse || rc != 0) {
        free(b);
        return 2;
    }
    *buf = b;
    *len = got;
    return 0;
}

/* 1 (with a message) if out_path names the input file, by any name: the
 * same device and inode, through a symlink or a hard link too. Checked
 * before the output is opened, since opening it truncates it. */
static int is_input(const char *out_path, const char *path, const struct stat *in)
{
    struct stat st;
    if (stat(out_path, &st) != 0 || st.st_dev != in->st_dev || st.st_ino != in->st_ino)
        return 0;
    fprintf(stderr, "threadtime dump: refusing to write to %s: it is the input %s (the trace would be destroyed)\n",
            out_path, path);
    return 1;
}

/* Opens the output: out_path (never the input; made as out.h says), or
 * standard output. 0, or 2 with a message. */
static int open_output(const char *out_path, const char *path, const struct stat *in, out_file *o)
{
    *o = (out_file){.f = stdout};
    if (!out_path)
        return 0;
    const char *why;
    if (is_input(out_path, path, in))
        return 2;
    if (out_file_open(out_path, o, &why) != 0) {
        fprintf(stderr, "threadtime dump: cannot write %s: %s\n", out_path, why);
        return 2;
    }
    return 0;
}

/* Writes what emit makes of arg to o and closes it. 0, or 2 with a
 * message. */
static int write_output(out_file *o, const char *out_path, int (*emit)(sink *, const void *, int, int), const void *arg,
                        enum out_format fmt, int flag)
{
    sink *s = sink_new(o->f);
    int rc = s ? emit(s, arg, (int)fmt, flag) : -ENOMEM;
    if (s)
        sink_flush(s);
    free(s);
    if (rc)
        fprintf(stderr, "threadtime dump: %s\n", strerror(-rc));
    int wrc = 0;
    if (out_path)
        wrc = out_file_close(o, rc == 0);
    else if (fflush(stdout) != 0 || ferror(stdout))
        wrc = -EIO;
    if (wrc)
        fprintf(stderr, "threadtime dump: writing %s: %s\n", out_path ? out_path : "standard output", strerror(-wrc));
    return rc || wrc ? 2 : 0;
}

static int emit_run(sink *s, const void *set, int fmt, int group)
{
    return tt__run_report(set, (enum out_format)fmt, group, s);
}

static int emit_trace(sink *s, const void *t, int fmt, int summary)
{
    return dump_write(s, t, (enum out_format)fmt, summary);
}

/* A recording kept by threadtime run -o: its report (cli/run_report.c) in
 * the format asked for. Takes buf. */
static int dump_run(unsigned char *buf, size_t len, const char *path, const struct stat *in, enum out_format fmt,
                    int want_summary, int group, const char *out_path)
{
    tt__run_set set = {0};
    const char *why = NULL;
    int rc = want_summary ? -1 : tt__run_set_parse(buf, len, &set, &why);
    free(buf);
    if (want_summary)
        fprintf(stderr, "threadtime dump: --summary is for traces; %s is a recording of threadtime run\n", path);
    else if (rc)
        fprintf(stderr, "threadtime dump: %s: damaged run recording: %s\n", path, why);
    out_file o;
    if (rc != 0 || open_output(out_path, path, in, &o) != 0) {
        tt__run_set_free(&set);
        return 2;
    }
    int status = write_output(&o, out_path, emit_run, &set, fmt, group);
    tt__run_set_free(&set);
    return status;
}

int tt__cli_dump(int argc, char **argv)
{
    enum out_format fmt = FMT_TEXT;
    const char *path = NULL, *out_path = NULL;
    int want_summary = 0, group = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--summary") == 0) {
            want_summary = 1;
        } else if (strcmp(a, "--group") == 0) {
            group = 1;
        } else if ((strcmp(a, "--format") == 0 || strcmp(a, "-f") == 0) && i + 1 < argc) {
            if (out_parse_format(argv[++i], &fmt) != 0) {
                fprintf(stderr, "threadtime dump: unknown format '%s'\n", argv[i]);
                return 2;
            }
        } else if (strncmp(a, "--format=", 9) == 0) {
            if (out_parse_format(a + 9, &fmt) != 0) {
                fprintf(stderr, "threadtime dump: unknown format '%s'\n", a + 9);
                return 2;
            }
        } else if (strcmp(a, "-o") == 0 && i + 1 < argc) {
            out_path = argv[++i];
        } else if (a[0] == '-' || path) {
            usage(stderr);
            return 2;
        } else {
            path = a;
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    if (want_summary && fmt != FMT_TEXT && fmt != FMT_JSON) {
        fprintf(stderr, "threadtime dump: --summary prints text or json\n");
        return 2;
    }
    unsigned char *buf = NULL;
    size_t len = 0;
    struct stat in;
    if (load(path, &buf, &len, &in) != 0)
        return 2;
    if (tt__run_set_is(buf, len))
        return dump_run(buf, len, path, &in, fmt, want_summary, group, out_path);
    if (group || fmt == FMT_CSV_SERIES) {
        fprintf(stderr, "threadtime dump: %s is for recordings of threadtime run; %s is a trace\n",
                group ? "--group" : "--format csv-series", path);
        free(buf);
        return 2;
    }
    tt__trace t;
    int rc = tt__trace_open(&t, buf, len);
    if (rc != 0) {
        fprintf(stderr, "threadtime dump: %s: %s\n", path, rc == -EINVAL ? t.error : tt_strerror(rc));
        tt__trace_close(&t);
        free(buf);
        return 2;
    }
    out_file o;
    int status = open_output(out_path, path, &in, &o);
    if (status == 0)
        status = write_output(&o, out_path, emit_trace, &t, fmt, want_summary);
    if (t.damaged && status == 0) {
        fprintf(stderr, "threadtime dump: %s is damaged; the intact part was printed: %s\n", path, t.error);
        status = 1;
    }
    tt__trace_close(&t);
    free(buf);
    return status;
}
