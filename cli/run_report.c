/* Reading a `threadtime run` recording back and printing its report. */
#include "event_log.h"
#include "run.h"
#include "run_file.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- loading ---- */

int tt__run_set_add(tt__run_set *s, unsigned char *data, size_t len)
{
    /* Doubled, not one more each time: with a realloc per file, 800 short
     * processes spent ~7 % of the command's CPU copying the array. */
    tt__run_proc_buf *p = tt__grow(s->procs, &s->procs_cap, (size_t)s->nprocs + 1, sizeof *p, 64);
    if (!p)
        return -ENOMEM;
    s->procs = p;
    s->procs[s->nprocs++] = (tt__run_proc_buf){data, len};
    return 0;
}

/* One process's file, opened in the run directory: a regular file only
 * (never through a symlink, never waiting on a FIFO), read as
 * tt__run_file_read reads it (what the header says was recorded, and no
 * further). NULL when it is anything else, or not a complete file. */
static unsigned char *read_proc_file(int dir, const char *name, size_t *len, const char **why)
{
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    unsigned char *b = NULL;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        b = tt__run_file_read(fd, st.st_size, len, why);
    if (fd >= 0)
        close(fd);
    return b;
}

int tt__run_set_load_dir(const char *dir, tt__run_set *s)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        int e = errno;
        fprintf(stderr, "threadtime run: cannot read %s: %s\n", dir, strerror(e));
        if (dfd >= 0)
            close(dfd);
        return -e;
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 6, ".ttrun") != 0)
            continue;
        size_t len = 0;
        const char *why = NULL;
        unsigned char *b = read_proc_file(dirfd(d), e->d_name, &len, &why);
        /* A file of a preload of another version (THREADTIME_RUN_LIB) is
         * said; one never started (no magic yet) is not a file to report. */
        if (!b && why && strstr(why, "version"))
            fprintf(stderr, "threadtime run: %s left out: %s\n", e->d_name, why);
        if (b && (rc = tt__run_set_add(s, b, len)) != 0)
            free(b);
    }
    closedir(d);
    return rc;
}

/* ---- the run log: the processes that wrote no file ---- */

/* Records of one image next to each other: by pid, start, key, and a
 * START before its EXIT (indices into the log's records, ctx; ties in the
 * log's order, so the first of copies is taken). */
static int by_image(const void *a, const void *b, void *ctx)
{
    const tt__run_log_rec *v = ctx, *x = &v[*(const uint32_t *)a], *y = &v[*(const uint32_t *)b];
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    if (x->proc_ino != y->proc_ino)
        return x->proc_ino < y->proc_ino ? -1 : 1;
    if (x->proc_start != y->proc_start)
        return x->proc_start < y->proc_start ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return (x > y) - (x < y);
}

static int same_image(const tt__run_log_rec *a, const tt__run_log_rec *b)
{
    return a->pid == b->pid && a->start_ns == b->start_ns && a->proc_ino == b->proc_ino &&
           a->proc_start == b->proc_start;
}

/* The headers of s's processes by pid and start (index into s->procs). */
typedef struct image_index {
    const tt__run_set *s;
    uint32_t *v;
} image_index;

static const tt__run_header *proc_hdr(const tt__run_set *s, uint32_t i)
{
    return (const tt__run_header *)s->procs[i].data;
}

