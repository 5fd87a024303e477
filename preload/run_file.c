/* The per-process recording file of `threadtime run` (see run_file.h). */
#include "run_file.h"
#include "read_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

size_t tt_run_file_bytes(uint32_t thread_cap, uint32_t sample_cap)
{
    return TT_RUN_HEADER_SIZE + (size_t)thread_cap * TT_RUN_THREAD_SIZE + (size_t)sample_cap * TT_RUN_SAMPLE_SIZE;
}

uint64_t tt_run_now(void) { return (uint64_t)tt__read_clock(CLOCK_MONOTONIC); }
uint64_t tt_run_now_real(void) { return (uint64_t)tt__read_clock(CLOCK_REALTIME); }

/* Appends the decimal digits of v; no snprintf, which a fork child of a
 * threaded process must not call. */
static char *put_u32(char *p, uint32_t v)
{
    char tmp[10];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* The file of an image that exec replaced stays as its image left it; this
 * says why it stopped. A plain pwrite: the old mapping died with the image. */
static void mark_execed(int fd)
{
    uint32_t st = TT_RUN_PROC_EXECED;
    uint32_t cur = 0;
    if (pread(fd, &cur, sizeof cur, offsetof(tt_run_header, state)) == sizeof cur && cur == TT_RUN_PROC_RUNNING)
        (void)!pwrite(fd, &st, sizeof st, offsetof(tt_run_header, state));
}

int tt_run_file_create(const char *dir, pid_t pid, pid_t ppid, uint32_t thread_cap, uint32_t sample_cap,
                       tt_run_file *out)
{
    size_t dlen = strlen(dir);
    char path[4096];
    if (dlen + 32 > sizeof path || thread_cap == 0 || sample_cap == 0)
        return -EINVAL;
    memcpy(path, dir, dlen);
    int fd = -1;
    for (uint32_t n = 0; n < 1000 && fd < 0; n++) {
        char *p = path + dlen;
        *p++ = '/';
        p = put_u32(p, (uint32_t)pid);
        *p++ = '-';
        p = put_u32(p, n);
        memcpy(p, ".ttrun", 7);
        /* In the private directory threadtime run made (mkdtemp, 0700);
         * O_EXCL|O_NOFOLLOW and 0600 all the same, as every file the core
         * creates (docs/security.md). Not through tt__file_create: it
         * allocates and formats, which the child of a threaded fork must
         * not, and its random names would lose what these say: the pid
         * and the order of the images one process exec'd, the EEXIST
         * pointing at the file of the image this one replaced. */
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            return -errno;
        if (fd < 0) {
            int old = open(path, O_RDWR | O_CLOEXEC);
            if (old >= 0) {
                mark_execed(old);
                close(old);
            }
        }
    }
    if (fd < 0)
        return -EEXIST;
    size_t bytes = tt_run_file_bytes(thread_cap, sample_cap);
    int rc = posix_fallocate(fd, 0, (off_t)bytes);
    if (rc) {
        unlink(path);
        close(fd);
        return -rc;
    }
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    rc = m == MAP_FAILED ? -errno : 0;
    close(fd); /* the mapping keeps the file */
    if (rc) {
        unlink(path);
        return rc;
    }
    tt_run_header *h = m;
    h->version = TT_RUN_VERSION;
    h->header_size = TT_RUN_HEADER_SIZE;
    h->thread_size = TT_RUN_THREAD_SIZE;
    h->sample_size = TT_RUN_SAMPLE_SIZE;
    h->thread_cap = thread_cap;
    h->sample_cap = sample_cap;
    h->pid = (uint32_t)pid;
    h->ppid = (uint32_t)ppid;
    h->start_ns = tt_run_now();
    h->start_real_ns = tt_run_now_real();
    /* The magic last: a reader treats a file without it as never started. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(h->magic, TT_RUN_MAGIC, TT_RUN_MAGIC_LEN);
    out->hdr = h;
    out->threads = (tt_run_thread *)((char *)m + TT_RUN_HEADER_SIZE);
    out->samples = (tt_run_sample *)((char *)out->threads + (size_t)thread_cap * TT_RUN_THREAD_SIZE);
    out->bytes = bytes;
    return 0;
}

void tt_run_file_close(tt_run_file *f)
{
    if (f && f->hdr)
        munmap(f->hdr, f->bytes);
    if (f)
        f->hdr = NULL;
}

tt_run_thread *tt_run_thread_take(tt_run_file *f)
{
    /* Relaxed: the slot is this caller's alone; its state store publishes it. */
    uint32_t i = atomic_fetch_add_explicit(&f->hdr->threads_used, 1, memory_order_relaxed);
    return i < f->hdr->thread_cap ? &f->threads[i] : NULL;
}

int tt_run_thread_claim(tt_run_thread *t, uint32_t from)
{
    /* Acquire: the winner reads the fields the previous state published. */
    return atomic_compare_exchange_strong_explicit(&t->state, &from, TT_RUN_WRITING, memory_order_acquire,
                                                   memory_order_relaxed);
}

void tt_run_thread_publish(tt_run_thread *t, uint32_t to)
{
    /* Release: a reader that sees the state sees the fields. */
    atomic_store_explicit(&t->state, to, memory_order_release);
}

void tt_run_sample_add(tt_run_file *f, uint64_t t_ns, uint32_t tid, uint32_t round, int64_t total_ns)
{
    uint64_t head = atomic_load_explicit(&f->hdr->samples_head, memory_order_relaxed);
    tt_run_sample *s = &f->samples[head % f->hdr->sample_cap];
    s->t_ns = t_ns;
    s->tid = tid;
    s->round = round;
    s->total_ns = total_ns;
    /* Release: a reader that counts the sample sees it whole. */
    atomic_store_explicit(&f->hdr->samples_head, head + 1, memory_order_release);
}

int tt_run_file_check(const void *buf, size_t n, const char **why)
{
    const tt_run_header *h = buf;
    if (n < TT_RUN_HEADER_SIZE || memcmp(h->magic, TT_RUN_MAGIC, TT_RUN_MAGIC_LEN) != 0) {
        *why = "not a threadtime run file (or never started)";
        return -EINVAL;
    }
    if (h->version != TT_RUN_VERSION || h->header_size != TT_RUN_HEADER_SIZE ||
        h->thread_size != TT_RUN_THREAD_SIZE || h->sample_size != TT_RUN_SAMPLE_SIZE) {
        *why = "unknown run file version or layout";
        return -EINVAL;
    }
    if (h->thread_cap == 0 || h->sample_cap == 0 || h->thread_cap > (1u << 24) || h->sample_cap > (1u << 26) ||
        tt_run_file_bytes(h->thread_cap, h->sample_cap) > n) {
        *why = "run file shorter than its header says";
        return -EINVAL;
    }
    return 0;
}
