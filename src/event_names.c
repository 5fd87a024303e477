/* Event names: the id -> UTF-8 name table every trace carries. It lives
 * outside the runs (names may be set before tt_log_start and survive a
 * restart) and is guarded by the log's own lock, the one start, stop, dump
 * and fork take, so a dump or a new crash-safe file always sees a whole
 * table. Kept sorted by id: a dump writes it in one pass, each id once. */
#include "internal.h"
#include "util.h"
#include "event_internal.h"
#include "event_log.h"

#include <stdlib.h>
#include <string.h>

typedef struct name_entry {
    uint32_t id;
    uint32_t len;
    char *text; /* len bytes, not NUL-terminated */
} name_entry;

static name_entry *g_names; /* sorted by id; under the log's lock */
static size_t g_count, g_cap;

/* Index of id in the table, or where it would go. */
static size_t find(uint32_t id, int *found)
{
    size_t lo = 0, hi = g_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g_names[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < g_count && g_names[lo].id == id;
    return lo;
}

/* Appends one entry to a crash-safe file's name area: the bytes first, the
 * header word last with release, so a reader of a file whose process died
 * mid-way sees the zero word that ends the table, never half a name. */
static void area_append(tt__name_area *a, uint32_t id, const char *text, uint32_t len)
{
    uint64_t size = TT__NAME_ENTRY_SIZE(len);
    if (a->size - a->used < size) {
        __atomic_fetch_add(a->dropped, 1, __ATOMIC_RELAXED);
        return;
    }
    unsigned char *e = a->base + a->used;
    memcpy(e + 8, text, len);
    __atomic_store_n((uint64_t *)e, TT__NAME_WORD(id, len), __ATOMIC_RELEASE);
    a->used += size;
}

void tt__names_fill_area(tt__name_area *area)
{
    for (size_t i = 0; i < g_count; i++)
        area_append(area, g_names[i].id, g_names[i].text, g_names[i].len);
}

int tt__names_serialize(unsigned char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    size_t total = 0;
    for (size_t i = 0; i < g_count; i++)
        total += TT__NAME_ENTRY_SIZE(g_names[i].len);
    if (!total)
        return 0;
    unsigned char *b = calloc(1, total);
    if (!b)
        return -ENOMEM;
    size_t off = 0;
    for (size_t i = 0; i < g_count; i++) {
        uint64_t w = TT__NAME_WORD(g_names[i].id, g_names[i].len);
        memcpy(b + off, &w, sizeof w);
        memcpy(b + off + 8, g_names[i].text, g_names[i].len);
        off += TT__NAME_ENTRY_SIZE(g_names[i].len);
    }
    *out = b;
    *len = total;
    return 0;
}

int tt_event_name(uint32_t id, const char *name)
{
    if (!name)
        return -EFAULT;
    size_t len = strnlen(name, TT_EVENT_NAME_MAX + 1);
    if (len == 0 || len > TT_EVENT_NAME_MAX || !tt__utf8_valid(name, len))
        return -EINVAL;
    char *text = malloc(len);
    if (!text)
        return -ENOMEM;
    memcpy(text, name, len);
    tt__name_area *area;
    tt__log_lock(&area);
    int found, rc = 0;
    size_t i = find(id, &found);
    if (found) {
        free(g_names[i].text);
    } else if (g_count == g_cap) {
        name_entry *bigger = tt__grow(g_names, &g_cap, g_count + 1, sizeof *bigger, 64);
        if (!bigger)
            rc = -ENOMEM;
        else
            g_names = bigger;
    }
    if (rc == 0) {
        if (!found) {
            memmove(g_names + i + 1, g_names + i, (g_count - i) * sizeof *g_names);
            g_count++;
        }
        g_names[i] = (name_entry){id, (uint32_t)len, text};
        if (area)
            area_append(area, id, text, (uint32_t)len);
    }
    tt__log_release();
    if (rc)
        free(text);
    return rc;
}