static int by_pid_start_index(const void *a, const void *b, void *ctx)
{
    const tt__run_header *x = proc_hdr(ctx, *(const uint32_t *)a), *y = proc_hdr(ctx, *(const uint32_t *)b);
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

typedef struct image_key {
    const image_index *x;
    uint32_t pid;
    uint64_t start_ns;
} image_key;

static int image_below(const void *ctx, size_t i)
{
    const image_key *k = ctx;
    const tt__run_header *h = proc_hdr(k->x->s, k->x->v[i]);
    return h->pid < k->pid || (h->pid == k->pid && h->start_ns < k->start_ns);
}

/* 1 when one of the n files indexed is the image r is a record of: a
 * process that became non-lone made its file with its image's start. */
static int has_file(const image_index *x, size_t n, const tt__run_log_rec *r)
{
    image_key k = {x, r->pid, r->start_ns};
    for (size_t i = tt__lower_bound(n, image_below, &k); i < n; i++) {
        const tt__run_header *h = proc_hdr(x->s, x->v[i]);
        if (h->pid != r->pid || h->start_ns != r->start_ns)
            break;
        if (tt__run_same_key(h->proc_start, h->proc_ino, r->proc_start, r->proc_ino))
            return 1;
    }
    return 0;
}

/* An image that has only log records, as the file it would have written:
 * its header (from its START where there is one: the parent then), and
 * from its EXIT the one thread and the end; one record spare, as
 * tt__run_file_read leaves one. With a NOFILE record, no EXIT is taken:
 * the image failed to make its file, its threads since are in no record,
 * and it stays RUNNING (its parent's wait4 counts it) with the errno.
 * NULL when out of memory. */
static unsigned char *log_image(const tt__run_log_rec *start, const tt__run_log_rec *end,
                                const tt__run_log_rec *nofile, size_t *len)
{
    if (nofile)
        end = NULL;
    const tt__run_log_rec *r = start ? start : nofile ? nofile : end;
    uint32_t cap = end ? 2 : 1;
    size_t n = tt__run_file_bytes(cap, 1);
    unsigned char *b = calloc(1, n);
    if (!b)
        return NULL;
    tt__run_header *h = (tt__run_header *)b;
    tt__run_header_init(h, cap, 1);
    h->pid = r->pid;
    h->ppid = r->ppid;
    h->proc_start = r->proc_start;
    h->proc_ino = r->proc_ino;
    h->start_ns = r->start_ns;
    h->start_real_ns = r->start_real_ns;
    h->boot_offset = r->boot_offset;
    memcpy(h->exe, r->exe, sizeof h->exe);
    h->file_errno = nofile ? nofile->err : 0;
    if (end) {
        atomic_store_explicit(&h->threads_used, 1, memory_order_relaxed);
        atomic_store_explicit(&h->state, TT_RUN_PROC_EXITED, memory_order_relaxed);
        atomic_store_explicit(&h->end_ns, end->end_ns, memory_order_relaxed);
        memcpy(b + TT_RUN_HEADER_SIZE, &end->thread, sizeof end->thread);
    }
    *len = n;
    return b;
}

/* Marks each image that a later image of its process followed (one pid
 * and key, a later start) and that says it is still running: exec
 * replaced it. A lone image cannot mark its file itself, as the next image
 * may make none. 0 or -ENOMEM. */
static int mark_replaced(tt__run_set *s)
{
    uint32_t n = s->nprocs, *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        v[i] = i;
    qsort_r(v, n, sizeof *v, by_pid_start_index, s);
    for (uint32_t k = 0; k + 1 < n; k++) {
        tt__run_header *h = (tt__run_header *)s->procs[v[k]].data;
        const tt__run_header *next = proc_hdr(s, v[k + 1]);
        if (atomic_load_explicit(&h->state, memory_order_relaxed) == TT_RUN_PROC_RUNNING &&
            tt__run_same_process(h, next))
            atomic_store_explicit(&h->state, TT_RUN_PROC_EXECED, memory_order_relaxed);
    }
    free(v);
    return 0;
}

int tt__run_set_add_log(tt__run_set *s, unsigned char *b, size_t n, size_t *skipped)
{
    *skipped = 0;
    if ((uintptr_t)b % _Alignof(tt__run_log_rec))
        return -EINVAL;
    /* The records parsed where they were read: b itself, then an index of
     * 4 bytes a record (of 512) to sort them by image, where a copy of
     * each record (grown, then sorted through another) held the log ~3
     * times over beside b. */
    size_t nrec = 0;
    if (n)
        *skipped = tt__run_log_compact(b, n, &nrec);
    const tt__run_log_rec *v = (const tt__run_log_rec *)b;
    uint32_t files = s->nprocs;
    image_index x = {s, malloc((files ? files : 1) * sizeof *x.v)};
    uint32_t *order = nrec <= UINT32_MAX ? malloc((nrec ? nrec : 1) * sizeof *order) : NULL;
    int rc = !x.v || !order ? -ENOMEM : 0;
    for (uint32_t i = 0; !rc && i < files; i++)
        x.v[i] = i;
    for (uint32_t i = 0; !rc && i < nrec; i++)
        order[i] = i;
    if (!rc) {
        qsort_r(x.v, files, sizeof *x.v, by_pid_start_index, s);
        qsort_r(order, nrec, sizeof *order, by_image, (void *)v);
    }
    for (size_t i = 0; !rc && i < nrec;) {
        /* One image: its START, its EXIT or NOFILE (more of any are copies). */
        const tt__run_log_rec *start = NULL, *end = NULL, *nofile = NULL;
        size_t j = i;
        for (; j < nrec && same_image(&v[order[i]], &v[order[j]]); j++) {
            const tt__run_log_rec *r = &v[order[j]];
            if (r->kind == TT_RUN_LOG_START && !start)
                start = r;
            if (r->kind == TT_RUN_LOG_EXIT && !end)
                end = r;
            if (r->kind == TT_RUN_LOG_NOFILE && !nofile)
                nofile = r;
        }
        i = j;
        if (has_file(&x, files, start ? start : nofile ? nofile : end))
            continue;
        size_t len = 0;
        unsigned char *img = log_image(start, end, nofile, &len);
        if (!img || tt__run_set_add(s, img, len) != 0) {
            free(img);
            rc = -ENOMEM;
        }
    }
    free(x.v);
    free(order);
    return rc ? rc : mark_replaced(s);
}

int tt__run_set_parse(const unsigned char *b, size_t len, tt__run_set *s, const char **why)
{
    *why = NULL;
    memset(s, 0, sizeof *s);
    if (!tt__run_set_is(b, len) || len < tt__runset_header_size(1)) {
        *why = tt__run_set_is(b, len) ? "shorter than its header" : "not a recording of threadtime run";
        return -EINVAL;
    }
    /* The version first: a version 1 header is shorter. */
    uint32_t version;
    memcpy(&version, b + offsetof(tt__runset_header, version), sizeof version);
    size_t off = tt__runset_header_size(version); /* from here on, off <= len */
    if (off > len) {
        *why = "shorter than its header";
        return -EINVAL;
    }
    memcpy(&s->h, b, off ? off : tt__runset_header_size(1)); /* len holds version 1's, checked above */
    if (version == 1) { /* nothing recorded: no figure, never a zero */
        s->h.cgroup_error = -1;
        s->h.rusage_voluntary = s->h.rusage_involuntary = -1;
    }
    if (!off)
        *why = version > TT_RUNSET_VERSION ? "made by a newer threadtime (unknown version)" : "unknown version";
    else if (s->h.cmd_len > len - off)
        *why = "truncated command line";
    else if (!(s->cmd = strndup((const char *)b + off, s->h.cmd_len)))
        *why = "out of memory";
    else
        off += s->h.cmd_len;
    for (uint32_t i = 0; i < s->h.files && !*why; i++) {
        uint64_t n;
        if (len - off < sizeof n) {
            *why = "truncated";
            break;
        }
        memcpy(&n, b + off, sizeof n);
        off += sizeof n;
        if (n > len - off) {
            *why = "truncated process file";
            break;
        }
        /* Checked in its own copy: in the recording it follows the
         * command line, at any alignment. */
        unsigned char *p = malloc(n ? (size_t)n : 1);
        if (!p || tt__run_set_add(s, p, (size_t)n) != 0) {
            free(p);
            *why = "out of memory";
            break;
        }
        memcpy(p, b + off, (size_t)n);
        off += (size_t)n;
        /* A version 1 process file comes in this version's layout. */
        size_t plen = (size_t)n;
        s->procs[s->nprocs - 1].data = NULL;
        if (!(p = tt__run_file_upgrade(p, &plen, why)) || tt__run_file_check(p, plen, why) != 0) {
            free(p);
            break;
        }
        s->procs[s->nprocs - 1] = (tt__run_proc_buf){p, plen};
    }
    if (*why) {
        tt__run_set_free(s);
        return -EINVAL;
    }
    return 0;
}

int tt__run_set_save(const tt__run_set *s, const char *path)
{
    /* As the core writes its traces (docs/security.md): a new 0600 file
     * beside the destination, O_EXCL|O_NOFOLLOW under an unpredictable
     * name, renamed into place when whole; no planted symlink followed. */
    char *real = NULL, *tmp = NULL;
    int rc = tt__file_target(path, &real);
    if (rc == TT__FILE_PLANTED)
        return -EACCES;
    if (rc == TT__FILE_STREAM)
        return -EINVAL; /* a recording is a file to read back, not a stream */
    if (rc < 0)
        return rc;
    int fd = tt__file_create(real, 0600, &tmp);
    if (fd < 0) {
        free(real);
        return fd;
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        rc = -errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        free(real);
        return rc;
    }
    tt__runset_header h = s->h;
    memcpy(h.magic, TT_RUNSET_MAGIC, 8);
    h.version = TT_RUNSET_VERSION;
    h.files = s->nprocs;
    h.cmd_len = s->cmd ? (uint32_t)strlen(s->cmd) : 0;
    fwrite(&h, sizeof h, 1, f);
    fwrite(s->cmd ? s->cmd : "", 1, h.cmd_len, f);
    for (uint32_t i = 0; i < s->nprocs; i++) {
        uint64_t n = s->procs[i].len;
        fwrite(&n, sizeof n, 1, f);
        fwrite(s->procs[i].data, 1, s->procs[i].len, f);
    }
    int bad = ferror(f);
    rc = fclose(f) != 0 || bad ? -EIO : 0;
    if (rc == 0)
        rc = tt__file_place(tmp, real);
    else
        unlink(tmp);
    free(tmp);
    free(real);
    return rc;
}

void tt__run_set_free(tt__run_set *s)
{
    for (uint32_t i = 0; i < s->nprocs; i++)
        free(s->procs[i].data);
    free(s->procs);
    free(s->cmd);
    memset(s, 0, sizeof *s);
}

/* ---- rows ---- */

/* a + b for figures in ns, a negative one (unknown) counted as 0, at most
 * INT64_MAX: a damaged file can hold any figure. */
static int64_t add_ns(int64_t a, int64_t b)
{
    a = a > 0 ? a : 0;
    b = b > 0 ? b : 0;
    return b > INT64_MAX - a ? INT64_MAX : a + b;
}

/* a + b where both are known, else unknown (-1): a group's figure. */
static int64_t add_known(int64_t a, int64_t b) { return a >= 0 && b >= 0 ? add_ns(a, b) : -1; }

typedef struct row {
    uint32_t tid, count; /* count > 1: a group */
    uint32_t procs;      /* the groups over all processes: how many processes */
    int mixed;           /* a group of different names */
    char name[64], name_start[TT_RUN_NAME], orig[64];
    const char *how;     /* how the figures were taken */
    int64_t user, sys, total; /* user/sys -1: unknown (sampled total only) */
    int64_t wait, slices, vcs, ivcs; /* the scheduler's accounts (run_file.h); -1: unknown */
    uint64_t start, end;      /* start 0: unknown */
    const tt__run_thread *rec;
    int early; /* its CPU counts from before its recorded start (a main thread: exec, the loader) */
} row;

typedef struct proc {
    const tt__run_header *h;
    const tt__run_thread *threads;
    const tt__run_sample *samples;
    row *rows;
    uint32_t nrows, depth;
    int done, folded; /* folded: an exec image shown in the next one */
} proc;

static void copy_name(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, TT_RUN_NAME - 1);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* Open-addressing tables keyed by tid (0: an empty slot), sized a power of
 * two at least twice the keys: each entry starts with its tid. */
static uint32_t table_cap(uint32_t keys)
{
    uint32_t cap = 64;
    while (cap < 2 * (uint64_t)keys + 32 && cap < (1u << 31))
        cap *= 2;
    return cap;
}

/* The slot of tid in a table of cap entries of stride bytes: its own, or
 * the empty one where it goes. */
static uint32_t tid_slot(const void *table, size_t stride, uint32_t cap, uint32_t tid)
{
    uint32_t j = (tid * 2654435761u) & (cap - 1), have;
    for (;;) {
        memcpy(&have, (const unsigned char *)table + (size_t)j * stride, sizeof have);
        if (!have || have == tid)
            return j;
        j = (j + 1) & (cap - 1);
    }
}

/* Per tid, what its pthread records say (for covered): one is live, or
 * the latest end among them. */
typedef struct pthread_seen {
    uint32_t tid, live;
    uint64_t end;
} pthread_seen;

/* The tids of the published pthread records of p's first `used`, or NULL
 * when memory runs out. */
static pthread_seen *pthread_tids(const proc *p, uint32_t used, uint32_t *cap)
{
    *cap = table_cap(used);
    pthread_seen *m = calloc(*cap, sizeof *m);
    for (uint32_t i = 0; m && i < used; i++) {
        const tt__run_thread *t = &p->threads[i];
        uint32_t st = t->state;
        if (!t->tid || t->kind != TT_RUN_KIND_PTHREAD ||
            !(st == TT_RUN_ENDED || st == TT_RUN_AT_EXIT || st == TT_RUN_LIVE || st == TT_RUN_WRITING))
            continue;
        pthread_seen *e = &m[tid_slot(m, sizeof *m, *cap, t->tid)];
        e->tid = t->tid;
        e->live |= st == TT_RUN_LIVE;
        e->end = t->end_ns > e->end ? t->end_ns : e->end;
    }
    return m;
}

/* A record SEEN by the sampler that a pthread record of the same tid
 * covers is that thread, caught before its record was published: the
 * pthread record is live, or ended after the sampler first saw the tid. */
static int covered(const pthread_seen *m, uint32_t cap, const tt__run_thread *seen)
{
    if (!seen->tid)
        return 0;
    const pthread_seen *e = &m[tid_slot(m, sizeof *m, cap, seen->tid)];
    return e->tid && (e->live || e->end >= seen->start_ns);
}

static int cmp_rows(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static uint64_t life(const row *r) { return r->start && r->end > r->start ? r->end - r->start : 0; }

/* The "how" of the sampler's own row. */
static const char sampler_how[] = "threadtime";

static void build_rows(proc *p)
{
    const tt__run_header *h = p->h;
    uint32_t used = h->threads_used < h->thread_cap ? h->threads_used : h->thread_cap;
    p->rows = calloc(used + 1, sizeof *p->rows);
    if (!p->rows)
        return;
    uint32_t pcap;
    pthread_seen *pthreads = pthread_tids(p, used, &pcap);
    if (!pthreads) {
        free(p->rows);
        p->rows = NULL;
        return;
    }
    for (uint32_t i = 0; i < used; i++) {
        const tt__run_thread *t = &p->threads[i];
        /* After exec the main thread goes on in the next image's file, its
         * CPU clock with it: counted there, once. */
        if (h->state == TT_RUN_PROC_EXECED && t->tid == h->pid)
            continue;
        row r = {.tid = t->tid, .count = 1, .rec = t, .start = t->start_ns, .end = t->end_ns};
        int sched = (t->flags & TT_RUN_SCHED) != 0, wait = sched && !(t->flags & TT_RUN_NO_WAIT);
        r.wait = wait ? t->run_wait_ns : -1;
        r.slices = wait ? t->timeslices : -1;
        r.vcs = sched ? t->voluntary_switches : -1;
        r.ivcs = sched ? t->involuntary_switches : -1;
        /* The name at its end when one was read, even an empty one; else
         * the name at its start. */
        int end_named = (t->flags & TT_RUN_NAME_END) != 0;
        copy_name(r.name, sizeof r.name, end_named || t->name_end[0] ? t->name_end : t->name_start);
        if ((end_named || t->name_end[0]) && strncmp(t->name_start, t->name_end, TT_RUN_NAME) != 0)
            copy_name(r.name_start, sizeof r.name_start, t->name_start);
        r.user = t->user_ns;
        r.sys = t->system_ns;
        switch ((uint32_t)t->state) {
        case TT_RUN_ENDED:
            r.how = "ended";
            break;
        case TT_RUN_FROM_PARENT:
            r.how = "parent's wait4";
            break;
        case TT_RUN_AT_EXIT:
            /* From outside, the last round over /proc is what is known. */
            r.how = h->flags & TT_RUN_FLAG_OUTSIDE ? "/proc sample" : "at exit";
            break;
        case TT_RUN_LIVE:
        case TT_RUN_WRITING:
        case TT_RUN_SEEN:
            if (t->state == TT_RUN_SEEN && covered(pthreads, pcap, t))
                continue;
            /* No end of its own: the last sample is what is known. */
            r.user = r.sys = -1;
            r.total = t->spare[1] ? (int64_t)t->spare[0] : 0;
            r.end = t->spare[1] ? t->spare[1] : t->start_ns;
            r.how = t->state == TT_RUN_SEEN ? "sampled" : "last sample";
            p->rows[p->nrows++] = r;
            continue;
        default:
            continue; /* taken, never published: killed in between */
        }
        r.total = r.user >= 0 && r.sys >= 0 ? add_ns(r.user, r.sys) : -1;
        /* The main thread ran exec and the loader before the preload could
         * note its start: its CPU may exceed the life recorded (a chain's
         * later image has it back from fold_exec_chains). */
        r.early = t->tid == h->pid && r.total > 0 && (uint64_t)r.total > life(&r);
        p->rows[p->nrows++] = r;
    }
    if (h->sampler_tid) {
        row r = {.tid = h->sampler_tid, .count = 1, .how = sampler_how, .user = -1, .sys = -1,
                 .wait = -1, .slices = -1, .vcs = -1, .ivcs = -1};
        strcpy(r.name, "tt-sampler");
        r.total = (int64_t)h->sampler_cpu_ns;
        r.start = h->start_ns;
        r.end = h->end_ns;
        p->rows[p->nrows++] = r;
    }
    free(pthreads);
    qsort(p->rows, p->nrows, sizeof *p->rows, cmp_rows);
}

/* The name with its trailing number folded to '*': "GC Thread#3" ->
 * "GC Thread#*", "pool-1-thread-7" -> "pool-1-thread-*". Only a trailing
 * one: "C2 CompilerThread0" reaches the kernel cut to 15 bytes, "C2
 * CompilerThre", which already names them all and keeps its C1/C2. */
static void fold_name(const char *name, char *out, size_t cap)
{
    size_t begin = strlen(name);
    while (begin > 0 && name[begin - 1] >= '0' && name[begin - 1] <= '9')
        begin--;
    if (begin == strlen(name) || begin == 0)
        snprintf(out, cap, "%s", name);
    else
        snprintf(out, cap, "%.*s*", (int)begin, name);
}

/* FNV-1a of a name: the group table's hash. */
static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Folds p's rows into one per folded name, in one pass: a table from the
 * folded name to its group's row. 0 or -ENOMEM (rows as they were). */
static int group_rows(proc *p)
{
    uint32_t cap = table_cap(p->nrows);
    uint32_t *slot = calloc(cap, sizeof *slot); /* a group's row + 1; 0: empty */
    if (!slot)
        return -ENOMEM;
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->nrows; i++) {
        row r = p->rows[i];
        char g[64];
        fold_name(r.name, g, sizeof g);
        uint32_t j = name_hash(g) & (cap - 1);
        while (slot[j] && strcmp(p->rows[slot[j] - 1].name, g) != 0)
            j = (j + 1) & (cap - 1);
        if (!slot[j]) { /* rows[n] was read already: n <= i */
            slot[j] = n + 1;
            p->rows[n] = r;
            strcpy(p->rows[n].orig, r.name);
            strcpy(p->rows[n].name, g);
            p->rows[n].name_start[0] = 0;
            n++;
            continue;
        }
        row *q = &p->rows[slot[j] - 1];
        q->mixed |= strcmp(q->orig, r.name) != 0;
        q->count += r.count;
        q->procs += r.procs;
        q->user = add_known(q->user, r.user);
        q->sys = add_known(q->sys, r.sys);
        q->total = add_ns(q->total, r.total);
        q->wait = add_known(q->wait, r.wait);
        q->slices = add_known(q->slices, r.slices);
        q->vcs = add_known(q->vcs, r.vcs);
        q->ivcs = add_known(q->ivcs, r.ivcs);
        if (r.start && (!q->start || r.start < q->start))
            q->start = r.start;
        if (r.end > q->end)
            q->end = r.end;
    }
    free(slot);
    /* A name nothing else folded into keeps its digits ("python3"). */
    for (uint32_t i = 0; i < n; i++)
        if (!p->rows[i].mixed)
            strcpy(p->rows[i].name, p->rows[i].orig);
    p->nrows = n;
    qsort(p->rows, p->nrows, sizeof *p->rows, cmp_rows);
    return 0;
}

/* An image that failed to make its file (file_errno, from its NOFILE
 * record), or to reserve blocks in it for a record (a full disk), and so
 * has no exit record: what it ran since is in no record. */
static int no_file(const tt__run_header *h)
{
    return h->file_errno && (h->state == TT_RUN_PROC_RUNNING || h->state == TT_RUN_PROC_REAPED);
}

static const char *proc_state(const tt__run_header *h)
{
    if (h->flags & TT_RUN_FLAG_OUTSIDE)
        return "sampled from outside";
    switch ((uint32_t)h->state) {
    case TT_RUN_PROC_EXITED:
        return "exited";
    case TT_RUN_PROC_EXECED:
        return "replaced by exec";
    case TT_RUN_PROC_REAPED:
        return "no exit record of its own (killed, or setuid or with file capabilities: no preload): "
               "what its threads did not record is from its parent's wait4";
    case TT_RUN_PROC_ALIVE:
        return "still running when the report was written: its threads' CPU so far";
    default:
        return "did not exit (killed?): ended threads and the last sample";
    }
}

/* The process's state as the text and JSON reports say it (plain text: an
 * errno's text has no quote or control character). */
static void put_state(sink *out, const tt__run_header *h)
{
    if (no_file(h))
        put_fmt(out, "not all recorded: its file could not be made or grown (%s): %s", strerror((int)h->file_errno),
                h->state == TT_RUN_PROC_REAPED ? "what its threads did not record is from its parent's wait4"
                                               : "no recorded parent reaped it, so the rest has no figure");
    else
        put_cstr(out, proc_state(h));
}

/* The tree's orders of process indices: by parent pid, then by start
 * (siblings in the order they started); and by pid. Ties by index. */
static int by_parent(const void *a, const void *b, void *arg)
{
    const proc *ps = arg;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const tt__run_header *x = ps[i].h, *y = ps[j].h;
    if (x->ppid != y->ppid)
        return x->ppid < y->ppid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (i > j) - (i < j);
}

static int by_pid(const void *a, const void *b, void *arg)
{
    const proc *ps = arg;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    if (ps[i].h->pid != ps[j].h->pid)
        return ps[i].h->pid < ps[j].h->pid ? -1 : 1;
    return (i > j) - (i < j);
}

static int by_start(const void *a, const void *b, void *arg)
{
    const proc *ps = arg;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    if (ps[i].h->start_ns != ps[j].h->start_ns)
        return ps[i].h->start_ns < ps[j].h->start_ns ? -1 : 1;
    return (i > j) - (i < j);
}

static uint32_t key(const proc *ps, uint32_t i, int parent) { return parent ? ps[i].h->ppid : ps[i].h->pid; }

typedef struct sorted_key {
    const proc *ps;
    const uint32_t *sorted;
    uint32_t v;
    int parent;
} sorted_key;

static int key_below(const void *ctx, size_t i)
{
    const sorted_key *k = ctx;
    return key(k->ps, k->sorted[i], k->parent) < k->v;
}

/* The first position of sorted[0..n) whose key is v or more. */
static uint32_t lower(const proc *ps, const uint32_t *sorted, uint32_t n, uint32_t v, int parent)
{
    sorted_key k = {ps, sorted, v, parent};
    return (uint32_t)tt__lower_bound(n, key_below, &k);
}

/* Processes in tree order into order[]: each after its parent, siblings by
 * start; a process whose parent is not in the recording starts a tree (the
 * trees in the order they started), and what is left (a cycle of pids, in
 * a damaged file) after. Sorted once and
 * walked with a stack of its own: a chain of thousands of forks is no
 * deeper on the C stack than one process. Returns how many, or -ENOMEM. */
static int64_t order_procs(proc *ps, uint32_t n, uint32_t *order)
{
    uint32_t *kids = malloc((n ? n : 1) * sizeof *kids), *pids = malloc((n ? n : 1) * sizeof *pids);
    uint32_t *stack = malloc((n ? n : 1) * sizeof *stack), *roots = malloc((n ? n : 1) * sizeof *roots);
    if (!kids || !pids || !stack || !roots) {
        free(kids);
        free(pids);
        free(stack);
        free(roots);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        kids[i] = pids[i] = roots[i] = i;
    qsort_r(kids, n, sizeof *kids, by_parent, ps);
    qsort_r(pids, n, sizeof *pids, by_pid, ps);
    qsort_r(roots, n, sizeof *roots, by_start, ps);
    uint32_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t r = 0; r < n; r++) {
            uint32_t i = roots[r];
            if (ps[i].done)
                continue;
            int has_parent = 0;
            uint32_t ppid = ps[i].h->ppid;
            for (uint32_t j = lower(ps, pids, n, ppid, 0); pass == 0 && j < n && key(ps, pids[j], 0) == ppid; j++)
                has_parent |= pids[j] != i;
            if (has_parent)
                continue;
            uint32_t top = 0;
            stack[top++] = i;
            ps[i].done = 1;
            ps[i].depth = 0;
            while (top) {
                uint32_t x = stack[--top], pid = ps[x].h->pid;
                order[k++] = x;
                uint32_t lo = lower(ps, kids, n, pid, 1), hi = lo;
                while (hi < n && key(ps, kids[hi], 1) == pid)
                    hi++;
                for (uint32_t c = hi; c-- > lo;) /* pushed last first: the first started comes out first */
                    if (!ps[kids[c]].done) {
                        ps[kids[c]].done = 1;
                        ps[kids[c]].depth = ps[x].depth + 1;
                        stack[top++] = kids[c];
                    }
            }
        }
    free(kids);
    free(pids);
    free(stack);
    free(roots);
    return k;
}

static int by_pid_start(const void *a, const void *b, void *arg)
{
    const proc *ps = arg;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    if (ps[i].h->pid != ps[j].h->pid)
        return ps[i].h->pid < ps[j].h->pid ? -1 : 1;
    return by_start(a, b, arg);
}

/* 1 when two files are images of one process (a pid is reused after a
 * wrap): tt__run_same_process, the earlier file first. */
static int same_process(const tt__run_header *a, const tt__run_header *b)
{
    return a->start_ns <= b->start_ns ? tt__run_same_process(a, b) : tt__run_same_process(b, a);
}

/* The row of p's sampler thread, or NULL. */
static row *sampler_row(proc *p)
{
    for (uint32_t i = 0; i < p->nrows; i++)
        if (p->rows[i].how == sampler_how)
            return &p->rows[i];
    return NULL;
}

/* An exec chain (one pid, an image per exec: sh, a shim, the program) is
 * one process to its user. An image left with nothing of its own but its
 * sampler (its main thread went on in the next image, CPU clock and all)
 * is folded into the next image of its pid: its sampler's CPU is added to
 * that one's, and the main thread's life there starts where the chain's
 * first image started, as its CPU clock does. 0 or -ENOMEM. */
static int fold_exec_chains(proc *ps, uint32_t n)
{
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof *idx, by_pid_start, ps);
    uint64_t chain_start = 0;
    for (uint32_t k = 0; k < n; k++) {
        proc *p = &ps[idx[k]], *next = k + 1 < n ? &ps[idx[k + 1]] : NULL;
        if (!k || !same_process(ps[idx[k - 1]].h, p->h) || !ps[idx[k - 1]].folded)
            chain_start = p->h->start_ns;
        for (uint32_t i = 0; chain_start < p->h->start_ns && i < p->nrows; i++)
            if (p->rows[i].tid == p->h->pid && p->rows[i].start > chain_start) {
                p->rows[i].start = chain_start;
                p->rows[i].early = p->rows[i].total > 0 && (uint64_t)p->rows[i].total > life(&p->rows[i]);
            }
        row *own = sampler_row(p), *theirs = next ? sampler_row(next) : NULL;
        if (p->h->state != TT_RUN_PROC_EXECED || !next || !same_process(next->h, p->h) ||
            p->nrows > (own != NULL) || (own && !theirs))
            continue;
        if (own)
            theirs->total = add_ns(theirs->total, own->total);
        p->folded = 1;
    }
    free(idx);
    return 0;
}

