/* The trace model (trace_model.h): ownership of events by virtual threads,
 * tracks, and begin/end pairing in linear time. */
#include "trace_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *tt__trace_source_name(unsigned source)
{
    switch (source) {
    case TT__TRACE_SOURCE_TSC: return "tsc";
    case TT__TRACE_SOURCE_CNTVCT: return "cntvct";
    default: return "monotonic_raw";
    }
}

int tt__pair_cpu(const tt__step *b, const tt__step *e, int64_t *user, int64_t *sys)
{
    if (!tt__event_has_cpu(&b->ev) || !tt__event_has_cpu(&e->ev) || b->thread != e->thread ||
        b->markers != e->markers)
        return 0;
    *user = (int64_t)(e->ev.p0 - b->ev.p0);
    *sys = (int64_t)(e->ev.p1 - b->ev.p1);
    return 1;
}

int tt__pair_wait(const tt__trace *t, const tt__step *b, const tt__step *e, int64_t *ns)
{
    if (!tt__kind_is_cpu(b->ev.kind) || !tt__kind_is_cpu(e->ev.kind) || b->thread != e->thread ||
        b->markers != e->markers || e->k < b->k + 3)
        return 0;
    const tt__trace_thread *th = &t->threads[b->thread];
    tt__trace_event after, before;
    if (!tt__trace_event_at(t, th, b->k + 1, &after) || !tt__trace_event_at(t, th, e->k - 1, &before) ||
        after.kind != TT__KIND_RUN_WAIT || before.kind != TT__KIND_RUN_WAIT || after.id != b->ev.id ||
        before.id != e->ev.id || before.p0 < after.p0 || before.p0 - after.p0 > INT64_MAX)
        return 0;
    *ns = (int64_t)(before.p0 - after.p0);
    return 1;
}

const char *tt__track_name(const tt__trace *t, const tt__track *tr, size_t *len)
{
    if (tr->vthread)
        return tt__trace_vthread_name(t, tr->vthread, len);
    return tt__trace_thread_name(&t->threads[tr->thread], len);
}

/* ---- ownership as windows ---- */

int tt__trace_windows(const tt__trace *t, const tt__trace_thread *th, tt__vwindow **out, size_t *n)
{
    tt__vwindow *w = NULL;
    size_t count = 0, cap = 0;
    tt__owner_walk walk = {0, 0};
    uint64_t prev = 0; /* the virtual thread of the last record that decoded */
    tt__trace_event ev;
    for (uint64_t k = 0; k < th->head - th->first; k++) {
        if (!tt__trace_event_at(t, th, k, &ev))
            continue;
        uint64_t markers, v = tt__shown_vthread(tt__owner_step(&walk, &ev, &markers), &ev);
        if (v && v == prev) {
            w[count - 1].to = k + 1; /* records between that did not decode stay inside */
        } else if (v) {
            tt__vwindow *bigger = tt__grow(w, &cap, count + 1, sizeof *w, 16);
            if (!bigger) {
                free(w);
                return -ENOMEM;
            }
            w = bigger;
            w[count++] = (tt__vwindow){k, k + 1, v};
        }
        prev = v;
    }
    *out = w;
    *n = count;
    return 0;
}

typedef struct window_key {
    const tt__vwindow *w;
    uint64_t k;
} window_key;

static int window_before(const void *ctx, size_t i)
{
    const window_key *x = ctx;
    return x->w[i].to <= x->k;
}

uint64_t tt__window_of(const tt__vwindow *w, size_t n, uint64_t k)
{
    window_key x = {w, k};
    size_t at = tt__lower_bound(n, window_before, &x); /* the first window that ends after k */
    return at < n && w[at].from <= k ? w[at].v : 0;
}

/* ---- pairing: a stack of open begins, and per id its latest open one ---- */

#define NONE SIZE_MAX

typedef struct open_begin {
    tt__step st;
    size_t prev; /* the next older open begin of the same id, or NONE */
    int live;    /* 0 once an end took it (it stays until the entries above it go) */
} open_begin;

typedef struct id_slot {
    uint32_t id;
    uint32_t gen; /* the slot is empty unless gen is the pairer's */
    size_t top;   /* the latest open begin of id, or NONE */
} id_slot;

typedef struct pairer {
    open_begin *stack;
    size_t depth, cap;
    id_slot *slots; /* open addressing, a power of two */
    size_t nslots, used;
    uint32_t gen;
} pairer;

static id_slot *slot_find(pairer *p, uint32_t id)
{
    size_t mask = p->nslots - 1, j = (id * (size_t)2654435761u) & mask;
    while (p->slots[j].gen == p->gen && p->slots[j].id != id)
        j = (j + 1) & mask;
    return &p->slots[j];
}

/* A new track: no open begins, no ids (a generation bump empties every slot). */
static void pairer_reset(pairer *p)
{
    p->depth = 0;
    p->used = 0;
    if (++p->gen == 0) {
        if (p->slots)
            memset(p->slots, 0, p->nslots * sizeof *p->slots);
        p->gen = 1;
    }
}

/* The slot of id, made if missing. NULL when memory runs out. */
static id_slot *slot_of(pairer *p, uint32_t id)
{
    if (2 * (p->used + 1) > p->nslots) {
        size_t n = p->nslots ? p->nslots * 2 : 64;
        if (n > SIZE_MAX / sizeof *p->slots)
            return NULL;
        id_slot *old = p->slots, *slots = calloc(n, sizeof *slots);
        if (!slots)
            return NULL;
        size_t oldn = p->nslots;
        p->slots = slots;
        p->nslots = n;
        for (size_t i = 0; i < oldn; i++)
            if (old[i].gen == p->gen)
                *slot_find(p, old[i].id) = old[i];
        free(old);
    }
    id_slot *s = slot_find(p, id);
    if (s->gen != p->gen) {
        *s = (id_slot){id, p->gen, NONE};
        p->used++;
    }
    return s;
}

