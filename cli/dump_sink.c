/* The dump's output: a buffer in front of a FILE, and numbers and strings
 * formatted by hand. printf would dominate the Chrome output of a
 * 10-million-event trace, and fixed decimals must never turn into
 * scientific notation. Every string from a trace is untrusted: each
 * format escapes what could move a terminal or break its syntax. */
#include <string.h>

#include "dump.h"

static const char hex[] = "0123456789abcdef";

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

/* 1 if p[i] starts a C1 control character in UTF-8 (U+0080..U+009F: some
 * terminals take U+009B as CSI). */
static int c1_at(const unsigned char *p, size_t n, size_t i)
{
    return p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f;
}

static void put_hex_escape(sink *s, unsigned char c)
{
    char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
    put(s, e, 4);
}

static void put_json_bytes(sink *s, const char *text, size_t n, int utf8)
{
    const unsigned char *p = (const unsigned char *)text;
    put(s, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned c = p[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            put(s, e, 2);
        } else if (utf8 && c1_at(p, n, i)) {
            c = p[++i];
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put(s, e, 6);
        } else if (c < 0x20 || c == 0x7f || (c > 0x7f && !utf8)) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put(s, e, 6);
        } else {
            put(s, (const char *)&p[i], 1);
        }
    }
    put(s, "\"", 1);
}

void put_json_str(sink *s, const char *p, size_t n) { put_json_bytes(s, p, n, 0); }
void put_json_utf8(sink *s, const char *p, size_t n) { put_json_bytes(s, p, n, 1); }

/* put_escaped, with quotes doubled when quoting is on. */
static void put_escaped_q(sink *s, const char *text, size_t n, int double_quotes)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t run = 0; /* bytes kept as they are, written in one go */
    for (size_t i = 0; i < n; i++) {
        unsigned c = p[i];
        int c1 = c1_at(p, n, i);
        if (!c1 && c >= 0x20 && c != 0x7f && c != '\\' && !(double_quotes && c == '"')) {
            run++;
            continue;
        }
        put(s, text + i - run, run);
        run = 0;
        if (c == '"') {
            put(s, "\"\"", 2);
        } else if (c1) {
            put_hex_escape(s, (unsigned char)c);
            put_hex_escape(s, p[++i]);
        } else {
            put_hex_escape(s, (unsigned char)c);
        }
    }
    put(s, text + n - run, run);
}

void put_escaped(sink *s, const char *p, size_t n) { put_escaped_q(s, p, n, 0); }

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