/* ---- output ---- */

/* The process's exe as it stored it: bounded by its field, NUL or not. */
static size_t exe_len(const tt__run_header *h) { return strnlen(h->exe, sizeof h->exe); }

static void ms(sink *out, int64_t ns, int width)
{
    if (ns < 0)
        put_fmt(out, "%*s", width, "-");
    else
        put_fmt(out, "%*.3f", width, (double)ns / 1e6);
}


/* A count, or "-" when it is not known (negative). */
static void count(sink *out, int64_t v, int width)
{
    if (v < 0)
        put_fmt(out, "%*s", width, "-");
    else
        put_fmt(out, "%*lld", width, (long long)v);
}

/* The scheduler's columns: wait_ms, vol_cs, invol_cs. */
#define SCHED_HEAD " %12s %8s %8s"
#define SCHED_NAMES "wait_ms", "vol_cs", "invol_cs"
static void sched_cells(sink *out, const row *r)
{
    ms(out, r->wait, 13);
    count(out, r->vcs, 9);
    count(out, r->ivcs, 9);
}

/* The name column: the name, and what it was at the start when it
 * changed, escaped and padded to 24 columns. */
static void name_cell(sink *out, const row *r)
{
    size_t cols = put_escaped(out, r->name, strlen(r->name));
    if (r->name_start[0]) {
        put_cstr(out, " (was ");
        cols += 7 + put_escaped(out, r->name_start, strlen(r->name_start));
        put_cstr(out, ")");
    }
    for (; cols < 24; cols++)
        put(out, " ", 1);
}

