/* The command's output layer (out.h): a buffer in front of a FILE, numbers
 * and strings formatted by hand (printf would dominate the Chrome output
 * of a 10-million-event trace, and fixed decimals must never turn into
 * scientific notation), and the escaping of untrusted bytes. Output files
 * are in out_file.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

static const char hex[] = "0123456789abcdef";

int out_parse_format(const char *name, enum out_format *f)
{
    static const char *const names[] = {[FMT_TEXT] = "text", [FMT_CSV] = "csv", [FMT_JSON] = "json",
                                        [FMT_CHROME] = "chrome", [FMT_CSV_SERIES] = "csv-series"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0) {
            *f = (enum out_format)i;
            return 0;
        }
    return -EINVAL;
}

sink *sink_new(FILE *f)
{
    sink *s = malloc(sizeof *s);
    if (s) {
        s->f = f;
        s->used = 0;
    }
    return s;
}

void sink_flush(sink *s)
{
    if (s->f)
        fwrite(s->buf, 1, s->used, s->f);
    s->used = 0;
}

void sink_put_slow(sink *s, const char *p, size_t n)
{
    sink_flush(s);
    if (n > sizeof s->buf) {
        if (s->f)
            fwrite(p, 1, n, s->f);
        return;
    }
    memcpy(s->buf, p, n);
    s->used = n;
}

void put_u64(sink *s, uint64_t v)
{
    char tmp[24];
    int i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(s, tmp + i, sizeof tmp - (size_t)i);
}

void put_i64(sink *s, int64_t v)
{
    if (v < 0) {
        put(s, "-", 1);
        put_u64(s, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(s, (uint64_t)v);
    }
}

void put_us(sink *s, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    if (ns < 0)
        put(s, "-", 1);
    put_u64(s, a / 1000);
    char frac[4] = {'.', (char)('0' + a / 100 % 10), (char)('0' + a / 10 % 10), (char)('0' + a % 10)};
    put(s, frac, 4);
}

void put_fmt(sink *s, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(s, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* The well-formed UTF-8 sequence at p (n > 0 bytes left): its length
 * (1..4) with *cp its code point, or 0 when p starts none, with *bad the
 * bytes of the ill-formed piece (its maximal subpart: a lead byte and the
 * continuation bytes that still fitted it, or one byte). The ranges are
 * Unicode's table of well-formed sequences: no overlong forms, no
 * surrogates, nothing above U+10FFFF. */
static size_t utf8_at(const unsigned char *p, size_t n, uint32_t *cp, size_t *bad)
{
    unsigned c = p[0], lo = 0x80, hi = 0xbf;
    size_t more;
    uint32_t v;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        more = 1, v = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        more = 2, v = c & 0x0f;
        lo = c == 0xe0 ? 0xa0 : 0x80;
        hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
        more = 3, v = c & 0x07;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf;
    } else {
        *bad = 1;
        return 0;
    }
    for (size_t i = 1; i <= more; i++) {
        if (i >= n || p[i] < lo || p[i] > hi) {
            *bad = i;
            return 0;
        }
        v = v << 6 | (p[i] & 0x3f);
        lo = 0x80, hi = 0xbf;
    }
    *cp = v;
    return more + 1;
}

static void put_hex_escape(sink *s, unsigned char c)
{
    char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
    put(s, e, 4);
}

static void put_u_escape(sink *s, unsigned c)
{
    char e[6] = {'\\', 'u', '0', '0', hex[c >> 4 & 15], hex[c & 15]};
    put(s, e, 6);
}

void put_json_str(sink *s, const char *text, size_t n)
{
    const unsigned char *p = (const unsigned char *)text;
    put(s, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned c = p[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            put(s, e, 2);
        } else if (c < 0x20 || c >= 0x7f) {
            put_u_escape(s, c);
        } else {
            put(s, (const char *)&p[i], 1);
        }
    }
    put(s, "\"", 1);
}

void put_json_utf8(sink *s, const char *text, size_t n)
{
    const unsigned char *p = (const unsigned char *)text;
    put(s, "\"", 1);
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        size_t bad = 0, len = utf8_at(p + i, n - i, &cp, &bad);
        if (!len) {
            put_cstr(s, "\\ufffd");
            i += bad;
            continue;
        }
        if (cp == '"' || cp == '\\') {
            char e[2] = {'\\', (char)cp};
            put(s, e, 2);
        } else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
            put_u_escape(s, cp);
        } else {
            put(s, text + i, len);
        }
        i += len;
    }
    put(s, "\"", 1);
}

/* put_escaped, with quotes doubled when quoting is on. Returns the columns
 * written (a character one, an escape four). */
static size_t put_escaped_q(sink *s, const char *text, size_t n, int double_quotes)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t run = 0, cols = 0; /* run: bytes kept as they are, written in one go */
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        size_t bad = 0, len = utf8_at(p + i, n - i, &cp, &bad);
        if (len && cp >= 0x20 && !(cp >= 0x7f && cp <= 0x9f) && cp != '\\' && !(double_quotes && cp == '"')) {
            run += len;
            i += len;
            cols++;
            continue;
        }
        put(s, text + i - run, run);
        run = 0;
        if (cp == '"' && len) {
            put(s, "\"\"", 2);
            cols += 2;
        } else {
            /* A control character (each byte of it), or an ill-formed byte:
             * the next byte is looked at afresh. */
            size_t k = len ? len : 1;
            for (size_t j = 0; j < k; j++)
                put_hex_escape(s, p[i + j]);
            cols += 4 * k;
            i += k - len;
        }
        i += len;
    }
    put(s, text + n - run, run);
    return cols;
}

size_t put_escaped(sink *s, const char *p, size_t n) { return put_escaped_q(s, p, n, 0); }

void put_escaped_cell(sink *s, const char *p, size_t n, size_t width)
{
    for (size_t cols = put_escaped(s, p, n); cols < width; cols++)
        put(s, " ", 1);
}

void put_csv_str(sink *s, const char *p, size_t n)
{
    if (!memchr(p, ',', n) && !memchr(p, '"', n)) {
        put_escaped_q(s, p, n, 0);
        return;
    }
    put(s, "\"", 1);
    put_escaped_q(s, p, n, 1);
    put(s, "\"", 1);
}

void put_plain_str(sink *s, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\')
            put_hex_escape(s, c);
        else
            put(s, (const char *)&c, 1);
    }
}
