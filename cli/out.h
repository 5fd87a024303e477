/* The command's output layer, shared by every report it prints (dump's
 * formats and --summary, run's report): the one list of formats and its
 * parser, the sink everything is written through, the escaping of bytes
 * that came from a file or a process (each format its own rule, below),
 * and the creation of an output file (made as the core makes its files). */
#ifndef TT_CLI_OUT_H
#define TT_CLI_OUT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* FMT_CSV_SERIES: a run's time series as CSV (recordings of threadtime
 * run only). */
enum out_format { FMT_TEXT, FMT_CSV, FMT_JSON, FMT_CHROME, FMT_CSV_SERIES };

/* For messages: the names out_parse_format takes. */
#define OUT_FORMAT_NAMES "text, csv, json, chrome, csv-series"

/* "text", "csv", "json", "chrome" or "csv-series": 0 with *f set, or -EINVAL. */
int out_parse_format(const char *name, enum out_format *f);

/* ---- the sink ---- */

/* Buffered output to f, or to nowhere when f is NULL (the fuzz targets
 * run every format without writing a file). A write error stays in
 * ferror(f) for whoever closes it. */
typedef struct sink {
    FILE *f;
    size_t used;
    char buf[1 << 16];
} sink;

/* A new sink writing to f (free it), or NULL when memory runs out. */
sink *sink_new(FILE *f);
void sink_flush(sink *s);
/* put's path when the buffer is full. */
void sink_put_slow(sink *s, const char *p, size_t n);

/* Inline: the emitters call these for every few bytes of output. */
static inline void put(sink *s, const char *p, size_t n)
{
    if (s->used + n > sizeof s->buf) {
        sink_put_slow(s, p, n);
        return;
    }
    memcpy(s->buf + s->used, p, n);
    s->used += n;
}

static inline void put_cstr(sink *s, const char *p) { put(s, p, strlen(p)); }
void put_u64(sink *s, uint64_t v);
void put_i64(sink *s, int64_t v);
/* ns as microseconds with exactly three decimals: 1234567 -> 1234.567. */
void put_us(sink *s, int64_t ns);
/* printf into the sink, for the program's own words and numbers only:
 * never a string from a file or a process (those go through the escapers
 * below). At most 1 KiB per call. */
void put_fmt(sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- untrusted bytes ----
 * Names and texts come from files and processes: any bytes, invalid UTF-8
 * and control characters included (the kernel cuts a thread name at 15
 * bytes, in the middle of a character if it falls there). Each format's
 * rule keeps what is valid and readable and makes everything else inert. */

/* A JSON string of bytes that may not be UTF-8 (a text): bytes above 0x7e
 * become \u00XX (one character per byte, so the bytes can be recovered),
 * so any text yields valid JSON. */
void put_json_str(sink *s, const char *p, size_t n);
/* A JSON string of a name: valid UTF-8 kept as UTF-8, control characters
 * (C0, DEL and C1 U+0080..U+009F) escaped as \u00XX, and each ill-formed
 * piece (a stray byte, a character cut short) as one \ufffd, the rule
 * Unicode recommends and Python's errors="replace" follows. Always valid
 * UTF-8 and valid JSON. */
void put_json_utf8(sink *s, const char *p, size_t n);
/* Bytes for a terminal (text output): valid UTF-8 kept but for control
 * characters (C0, DEL, C1), which become \xNN per byte, as do the
 * backslash and every byte that is not part of valid UTF-8 (a raw 0x9b is
 * CSI to an 8-bit terminal). Nothing that moves the cursor or starts an
 * escape sequence, no newline. Returns the columns written, counting a
 * character as one. */
size_t put_escaped(sink *s, const char *p, size_t n);
/* put_escaped's output padded with spaces to width columns. */
void put_escaped_cell(sink *s, const char *p, size_t n, size_t width);
/* Printable ASCII kept, every other byte and '"' and '\' as \xNN (texts
 * and thread names in the trace's text format). */
void put_plain_str(sink *s, const char *p, size_t n);
/* A CSV field (RFC 4180): escaped as put_escaped (so never a raw newline
 * or carriage return, always valid UTF-8), then quoted, with quotes
 * doubled, when it holds a comma or a quote. */
void put_csv_str(sink *s, const char *p, size_t n);

/* ---- output files ---- */

/* An output (-o, --report) being written: a new file beside the
 * destination, renamed over it by out_file_close, or a stream (a pipe, a
 * terminal, /dev/stdout) written directly. */
typedef struct out_file {
    FILE *f;
    char *tmp, *real; /* the new file and its destination; NULL for a stream */
} out_file;

/* Opens path for a report as the core creates its files (docs/security.md):
 * a regular or absent destination gets a new 0600 file beside it
 * (O_EXCL|O_NOFOLLOW, an unpredictable name); another user's symlink is
 * neither followed nor replaced; a FIFO, terminal or /dev/stdout is opened
 * without waiting and appended to: a FIFO that nobody reads or that another
 * user owns is refused, as are directories and block devices. Returns 0,
 * or -errno with *why a sentence for the user (nothing created). */
int out_file_open(const char *path, out_file *o, const char **why);
/* Finishes o: flushes, and on success (ok, no write error) renames the new
 * file into place; otherwise removes it, the destination as it was.
 * Returns 0 or -errno (-EIO for a write error). */
int out_file_close(out_file *o, int ok);

#endif /* TT_CLI_OUT_H */