/* Children the process reaped that found no record (the file was full):
 * a killed one among them is in no figure but wait4's. */
static uint32_t dropped_children(const tt__run_header *h)
{
    uint32_t over = h->threads_used > h->thread_cap ? h->threads_used - h->thread_cap : 0;
    return h->children_dropped < over ? h->children_dropped : over;
}

/* Threads of the process that found no record (the file was full). */
static uint32_t dropped(const tt__run_header *h)
{
    return (h->threads_used > h->thread_cap ? h->threads_used - h->thread_cap : 0) - dropped_children(h);
}

/* Said of a main thread whose CPU exceeds its recorded life. */
#define EARLY_NOTE " (its CPU counts from exec, before its recorded start)"

static void text_proc(sink *out, const proc *p, int group)
{
    const tt__run_header *h = p->h;
    uint64_t wall = h->end_ns > h->start_ns ? h->end_ns - h->start_ns : 0;
    put_fmt(out, "\n%*spid %u (parent %u) ", (int)p->depth * 2, "", h->pid, h->ppid);
    put_escaped(out, h->exe, exe_len(h));
    put_cstr(out, ": ");
    put_state(out, h);
    put_fmt(out, ", %.3f ms\n", (double)wall / 1e6);
    if (group)
        put_fmt(out, "  %7s  %-24s %12s %12s %12s %12s %7s" SCHED_HEAD "\n", "threads", "name", "user_ms",
                "system_ms", "total_ms", "process_ms", "cpu_%", SCHED_NAMES);
    else
        put_fmt(out, "  %7s  %-24s %12s %12s %12s %12s %7s" SCHED_HEAD "  %s\n", "tid", "name", "user_ms",
                "system_ms", "total_ms", "lifetime_ms", "cpu_%", SCHED_NAMES, "how");
    for (uint32_t i = 0; i < p->nrows; i++) {
        const row *r = &p->rows[i];
        put_fmt(out, "  %7u  ", group ? r->count : r->tid);
        name_cell(out, r);
        ms(out, r->user, 13);
        ms(out, r->sys, 13);
        ms(out, r->total, 13);
        uint64_t l = group ? wall : life(r);
        ms(out, l ? (int64_t)l : -1, 13);
        if (l && r->total >= 0 && !(r->early && !group))
            put_fmt(out, " %7.1f", 100.0 * (double)r->total / (double)l);
        else
            put_fmt(out, " %7s", "-");
        sched_cells(out, r);
        if (group)
            put_cstr(out, "\n");
        else
            put_fmt(out, "  %s%s\n", r->how, r->early ? EARLY_NOTE : "");
    }
    if (dropped(h))
        put_fmt(out, "  %u more threads had no record left: not in the figures above (THREADTIME_RUN_THREADS "
                     "raises the %u records)\n", dropped(h), h->thread_cap);
    if (dropped_children(h))
        put_fmt(out, "  %u children it reaped had no record left: a killed one among them is in no figure above "
                     "(THREADTIME_RUN_THREADS raises the %u records, which threads and reaped children share)\n",
                dropped_children(h), h->thread_cap);
    if (h->sampler_tid && wall)
        put_fmt(out, "  sampler: %llu rounds every %.0f ms, %.3f ms CPU (%.3f %% of one CPU)\n",
                (unsigned long long)h->sampler_rounds, (double)h->interval_ns / 1e6, (double)h->sampler_cpu_ns / 1e6,
                100.0 * (double)h->sampler_cpu_ns / (double)wall);
}