static int pairer_begin(pairer *p, const tt__step *st)
{
    if (p->depth == p->cap) {
        open_begin *bigger = tt__grow(p->stack, &p->cap, p->depth + 1, sizeof *p->stack, 64);
        if (!bigger)
            return -ENOMEM;
        p->stack = bigger;
    }
    id_slot *s = slot_of(p, st->ev.id);
    if (!s)
        return -ENOMEM;
    p->stack[p->depth] = (open_begin){*st, s->top, 1};
    s->top = p->depth++;
    return 0;
}

/* Takes the latest open begin of end's id into *b. Returns 0 if none. */
static int pairer_end(pairer *p, const tt__step *end, tt__step *b)
{
    if (!p->nslots)
        return 0;
    id_slot *s = slot_find(p, end->ev.id);
    if (s->gen != p->gen || s->top == NONE)
        return 0;
    open_begin *o = &p->stack[s->top];
    *b = o->st;
    s->top = o->prev;
    o->live = 0;
    while (p->depth && !p->stack[p->depth - 1].live)
        p->depth--;
    return 1;
}

static int feed(pairer *p, const tt__walk_ops *ops, void *ctx, const tt__track *tr, const tt__step *st)
{
    tt__step b;
    if (tt__kind_is_begin(st->ev.kind)) {
        if (pairer_begin(p, st) != 0)
            return -ENOMEM;
        ops->event(ctx, tr, st, NULL);
    } else if (tt__kind_is_end(st->ev.kind) && pairer_end(p, st, &b)) {
        ops->event(ctx, tr, st, &b);
    } else {
        ops->event(ctx, tr, st, NULL);
    }
    return 0;
}

static void start_track(pairer *p, const tt__walk_ops *ops, void *ctx, const tt__track *tr)
{
    pairer_reset(p);
    if (ops->track_start)
        ops->track_start(ctx, tr);
}

static void finish_track(pairer *p, const tt__walk_ops *ops, void *ctx, const tt__track *tr)
{
    if (ops->track_end)
        ops->track_end(ctx, tr);
    for (size_t i = 0; ops->open && i < p->depth; i++)
        if (p->stack[i].live)
            ops->open(ctx, tr, &p->stack[i].st);
    pairer_reset(p);
}

/* ---- virtual threads' events, gathered from their carriers ---- */

typedef struct vref {
    uint64_t v;
    int64_t ns;
    uint32_t thread;
    uint64_t k;
    uint64_t markers;
} vref;

static int vref_order(const void *a, const void *b)
{
    const vref *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

static int step_at(const tt__trace *t, uint32_t i, uint64_t k, uint64_t markers, tt__step *st)
{
    if (!tt__trace_event_at(t, &t->threads[i], k, &st->ev))
        return 0;
    st->ns = tt__trace_rebase(t, &st->ev);
    st->thread = i;
    st->k = k;
    st->markers = markers;
    return 1;
}

int tt__trace_walk(const tt__trace *t, const tt__walk_ops *ops, void *ctx)
{
    pairer p = {0};
    vref *refs = NULL;
    size_t nrefs = 0, cap = 0;
    int rc = 0;
    tt__step st;
    for (uint32_t i = 0; i < t->nthreads && rc == 0; i++) {
        const tt__trace_thread *th = &t->threads[i];
        tt__track tr = {i, 0, 0};
        tt__owner_walk w = {0, 0};
        start_track(&p, ops, ctx, &tr);
        for (uint64_t k = 0; k < th->head - th->first && rc == 0; k++) {
            if (!step_at(t, i, k, 0, &st))
                continue;
            uint64_t v = tt__owner_step(&w, &st.ev, &st.markers);
            if (!v) {
                rc = feed(&p, ops, ctx, &tr, &st);
                continue;
            }
            vref *bigger = tt__grow(refs, &cap, nrefs + 1, sizeof *refs, 256);
            if (!bigger) {
                rc = -ENOMEM;
                break;
            }
            refs = bigger;
            refs[nrefs++] = (vref){v, st.ns, i, k, st.markers};
        }
        if (rc == 0)
            finish_track(&p, ops, ctx, &tr);
    }
    if (rc == 0 && nrefs)
        qsort(refs, nrefs, sizeof *refs, vref_order);
    tt__track tr = {0, 0, 0};
    for (size_t j = 0; j < nrefs && rc == 0; j++) {
        const vref *r = &refs[j];
        if (j == 0 || r->v != refs[j - 1].v) {
            tr = (tt__track){0, r->v, j == 0 ? 0 : tr.ordinal + 1};
            start_track(&p, ops, ctx, &tr);
        }
        if (step_at(t, r->thread, r->k, r->markers, &st))
            rc = feed(&p, ops, ctx, &tr, &st);
        if (rc == 0 && (j + 1 == nrefs || refs[j + 1].v != r->v))
            finish_track(&p, ops, ctx, &tr);
    }
    free(refs);
    free(p.stack);
    free(p.slots);
    return rc;
}

int tt__pair_track(const tt__step *steps, size_t n, const tt__walk_ops *ops, void *ctx)
{
    pairer p = {0};
    tt__track tr = {0, 0, 0};
    int rc = 0;
    start_track(&p, ops, ctx, &tr);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = feed(&p, ops, ctx, &tr, &steps[i]);
    if (rc == 0)
        finish_track(&p, ops, ctx, &tr);
    free(p.stack);
    free(p.slots);
    return rc;
}
