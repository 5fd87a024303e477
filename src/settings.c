/* The environment's settings: the rows of settings.def as descriptions, and
 * one reader per type that holds a value to its row's range. */
#include "settings.h"
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a bad value does (ON_BAD in settings.def). */
#define REFUSE .refuse = 1
#define USE_DEFAULT .refuse = 0
#define USE(v) .fallback = v

const tt__setting tt__settings[TT__SET_COUNT] = {
#define TT_ENV_UINT(id, name_, min_, max_, dflt_, bad, who, doc)                                                       \
    [TT__SET_##id] = {.name = name_, .type = TT__SETTING_UINT, .min = min_, .max = max_, .dflt = dflt_, bad,           \
                      .text = name_ ": " doc "; values: " #min_ " to " #max_ ", default " #dflt_},
#define TT_ENV_MODE(id, name_, dflt_, bad, who, doc)                                                                   \
    [TT__SET_##id] = {.name = name_, .type = TT__SETTING_MODE, .min = 0, .max = 0777, .dflt = dflt_, bad,              \
                      .text = name_ ": " doc "; values: octal permission bits with the owner's read and write, "  \
                                        "0600 to 0777, default " #dflt_},
#define TT_ENV_ENUM(id, name_, values_, dflt_, bad, who, doc)                                                          \
    [TT__SET_##id] = {.name = name_, .type = TT__SETTING_ENUM, .values = values_, .dflt_value = dflt_, bad,            \
                      .text = name_ ": " doc "; values: " values_ ", default " dflt_},
#define TT_ENV_PATH(id, name_, who, doc)                                                                               \
    [TT__SET_##id] = {.name = name_, .type = TT__SETTING_PATH, .text = name_ ": " doc "; values: a path"},
#define TT_ENV_TEXT(...)
#define TT_AGENT(...)
#define TT_JVMTI(...)
#include "settings.def"
};

/* The values the public header and the event log build on. */
_Static_assert(TT_LOG_CLOCK_AUTO == 0 && TT_LOG_CLOCK_COUNTER == 1 && TT_LOG_CLOCK_MONOTONIC == 2,
               "THREADTIME_CLOCK's values are in this order");

/* One line on stderr naming the variable and its value (a return code
 * alone would not say which), control bytes escaped and at most 64 shown. */
static int refused(const tt__setting *s, const char *value)
{
    char shown[4 * 64 + 4];
    size_t n = 0, i = 0;
    for (; value[i] && i < 64; i++) {
        unsigned char c = (unsigned char)value[i];
        if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
            n += (size_t)snprintf(shown + n, sizeof shown - n, "\\x%02x", c);
        else
            shown[n++] = (char)c;
    }
    shown[n] = 0;
    fprintf(stderr, "threadtime: %s=\"%s%s\" refused. %s\n", s->name, shown, value[i] ? "..." : "", s->text);
    return -EINVAL;
}

int tt__file_mode_check(unsigned mode) { return (mode & 0600u) == 0600u && mode <= 0777u ? 0 : -EINVAL; }

int tt__setting_uint(tt__setting_id id, uint64_t *out)
{
    const tt__setting *s = &tt__settings[id];
    const char *v = tt__env(s->name);
    if (!v || !*v) {
        *out = s->dflt;
        return 1;
    }
    int mode = s->type == TT__SETTING_MODE;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, mode ? 8 : 10);
    /* A mode of 0 stands for the default, as the option's field does. */
    if (!errno && !*end && v[0] != '-' && x >= s->min && x <= s->max &&
        !(mode && x && tt__file_mode_check((unsigned)x))) {
        *out = x;
        return 0;
    }
    if (s->refuse)
        return refused(s, v);
    *out = s->dflt;
    return -EINVAL;
}

int tt__setting_value_index(const char *values, const char *v, size_t n)
{
    for (int i = 0;; i++) {
        const char *bar = strchr(values, '|');
        size_t len = bar ? (size_t)(bar - values) : strlen(values);
        if (len == n && memcmp(values, v, n) == 0)
            return i;
        if (!bar)
            return -1;
        values = bar + 1;
    }
}

static int value_index(const char *values, const char *v) { return tt__setting_value_index(values, v, strlen(v)); }

int tt__setting_enum(tt__setting_id id, unsigned *out)
{
    const tt__setting *s = &tt__settings[id];
    const char *v = tt__env(s->name);
    if (!v || !*v) {
        *out = (unsigned)value_index(s->values, s->dflt_value);
        return 1;
    }
    int i = value_index(s->values, v);
    if (i >= 0) {
        *out = (unsigned)i;
        return 0;
    }
    if (s->refuse)
        return refused(s, v);
    *out = (unsigned)value_index(s->values, s->fallback ? s->fallback : s->dflt_value);
    return -EINVAL;
}

const char *tt__setting_path(tt__setting_id id)
{
    const char *v = tt__env(tt__settings[id].name);
    return v && *v ? v : NULL;
}