static void json_row(sink *out, const row *r, int group)
{
    if (group)
        put_fmt(out, "{\"threads\":%u,\"name\":", r->count);
    else
        put_fmt(out, "{\"tid\":%u,\"name\":", r->tid);
    put_json_utf8(out, r->name, strlen(r->name));
    if (r->name_start[0]) {
        put_cstr(out, ",\"name_at_start\":");
        put_json_utf8(out, r->name_start, strlen(r->name_start));
    }
    put_fmt(out, ",\"user_ns\":%lld,\"system_ns\":%lld,\"total_ns\":%lld,\"lifetime_ns\":%llu", (long long)r->user,
            (long long)r->sys, (long long)r->total, (unsigned long long)life(r));
    put_fmt(out, ",\"run_wait_ns\":%lld,\"timeslices\":%lld,\"voluntary_switches\":%lld,\"involuntary_switches\":%lld",
            (long long)r->wait, (long long)r->slices, (long long)r->vcs, (long long)r->ivcs);
    if (!group)
        put_fmt(out, ",\"how\":\"%s\"", r->how);
    if (!group && r->early)
        put_cstr(out, ",\"cpu_before_start\":true");
    put_cstr(out, "}");
}

/* The earliest start of the first n processes: time 0 of Chrome's ts and
 * of the samples' t_ns. */
static uint64_t first_start(const proc *ps, uint32_t n)
{
    uint64_t t0 = UINT64_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (ps[i].h->start_ns < t0)
            t0 = ps[i].h->start_ns;
    return t0;
}

/* The first sample of the ring still whole: the oldest slot may be half
 * overwritten. */
static uint64_t samples_from(const tt__run_header *h)
{
    return h->samples_head > h->sample_cap ? h->samples_head - h->sample_cap + 1 : 0;
}

/* Calls fn for each sample of p still in its ring, oldest first, with the
 * previous sample of the same thread (NULL for its first) and the name of
 * its row ("?" for a tid no row has). 0 or -ENOMEM. */
typedef void (*sample_fn)(void *ctx, const tt__run_sample *a, const tt__run_sample *prev, const char *name);
static int walk_samples(const proc *p, sample_fn fn, void *ctx)
{
    /* One pass, with each tid's name and latest sample. */
    uint32_t cap2 = table_cap(2 * p->nrows);
    struct last {
        uint32_t tid;
        const char *name;
        const tt__run_sample *s;
    } *m = calloc(cap2, sizeof *m);
    if (!m)
        return -ENOMEM;
    uint32_t used = 0;
    for (uint32_t r = 0; r < p->nrows; r++) {
        uint32_t j = tid_slot(m, sizeof *m, cap2, p->rows[r].tid);
        used += !m[j].tid;
        m[j].tid = p->rows[r].tid;
        m[j].name = p->rows[r].name;
    }
    const tt__run_header *h = p->h;
    uint64_t head = h->samples_head, cap = h->sample_cap;
    for (uint64_t i = samples_from(h); i < head; i++) {
        const tt__run_sample *a = &p->samples[i % cap];
        if (!a->tid)
            continue;
        uint32_t j = tid_slot(m, sizeof *m, cap2, a->tid);
        if (!m[j].tid) {
            if (2 * (used + 1) > cap2) {
                fn(ctx, a, NULL, "?"); /* more tids than records: no previous kept for this one */
                continue;
            }
            used++;
            m[j] = (struct last){a->tid, "?", NULL};
        }
        fn(ctx, a, m[j].s, m[j].name);
        m[j].s = a;
    }
    free(m);
    return 0;
}

/* The CPU rate of a thread from its previous sample to a (0..100 per CPU),
 * or -1 when there is none to measure from. */
static double sample_rate(const tt__run_sample *a, const tt__run_sample *prev)
{
    if (!prev || a->t_ns <= prev->t_ns || a->total_ns < prev->total_ns)
        return -1;
    return 100.0 * ((double)a->total_ns - (double)prev->total_ns) / (double)(a->t_ns - prev->t_ns);
}

/* What a walk over a process's samples writes to: the Chrome counters
 * (first: no event written yet) and the CSV series. */
typedef struct sample_ctx {
    sink *out;
    int *first;
    uint64_t t0;
    uint32_t pid;
} sample_ctx;

/* CPU rate per thread between consecutive samples of that thread (an idle
 * thread's samples are rounds apart: the sampler backs off), drawn at the
 * earlier one. */
