/* Names: the key -> UTF-8 name table every trace carries, for event ids
 * (tt_event_name), OS threads by tid (tt_log_thread_name) and virtual
 * threads by id (tt_log_vthread_name). A key is a namespace and an id. The
 * table lives outside the runs (names may be set before tt_log_start and
 * survive a restart) and is guarded by the log's own lock, the one start,
 * stop, dump and fork take, so a dump or a new crash-safe file always sees
 * a whole table. Kept sorted by key: a dump writes each of its two tables
 * (event names; thread names) in one pass, each key once. */
#include "internal.h"
#include "util.h"
#include "event_internal.h"
#include "event_log.h"

#include <stdlib.h>
#include <string.h>

typedef struct name_entry {
    uint64_t key; /* namespace << 48 | id */
    uint32_t len;
    char *text;   /* len bytes, not NUL-terminated */
} name_entry;

static name_entry *g_names; /* sorted by key; under the log's lock */
static size_t g_count, g_cap;

#define KEY(ns, id) (((uint64_t)(ns) << 48) | (id))
#define KEY_NS(key) ((unsigned)((key) >> 48))
#define KEY_ID(key) ((key) & TT__NAMES_ID_MAX)

/* Which of a trace's two tables a namespace goes to. */
static int table_of(unsigned ns) { return ns == TT__NAMES_EVENT ? TT__NAME_TABLE_EVENTS : TT__NAME_TABLE_THREADS; }

static int key_below(const void *ctx, size_t i) { return g_names[i].key < *(const uint64_t *)ctx; }

/* Index of key in the table, or where it would go. */
static size_t find(uint64_t key, int *found)
{
    size_t at = tt__lower_bound(g_count, key_below, &key);
    *found = at < g_count && g_names[at].key == key;
    return at;
}

/* Appends one entry to a crash-safe file's name area: the bytes first, the
 * header word last with release, so a reader of a file whose process died
 * mid-way sees the zero word that ends the table, never half a name. */
static void area_append(tt__name_area *a, uint64_t key, const char *text, uint32_t len)
{
    uint64_t size = TT__NAME_ENTRY_SIZE(len);
    if (a->size - a->used < size) {
        __atomic_fetch_add(a->dropped, 1, __ATOMIC_RELAXED);
        return;
    }
    unsigned char *e = a->base + a->used;
    memcpy(e + 8, text, len);
    __atomic_store_n((uint64_t *)e, TT__NAME_WORD_NS(KEY_NS(key), KEY_ID(key), len), __ATOMIC_RELEASE);
    a->used += size;
}

void tt__names_fill_area(tt__name_area *areas)
{
    for (size_t i = 0; i < g_count; i++)
        area_append(&areas[table_of(KEY_NS(g_names[i].key))], g_names[i].key, g_names[i].text, g_names[i].len);
}

int tt__names_serialize(int table, unsigned char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    size_t total = 0;
    for (size_t i = 0; i < g_count; i++)
        if (table_of(KEY_NS(g_names[i].key)) == table)
            total += TT__NAME_ENTRY_SIZE(g_names[i].len);
    if (!total)
        return 0;
    unsigned char *b = calloc(1, total);
    if (!b)
        return -ENOMEM;
    size_t off = 0;
    for (size_t i = 0; i < g_count; i++) {
        const name_entry *n = &g_names[i];
        if (table_of(KEY_NS(n->key)) != table)
            continue;
        uint64_t w = TT__NAME_WORD_NS(KEY_NS(n->key), KEY_ID(n->key), n->len);
        memcpy(b + off, &w, sizeof w);
        memcpy(b + off + 8, n->text, n->len);
        off += TT__NAME_ENTRY_SIZE(n->len);
    }
    *out = b;
    *len = total;
    return 0;
}

int tt__name_check(const char *name, size_t *len)
{
    if (!name)
        return -EFAULT;
    *len = strnlen(name, TT_EVENT_NAME_MAX + 1);
    if (*len == 0 || *len > TT_EVENT_NAME_MAX || !tt__utf8_valid(name, *len))
        return -EINVAL;
    return 0;
}

int tt__name_set(unsigned ns, uint64_t id, const char *name, size_t len)
{
    char *text = malloc(len);
    if (!text)
        return -ENOMEM;
    memcpy(text, name, len);
    uint64_t key = KEY(ns, id);
    tt__name_area *areas;
    tt__log_lock(&areas);
    int found, rc = 0;
    size_t i = find(key, &found);
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
        g_names[i] = (name_entry){key, (uint32_t)len, text};
        if (areas)
            area_append(&areas[table_of(ns)], key, text, (uint32_t)len);
    }
    tt__log_release();
    if (rc)
        free(text);
    return rc;
}

int tt_event_name(uint32_t id, const char *name)
{
    size_t len;
    int rc = tt__name_check(name, &len);
    return rc ? rc : tt__name_set(TT__NAMES_EVENT, id, name, len);
}

int tt_log_vthread_name(uint64_t vthread_id, const char *name)
{
    size_t len;
    int rc = tt__name_check(name, &len);
    if (rc)
        return rc;
    if (vthread_id == 0 || vthread_id > TT__NAMES_ID_MAX)
        return -EINVAL;
    return tt__name_set(TT__NAMES_VTHREAD, vthread_id, name, len);
}