static void chrome_counter(void *ctx, const tt__run_sample *a, const tt__run_sample *prev, const char *tname)
{
    sample_ctx *c = ctx;
    double rate = sample_rate(a, prev);
    if (rate < 0)
        return;
    char name[64];
    int len = snprintf(name, sizeof name, "cpu %% %u %s", a->tid, tname);
    put_fmt(c->out, "%s{\"ph\":\"C\",\"name\":", *c->first ? "" : ",\n");
    *c->first = 0;
    put_json_utf8(c->out, name, len < (int)sizeof name ? (size_t)len : sizeof name - 1);
    put_fmt(c->out, ",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"args\":{\"cpu_percent\":%.1f}}", c->pid, a->tid,
            (double)(prev->t_ns - c->t0) / 1e3, rate);
}

static int chrome(sink *out, proc *ps, const uint32_t *order, uint32_t n)
{
    uint64_t t0 = first_start(ps, n);
    put_cstr(out, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    int first = 1;
#define SEP() (first ? (first = 0, "") : ",\n")
    for (uint32_t k = 0; k < n; k++) {
        proc *p = &ps[order[k]];
        const tt__run_header *h = p->h;
        put_fmt(out, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":", SEP(), h->pid);
        put_json_utf8(out, h->exe, exe_len(h));
        put_cstr(out, "}}");
        if (dropped(h))
            put_fmt(out, "%s{\"ph\":\"i\",\"s\":\"p\",\"name\":\"%u threads had no record\",\"pid\":%u,"
                         "\"ts\":%.3f,\"args\":{\"dropped_threads\":%u}}",
                    SEP(), dropped(h), h->pid, (double)(h->start_ns - t0) / 1e3, dropped(h));
        if (dropped_children(h))
            put_fmt(out, "%s{\"ph\":\"i\",\"s\":\"p\",\"name\":\"%u reaped children had no record\",\"pid\":%u,"
                         "\"ts\":%.3f,\"args\":{\"dropped_children\":%u}}",
                    SEP(), dropped_children(h), h->pid, (double)(h->start_ns - t0) / 1e3, dropped_children(h));
        for (uint32_t i = 0; i < p->nrows; i++) {
            const row *r = &p->rows[i];
            put_fmt(out, "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":", SEP(),
                    h->pid, r->tid);
            put_json_utf8(out, r->name, strlen(r->name));
            put_cstr(out, "}}");
            uint64_t s = r->start ? r->start : h->start_ns, e = r->end > s ? r->end : s;
            put_fmt(out, "%s{\"ph\":\"X\",\"name\":", SEP());
            put_json_utf8(out, r->name, strlen(r->name));
            put_fmt(out, ",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"user_ms\":%.3f,"
                         "\"system_ms\":%.3f,\"total_ms\":%.3f,\"how\":\"%s\"",
                    h->pid, r->tid, (double)(s - t0) / 1e3, (double)(e - s) / 1e3, (double)r->user / 1e6,
                    (double)r->sys / 1e6, (double)r->total / 1e6, r->how);
            /* The scheduler's figures where they were read. */
            if (r->wait >= 0)
                put_fmt(out, ",\"wait_ms\":%.3f,\"voluntary_switches\":%lld,\"involuntary_switches\":%lld",
                        (double)r->wait / 1e6, (long long)r->vcs, (long long)r->ivcs);
            put_cstr(out, "}}");
        }
        sample_ctx c = {out, &first, t0, h->pid};
        if (walk_samples(p, chrome_counter, &c) != 0)
            return -ENOMEM;
    }
    put_cstr(out, "\n]}\n");
#undef SEP
    return 0;
}

/* What wait4 counted that no figure above holds, and where it can be,
 * from what the recording says: the rest of exit() and the kernel's
 * teardown of every process that ended (always there), what a process
 * that did not exit ran after its last sample, threads that found no
 * record, what ran after the last /proc sample of a process watched from
 * outside. */
static void unseen(sink *out, const proc *ps, const uint32_t *order, uint32_t n, double ms_)
{
    uint32_t killed = 0, nofile = 0, drops = 0, child_drops = 0, outside = 0;
    for (uint32_t k = 0; k < n; k++) {
        const tt__run_header *h = ps[order[k]].h;
        outside += (h->flags & TT_RUN_FLAG_OUTSIDE) != 0;
        killed += !(h->flags & TT_RUN_FLAG_OUTSIDE) && h->state == TT_RUN_PROC_RUNNING && !h->file_errno;
        nofile += !(h->flags & TT_RUN_FLAG_OUTSIDE) && h->state == TT_RUN_PROC_RUNNING && h->file_errno;
        drops += dropped(h);
        child_drops += dropped_children(h);
    }
    put_fmt(out, "%.3f ms of it no read above saw: the end of exit() and the kernel's teardown of %u process%s",
            ms_, n, n == 1 ? "" : "es");
    if (killed)
        put_fmt(out, "; what %u process%s that did not exit ran after the last sample", killed,
                killed == 1 ? "" : "es");
    if (nofile)
        put_fmt(out, "; what %u process%s whose file could not be made or grown ran", nofile,
                nofile == 1 ? "" : "es");
    if (drops)
        put_fmt(out, "; %u threads that had no record", drops);
    if (child_drops)
        put_fmt(out, "; any killed one of %u reaped children that had no record", child_drops);
    if (outside)
        put_fmt(out, "; what ran after the last /proc sample");
    put_cstr(out, "\n");
}

/* The whole command's scheduler figures: its threads' waits and switches
 * summed (the sampler's own left out: it is threadtime's), and how many
 * threads have no wait (sampled only, shorter than TT_RUN_WAIT_MIN_NS, or
 * read before these were kept) and no switch counts. */
typedef struct cmd_sched {
    int64_t wait, slices, vcs, ivcs;
    uint32_t unknown, no_switches;
    uint32_t known, switched; /* threads in the sums: none makes a sum unknown, not 0 */
} cmd_sched;

/* A sum over known figures, or -1 when no thread's figure was known. */
static int64_t known_sum(int64_t sum, uint32_t known) { return known ? sum : -1; }

static void cmd_sched_add(cmd_sched *c, const proc *p)
{
    for (uint32_t i = 0; i < p->nrows; i++) {
        const row *r = &p->rows[i];
        if (r->how == sampler_how)
            continue;
        if (r->wait < 0 || r->slices < 0) {
            c->unknown += r->count;
        } else {
            c->wait = add_ns(c->wait, r->wait);
            c->slices = add_ns(c->slices, r->slices);
            c->known += r->count;
        }
        if (r->vcs < 0 || r->ivcs < 0) {
            c->no_switches += r->count;
        } else {
            c->vcs = add_ns(c->vcs, r->vcs);
            c->ivcs = add_ns(c->ivcs, r->ivcs);
            c->switched += r->count;
        }
    }
}

/* Why the cgroup's throttling over the run is not known, or NULL. */
static const char *cgroup_missing(const tt__runset_header *h)
{
    if (h->cgroup_error == 0)
        return NULL;
    if (h->cgroup_error < 0)
        return "not in this recording (made before threadtime kept it)";
    if (h->cgroup_error == ENOENT)
        return "no CPU controller visible in /proc/self/cgroup and /proc/self/mountinfo";
    if (h->cgroup_error == ESTALE)
        return "its counters went back during the run (the group was made again)";
    return strerror(h->cgroup_error);
}

static void report_csv(sink *out, const tt__run_set *s, const proc *ps, const uint32_t *order, uint32_t n, int group,
                       const proc *all, const cmd_sched *c)
{
    put_cstr(out, group ? "pid,ppid,threads,name,user_ns,system_ns,total_ns,"
                     : "pid,ppid,tid,name,name_at_start,user_ns,system_ns,total_ns,lifetime_ns,how,");
    put_cstr(out, "run_wait_ns,timeslices,voluntary_switches,involuntary_switches,cgroup_throttled_ns\n");
    uint32_t threads = 0;
    for (uint32_t k = 0; k < n; k++) {
        const proc *p = &ps[order[k]];
        for (uint32_t i = 0; i < p->nrows; i++) {
            const row *r = &p->rows[i];
            threads += r->count;
            put_fmt(out, "%u,%u,%u,", p->h->pid, p->h->ppid, group ? r->count : r->tid);
            put_csv_str(out, r->name, strlen(r->name));
            if (!group) {
                put_cstr(out, ",");
                put_csv_str(out, r->name_start, strlen(r->name_start));
            }
            put_fmt(out, ",%lld,%lld,%lld", (long long)r->user, (long long)r->sys, (long long)r->total);
            if (!group)
                put_fmt(out, ",%llu,%s", (unsigned long long)life(r), r->how);
            put_fmt(out, ",%lld,%lld,%lld,%lld,\n", (long long)r->wait, (long long)r->slices, (long long)r->vcs,
                    (long long)r->ivcs);
        }
        /* Threads that found no record: one row, their count where a
         * group's count goes, no figures. */
        if (dropped(p->h) && group)
            put_fmt(out, "%u,%u,%u,(no record),-1,-1,-1,-1,-1,-1,-1,\n", p->h->pid, p->h->ppid, dropped(p->h));
        else if (dropped(p->h))
            put_fmt(out, "%u,%u,,(no record),,-1,-1,-1,0,dropped %u threads,-1,-1,-1,-1,\n", p->h->pid, p->h->ppid,
                    dropped(p->h));
        /* Reaped children that found no record: their own row. */
        if (dropped_children(p->h) && group)
            put_fmt(out, "%u,%u,%u,(reaped children with no record),-1,-1,-1,-1,-1,-1,-1,\n", p->h->pid, p->h->ppid,
                    dropped_children(p->h));
        else if (dropped_children(p->h))
            put_fmt(out, "%u,%u,,(reaped children with no record),,-1,-1,-1,0,dropped %u children,-1,-1,-1,-1,\n",
                    p->h->pid, p->h->ppid, dropped_children(p->h));
    }
    /* --group: the totals over all processes, with no pid. */
    for (uint32_t i = 0; all && i < all->nrows; i++) {
        const row *r = &all->rows[i];
        put_fmt(out, ",,%u,", r->count);
        put_csv_str(out, r->name, strlen(r->name));
        put_fmt(out, ",%lld,%lld,%lld,%lld,%lld,%lld,%lld,\n", (long long)r->user, (long long)r->sys,
                (long long)r->total, (long long)r->wait, (long long)r->slices, (long long)r->vcs, (long long)r->ivcs);
    }
    /* The whole command, with no pid: its wait4 (CPU and switches), its
     * threads' waits summed, its cgroup's throttling over the run. */
    const tt__runset_header *h = &s->h;
    const char *why = cgroup_missing(h);
    if (group)
        put_fmt(out, ",,%u,(command)", threads);
    else
        put_cstr(out, ",,,(command),");
    put_fmt(out, ",%lld,%lld,%lld", (long long)h->rusage_user_ns, (long long)h->rusage_system_ns,
            (long long)add_ns(h->rusage_user_ns, h->rusage_system_ns));
    if (!group) {
        char how[256];
        snprintf(how, sizeof how, "wait4%s%.0u%s%s%s", c->unknown ? "; run_wait_ns and timeslices leave out " : "",
                 c->unknown, c->unknown ? " threads not read" : "", why ? "; cgroup throttling not available: " : "",
                 why ? why : "");
        put_cstr(out, ",,");
        put_csv_str(out, how, strlen(how));
    }
    put_fmt(out, ",%lld,%lld,%lld,%lld,", (long long)known_sum(c->wait, c->known),
            (long long)known_sum(c->slices, c->known), (long long)h->rusage_voluntary, (long long)h->rusage_involuntary);
    if (!why)
        put_fmt(out, "%lld", (long long)h->cgroup_throttled_ns);
    put_cstr(out, "\n");
}

static void series_row(void *ctx, const tt__run_sample *a, const tt__run_sample *prev, const char *name)
{
    sample_ctx *c = ctx;
    put_fmt(c->out, "%u,%u,", c->pid, a->tid);
    put_csv_str(c->out, name, strlen(name));
    put_fmt(c->out, ",%u,%lld,%lld,", a->round, (long long)(a->t_ns - c->t0), (long long)a->total_ns);
    double rate = sample_rate(a, prev);
    if (rate >= 0)
        put_fmt(c->out, "%.1f", rate);
    put_cstr(c->out, "\n");
}

/* The sampler's time series as CSV: one row per sample, t_ns from the
 * earliest process's start (as in JSON), and the thread's CPU rate since
 * its previous sample (empty for its first). */
static int report_series(sink *out, const proc *ps, const uint32_t *order, uint32_t n)
{
    put_cstr(out, "pid,tid,name,round,t_ns,total_ns,cpu_percent\n");
    uint64_t t0 = first_start(ps, n);
    for (uint32_t k = 0; k < n; k++) {
        sample_ctx c = {out, NULL, t0, ps[order[k]].h->pid};
        if (walk_samples(&ps[order[k]], series_row, &c) != 0)
            return -ENOMEM;
    }
    return 0;
}

static void report_json(sink *out, const tt__run_set *s, const proc *ps, const uint32_t *order, uint32_t n, int group,
                        int64_t sum, const proc *all, const cmd_sched *c)
{
    const tt__runset_header *h0 = &s->h;
    put_cstr(out, "{\"command\":");
    put_json_utf8(out, s->cmd ? s->cmd : "", s->cmd ? strlen(s->cmd) : 0);
    put_fmt(out, ",\"exit_status\":%d,\"rusage\":{\"user_ns\":%lld,\"system_ns\":%lld,\"voluntary_switches\":%lld,"
                 "\"involuntary_switches\":%lld},\"threads_total_ns\":%lld,",
            h0->exit_status, (long long)h0->rusage_user_ns, (long long)h0->rusage_system_ns,
            (long long)h0->rusage_voluntary, (long long)h0->rusage_involuntary, (long long)sum);
    /* The command as a whole: its threads' scheduler figures summed, and
     * its cgroup's throttling over the run. */
    put_fmt(out, "\"run_wait_ns\":%lld,\"timeslices\":%lld,\"voluntary_switches\":%lld,\"involuntary_switches\":%lld,"
                 "\"run_wait_unknown_threads\":%u,\"switches_unknown_threads\":%u,\"cgroup\":",
            (long long)known_sum(c->wait, c->known), (long long)known_sum(c->slices, c->known),
            (long long)known_sum(c->vcs, c->switched), (long long)known_sum(c->ivcs, c->switched), c->unknown,
            c->no_switches);
    const char *why = cgroup_missing(h0);
    if (why) {
        put_cstr(out, "{\"available\":false,\"why\":");
        put_json_str(out, why, strlen(why));
        put_cstr(out, "}");
    } else {
        put_fmt(out, "{\"available\":true,\"version\":%d,\"quota_us\":%lld,\"period_us\":%lld,\"periods\":%lld,"
                     "\"throttled_periods\":%lld,\"throttled_ns\":%lld}",
                h0->cgroup_version, (long long)h0->cgroup_quota_us, (long long)h0->cgroup_period_us,
                (long long)h0->cgroup_periods, (long long)h0->cgroup_throttled_periods,
                (long long)h0->cgroup_throttled_ns);
    }
    put_cstr(out, ",\"processes\":[");
    uint64_t t0 = first_start(ps, n);
    for (uint32_t k = 0; k < n; k++) {
        const proc *p = &ps[order[k]];
        const tt__run_header *h = p->h;
        put_fmt(out, "%s\n{\"pid\":%u,\"ppid\":%u,\"depth\":%u,\"exe\":", k ? "," : "", h->pid, h->ppid, p->depth);
        put_json_utf8(out, h->exe, exe_len(h));
        put_cstr(out, ",\"state\":\"");
        put_state(out, h);
        put_cstr(out, "\"");
        put_fmt(out, ",\"exited\":%s,\"wall_ns\":%llu,\"dropped_threads\":%u,\"dropped_children\":%u,"
                     "\"sampler\":{\"tid\":%u,"
                     "\"interval_ns\":%llu,\"rounds\":%llu,\"cpu_ns\":%llu},\"%s\":[",
                h->state == TT_RUN_PROC_EXITED ? "true" : "false",
                (unsigned long long)(h->end_ns > h->start_ns ? h->end_ns - h->start_ns : 0),
                dropped(h), dropped_children(h), h->sampler_tid,
                (unsigned long long)h->interval_ns, (unsigned long long)h->sampler_rounds,
                (unsigned long long)h->sampler_cpu_ns, group ? "groups" : "threads");
        for (uint32_t i = 0; i < p->nrows; i++) {
            put_cstr(out, i ? ",\n " : "\n ");
            json_row(out, &p->rows[i], group);
        }
        /* The sampler's time series: each thread's CPU total at each round,
         * t_ns from the earliest process's start. */
        put_cstr(out, "],\"samples\":[");
        int first = 1;
        for (uint64_t i = samples_from(h); i < h->samples_head; i++) {
            const tt__run_sample *a = &p->samples[i % h->sample_cap];
            if (!a->tid)
                continue;
            put_fmt(out, "%s{\"t_ns\":%lld,\"tid\":%u,\"round\":%u,\"total_ns\":%lld}", first ? "\n " : ",\n ",
                    (long long)(a->t_ns - t0), a->tid, a->round, (long long)a->total_ns);
            first = 0;
        }
        put_cstr(out, "]}");
    }
    put_cstr(out, "]");
    for (uint32_t i = 0; all && i < all->nrows; i++) {
        const row *r = &all->rows[i];
        put_fmt(out, "%s\n {\"threads\":%u,\"processes\":%u,\"name\":", i ? "," : ",\"groups\":[", r->count,
                r->procs);
        put_json_utf8(out, r->name, strlen(r->name));
        put_fmt(out, ",\"user_ns\":%lld,\"system_ns\":%lld,\"total_ns\":%lld,\"run_wait_ns\":%lld,\"timeslices\":%lld,"
                     "\"voluntary_switches\":%lld,\"involuntary_switches\":%lld}%s",
                (long long)r->user, (long long)r->sys, (long long)r->total, (long long)r->wait, (long long)r->slices,
                (long long)r->vcs, (long long)r->ivcs, i + 1 == all->nrows ? "]" : "");
    }
    put_cstr(out, "}\n");
}

/* --group's totals over all processes: every process's groups folded
 * again by name (make's three cc1 processes: one cc1 row of 3 threads in 3
 * processes), into all. 0 or -ENOMEM. */
static int group_all(const proc *ps, const uint32_t *order, uint32_t n, proc *all)
{
    uint32_t rows = 0;
    for (uint32_t k = 0; k < n; k++)
        rows += ps[order[k]].nrows;
    *all = (proc){.rows = calloc(rows ? rows : 1, sizeof(row))};
    if (!all->rows)
        return -ENOMEM;
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t i = 0; i < ps[order[k]].nrows; i++) {
            row r = ps[order[k]].rows[i];
            r.procs = 1;
            r.mixed = 0;
            all->rows[all->nrows++] = r;
        }
    return group_rows(all);
}

/* The whole command's wait for a CPU and its cgroup's throttling, then
 * its switches, after the line on its CPU. */
static void text_command(sink *out, const tt__runset_header *h, const cmd_sched *c)
{
    if (!c->known)
        put_fmt(out, "the wait for a CPU was not read for any thread (%u)", c->unknown);
    else
        put_fmt(out, "all threads waited %.3f ms for a CPU", (double)c->wait / 1e6);
    if (c->known && c->unknown)
        put_fmt(out, " (not counting %u thread%s whose wait was not read)", c->unknown, c->unknown == 1 ? "" : "s");
    /* The group's throttling is its own figure, not a part of the wait: it
     * counts every process of the group, the command's sleeping ones too. */
    const char *why = cgroup_missing(h);
    if (why) {
        put_fmt(out, "; cgroup throttling not available: %s\n", why);
    } else {
        put_fmt(out, "; its cgroup was throttled %.3f ms over the run (v%d, ", (double)h->cgroup_throttled_ns / 1e6,
                h->cgroup_version);
        if (h->cgroup_quota_us < 0)
            put_cstr(out, "no CPU quota)\n");
        else
            put_fmt(out, "quota %.3f ms per %.3f ms: %lld of %lld periods throttled)\n",
                    (double)h->cgroup_quota_us / 1e3, (double)h->cgroup_period_us / 1e3,
                    (long long)h->cgroup_throttled_periods, (long long)h->cgroup_periods);
    }
    if (c->switched)
        put_fmt(out, "context switches: %lld voluntary, %lld involuntary", (long long)c->vcs, (long long)c->ivcs);
    else
        put_fmt(out, "context switches: not read for any thread (%u)", c->no_switches);
    if (c->switched && c->no_switches)
        put_fmt(out, " (not counting %u thread%s not read)", c->no_switches, c->no_switches == 1 ? "" : "s");
    if (h->rusage_voluntary >= 0)
        put_fmt(out, "; the command's own rusage (wait4): %lld voluntary, %lld involuntary",
                (long long)h->rusage_voluntary, (long long)h->rusage_involuntary);
    put_cstr(out, "\n");
}

static void text_all(sink *out, const proc *all)
{
    put_fmt(out, "\nall processes, by thread name:\n  %7s  %9s  %-24s %12s %12s %12s" SCHED_HEAD "\n", "threads",
            "processes", "name", "user_ms", "system_ms", "total_ms", SCHED_NAMES);
    for (uint32_t i = 0; i < all->nrows; i++) {
        const row *r = &all->rows[i];
        put_fmt(out, "  %7u  %9u  ", r->count, r->procs);
        name_cell(out, r);
        ms(out, r->user, 13);
        ms(out, r->sys, 13);
        ms(out, r->total, 13);
        sched_cells(out, r);
        put_cstr(out, "\n");
    }
}

int tt__run_report(const tt__run_set *s, enum out_format fmt, int group, sink *out)
{
    uint32_t n = s->nprocs;
    proc *ps = calloc(n ? n : 1, sizeof *ps);
    uint32_t *order = calloc(n ? n : 1, sizeof *order);
    int rc = ps && order ? 0 : -ENOMEM;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        proc *p = &ps[i];
        p->h = (const tt__run_header *)s->procs[i].data;
        p->threads = (const tt__run_thread *)(s->procs[i].data + TT_RUN_HEADER_SIZE);
        p->samples = (const tt__run_sample *)((const unsigned char *)p->threads +
                                              (size_t)p->h->thread_cap * TT_RUN_THREAD_SIZE);
        build_rows(p);
        if (!p->rows)
            rc = -ENOMEM;
    }
    if (rc == 0)
        rc = fold_exec_chains(ps, n);
    uint32_t m = 0; /* the processes shown, moved to the front */
    cmd_sched cs = {0};
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        proc p = ps[i];
        ps[i].rows = NULL;
        /* A fork child's image that only called exec, or one folded into the next. */
        if (p.folded || (p.nrows == 0 && p.h->state == TT_RUN_PROC_EXECED)) {
            free(p.rows);
            continue;
        }
        ps[m] = p;
        cmd_sched_add(&cs, &ps[m]); /* before --group makes a group of an unknown and a known figure unknown */
        if (group && (rc = group_rows(&ps[m])) != 0) {
            m++;
            break;
        }
        m++;
    }
    int64_t ordered = rc == 0 ? order_procs(ps, m, order) : 0;
    if (ordered < 0)
        rc = (int)ordered;
    n = ordered > 0 ? (uint32_t)ordered : 0;
    int64_t sum = 0;
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t i = 0; i < ps[order[k]].nrows; i++)
            sum = add_ns(sum, ps[order[k]].rows[i].total);
    int64_t rus = add_ns(s->h.rusage_user_ns, s->h.rusage_system_ns);
    proc all = {0};
    if (rc == 0 && group)
        rc = group_all(ps, order, n, &all);
    if (rc == 0) {
        switch (fmt) {
        case FMT_TEXT:
            put_cstr(out, "threadtime run: ");
            put_escaped(out, s->cmd ? s->cmd : "", s->cmd ? strlen(s->cmd) : 0);
            put_cstr(out, "\n");
            for (uint32_t k = 0; k < n; k++)
                text_proc(out, &ps[order[k]], group);
            if (group && n > 1)
                text_all(out, &all);
            put_fmt(out, "\nall threads: %.3f ms CPU; the command's own rusage (wait4): %.3f ms "
                         "(user %.3f, system %.3f); exit status %d\n",
                    (double)sum / 1e6, (double)rus / 1e6, (double)s->h.rusage_user_ns / 1e6,
                    (double)s->h.rusage_system_ns / 1e6, s->h.exit_status);
            if (rus > sum)
                unseen(out, ps, order, n, (double)(rus - sum) / 1e6);
            text_command(out, &s->h, &cs);
            break;
        case FMT_CSV:
            report_csv(out, s, ps, order, n, group, group ? &all : NULL, &cs);
            break;
        case FMT_JSON:
            report_json(out, s, ps, order, n, group, sum, group ? &all : NULL, &cs);
            break;
        case FMT_CHROME:
            rc = chrome(out, ps, order, n);
            break;
        case FMT_CSV_SERIES:
            rc = report_series(out, ps, order, n);
            break;
        }
    }
    sink_flush(out);
    for (uint32_t i = 0; ps && i < s->nprocs; i++)
        free(ps[i].rows);
    free(all.rows);
    free(ps);
    free(order);
    return rc;
}
