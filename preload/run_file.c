/* The per-process recording file of `threadtime run` (see run_file.h). */
#include "run_file.h"
#include "read_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

/* statfs's f_type of pidfs (include/uapi/linux/magic.h; older headers
 * lack it). */
#define TT_PIDFS_MAGIC 0x50494446

/* Blocks reserved at creation: the header and the records that fill the
 * page after it, in one call, so a process with up to this many threads (a
 * shell, a compiler) makes no other reservation. Samples get blocks when
 * the first is written, a page of them: most processes have no sampler.
 * (A page reserved on tmpfs costs ~3.5 us here.) */
#define FIRST_RECORDS ((4096 - TT_RUN_HEADER_SIZE % 4096) / TT_RUN_THREAD_SIZE)
#define FIRST_SAMPLES (4096 / TT_RUN_SAMPLE_SIZE)

/* Bytes of a file in a layout of thread records of tsize bytes. */
static size_t layout_bytes(uint32_t tsize, uint32_t thread_cap, uint32_t sample_cap)
{
    return TT_RUN_HEADER_SIZE + (size_t)thread_cap * tsize + (size_t)sample_cap * TT_RUN_SAMPLE_SIZE;
}

size_t tt__run_file_bytes(uint32_t thread_cap, uint32_t sample_cap)
{
    return layout_bytes(TT_RUN_THREAD_SIZE, thread_cap, sample_cap);
}

uint64_t tt__run_now(void) { return (uint64_t)tt__read_clock(CLOCK_MONOTONIC); }
uint64_t tt__run_now_real(void) { return (uint64_t)tt__read_clock(CLOCK_REALTIME); }

uint64_t tt__run_boot_offset(void)
{
    int64_t d = tt__read_clock(CLOCK_BOOTTIME) - tt__read_clock(CLOCK_MONOTONIC);
    return (uint64_t)(d > 0 ? d : 0) + 1;
}

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

/* The decimal number at p (0 when none). */
static uint64_t get_u64(const char *p)
{
    uint64_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    return v;
}

uint64_t tt__run_stat_start(const char *buf, char *state, uint32_t *ppid)
{
    /* The name (field 2) may hold spaces and parentheses: the fields after
     * it start at its last ')', one space before each. */
    const char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || !p[2])
        return 0;
    p += 2; /* field 3, the state */
    if (state)
        *state = *p;
    for (int field = 3; field < 22; field++) {
        if (field == 4 && ppid)
            *ppid = (uint32_t)get_u64(p);
        if (!(p = strchr(p, ' ')))
            return 0;
        p++;
    }
    return get_u64(p);
}

uint64_t tt__run_proc_start(pid_t pid)
{
    char path[32] = "/proc/", buf[1024];
    memcpy(put_u32(path + 6, (uint32_t)pid), "/stat", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    return tt__run_stat_start(buf, NULL, NULL);
}

uint64_t tt__run_pidfd_ino(int pidfd)
{
    /* 64-bit only: a 32-bit kernel gives pidfs inodes of 32 bits, unique
     * only with their generation. */
#if UINTPTR_MAX > 0xffffffffu
    struct statfs fs;
    struct stat st;
    if (fstatfs(pidfd, &fs) == 0 && fs.f_type == TT_PIDFS_MAGIC && fstat(pidfd, &st) == 0)
        return (uint64_t)st.st_ino;
#else
    (void)pidfd;
#endif
    return 0;
}

uint64_t tt__run_proc_ino(pid_t pid)
{
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0)
        return 0;
    uint64_t ino = tt__run_pidfd_ino(fd);
    close(fd);
    return ino;
#else
    (void)pid;
    return 0;
#endif
}

void tt__run_proc_key(pid_t pid, int filtered, uint64_t *proc_start, uint64_t *proc_ino)
{
    *proc_ino = filtered ? 0 : tt__run_proc_ino(pid);
    *proc_start = *proc_ino ? 0 : tt__run_proc_start(pid);
}

int tt__run_same_key(uint64_t start_a, uint64_t ino_a, uint64_t start_b, uint64_t ino_b)
{
    if (ino_a && ino_b)
        return ino_a == ino_b;
    return !start_a || !start_b || start_a == start_b;
}

int tt__run_same_process(const tt__run_header *earlier, const tt__run_header *later)
{
    const tt__run_header *e = earlier, *l = later;
    if (e->pid != l->pid)
        return 0;
    if ((e->proc_ino && l->proc_ino) || (e->proc_start && l->proc_start) || (!e->proc_ino && !e->proc_start) ||
        (!l->proc_ino && !l->proc_start))
        return tt__run_same_key(e->proc_start, e->proc_ino, l->proc_start, l->proc_ino);
    /* One keyed by its pidfs inode alone, the other by its start alone
     * (made under a seccomp filter, or where pidfd_open failed): the keys
     * say nothing of each other. An image that exited was replaced by
     * nothing. And a later image of the same process belongs to a process
     * that had started by the time the earlier image made its file; one
     * that started after was another that got the pid again. proc_start
     * counts clock ticks since boot, suspend included, rounded down: in
     * CLOCK_MONOTONIC it is at most the true start, less the time suspended
     * as the earlier image recorded it (at least as of the later process's
     * start if that was before, at most if after), so this never parts two
     * images of one process; two processes whose starts fall within a tick
     * (10 ms) of the earlier image's file stay taken for one. A file from
     * before the offset was kept takes the reader's, which holds for a
     * reader in the same boot with no suspend since. A later image
     * keyed by its inode alone (its start could not be read) cannot be
     * placed in time: taken for the same process, as before. */
    if (e->state == TT_RUN_PROC_EXITED)
        return 0;
    if (!l->proc_start)
        return 1;
    long hz = sysconf(_SC_CLK_TCK);
    int64_t suspended = (int64_t)((e->boot_offset ? e->boot_offset : tt__run_boot_offset()) - 1);
    int64_t started;
    /* Both come from files and log records any process of the tree can
     * write: a pair that does not fit is no pair. */
    if (__builtin_sub_overflow((int64_t)(l->proc_start * (uint64_t)(1000000000 / (hz > 0 ? hz : 100))), suspended,
                               &started))
        return 0;
    return started <= (int64_t)e->start_ns;
}

/* The file of an image that exec replaced stays as its image left it; this
 * says why it stopped, when the file is this process's (its pid, which the
 * name says, and its key): a file of an earlier process that had the pid
 * (pids are reused, after a wrap at pid_max) and was killed stays RUNNING.
 * A plain pwrite: the old mapping died with the image. Only into a regular
 * file of ours: a link is not followed, and no FIFO is opened. */
static void mark_execed(int dfd, const char *name, tt__run_header *own)
{
    int fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    uint32_t st_execed = TT_RUN_PROC_EXECED;
    tt__run_header e;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        pread(fd, &e, sizeof e, 0) == sizeof e && e.state == TT_RUN_PROC_RUNNING) {
        /* An image whose key is only its start (it had no pidfs: a sandbox
         * refused pidfd_open) is compared by start: this one's is read. */
        if (!e.proc_ino && e.proc_start && own->proc_ino && !own->proc_start)
            own->proc_start = tt__run_proc_start((pid_t)own->pid);
        if (tt__run_same_process(&e, own))
            (void)!pwrite(fd, &st_execed, sizeof st_execed, offsetof(tt__run_header, state));
    }
    close(fd);
}

void tt__run_header_init(tt__run_header *h, uint32_t thread_cap, uint32_t sample_cap)
{
    memcpy(h->magic, TT_RUN_MAGIC, TT_RUN_MAGIC_LEN);
    h->version = TT_RUN_VERSION;
    h->header_size = TT_RUN_HEADER_SIZE;
    h->thread_size = TT_RUN_THREAD_SIZE;
    h->sample_size = TT_RUN_SAMPLE_SIZE;
    h->thread_cap = thread_cap;
    h->sample_cap = sample_cap;
}

/* RLIMIT_FSIZE's soft limit + 1 (UINT64_MAX: none), 0 until read. A write
 * or a truncate past the limit raises SIGXFSZ, whose default action ends
 * the process: a program run under `ulimit -f` must not die of being
 * measured once the run's log, which the whole tree shares, has outgrown
 * its limit. Read once per image and again after a change made through
 * the C library; a fork child inherits both the limit and this copy. */
static _Atomic uint64_t g_fsize;

void tt__run_fsize_changed(void)
{
    atomic_store_explicit(&g_fsize, 0, memory_order_relaxed);
}

static uint64_t fsize_limit(void)
{
    uint64_t lim = atomic_load_explicit(&g_fsize, memory_order_relaxed);
    if (!lim) {
        struct rlimit rl;
        lim = getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= UINT64_MAX - 1
                  ? UINT64_MAX
                  : (uint64_t)rl.rlim_cur + 1;
        atomic_store_explicit(&g_fsize, lim, memory_order_relaxed);
    }
    return lim;
}

/* 1 when this process may make a file `end` bytes long (the kernel allows
 * a size up to the limit itself). */
static int fsize_allows(uint64_t end)
{
    uint64_t lim = fsize_limit();
    return lim == UINT64_MAX || end < lim;
}

int tt__run_log_append(const char *dir, const tt__run_log_id *id, const tt__run_log_rec *r)
{
    char path[4096 + 32];
    size_t dlen = strlen(dir);
    if (dlen + sizeof "/" TT_RUN_LOG_NAME > sizeof path)
        return -EINVAL;
    memcpy(path, dir, dlen);
    memcpy(path + dlen, "/" TT_RUN_LOG_NAME, sizeof "/" TT_RUN_LOG_NAME);
    /* No link followed, no FIFO waited on: the check below settles what
     * the file is, in place of a check of the directory. */
    int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = fstat(fd, &st) != 0 ? -errno
             : (st.st_mode & (S_IFMT | 07777)) != (S_IFREG | TT_RUN_LOG_MODE) || (uint64_t)st.st_dev != id->dev ||
                       (uint64_t)st.st_ino != id->ino || (uint32_t)st.st_uid != id->uid
                 ? -ESTALE
                 : 0;
    if (!rc) {
        /* One write, never resumed: a second part would land after some
         * other process's record. A short one leaves a record without its
         * end mark, which the reader skips. */
        ssize_t w = -1;
        if (!fsize_allows((uint64_t)st.st_size + sizeof *r)) {
            rc = -EFBIG;
        } else if (fsize_limit() == UINT64_MAX) {
            while ((w = write(fd, r, sizeof *r)) < 0 && errno == EINTR)
                ;
            rc = w == (ssize_t)sizeof *r ? 0 : w < 0 ? -errno : -EIO;
        } else {
            /* Under a limit, others' appends since the fstat can still take
             * this one past it: SIGXFSZ is held for the write, and the one
             * it raised (none was pending before) is taken back. */
            sigset_t x, old, pending;
            sigemptyset(&x);
            sigaddset(&x, SIGXFSZ);
            int was = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
            pthread_sigmask(SIG_BLOCK, &x, &old);
            while ((w = write(fd, r, sizeof *r)) < 0 && errno == EINTR)
                ;
            rc = w == (ssize_t)sizeof *r ? 0 : w < 0 ? -errno : -EIO;
            if (rc == -EFBIG && !was)
                sigtimedwait(&x, NULL, &(struct timespec){0, 0});
            pthread_sigmask(SIG_SETMASK, &old, NULL);
        }
    }
    close(fd);
    return rc;
}

/* A field of the record at p, wherever p is (a record after garbage is at
 * any offset of the log, so no struct is read through it). */
static uint32_t log_u32(const unsigned char *p, size_t off)
{
    uint32_t v;
    memcpy(&v, p + off, sizeof v);
    return v;
}

static uint16_t log_u16(const unsigned char *p, size_t off)
{
    uint16_t v;
    memcpy(&v, p + off, sizeof v);
    return v;
}

/* 1 when the bytes at p are a record this reader can take: its marks, its
 * size, a kind it knows, a pid; an EXIT record's thread is the one thread,
 * read at exit; a NOFILE record's errno one. */
static int log_valid(const unsigned char *p)
{
#define AT(field) offsetof(tt__run_log_rec, field)
    uint32_t pid = log_u32(p, AT(pid)), err = log_u32(p, AT(err));
    uint16_t kind = log_u16(p, AT(kind));
    if (log_u32(p, AT(magic)) != TT_RUN_LOG_MAGIC || log_u16(p, AT(size)) != TT_RUN_LOG_SIZE ||
        log_u32(p, AT(end)) != TT_RUN_LOG_END || !pid)
        return 0;
    if (kind == TT_RUN_LOG_START)
        return 1;
    if (kind == TT_RUN_LOG_NOFILE)
        return err >= 1 && err <= TT_RUN_LOG_ERR_MAX;
    return kind == TT_RUN_LOG_EXIT && log_u32(p, AT(thread.state)) == TT_RUN_AT_EXIT &&
           log_u32(p, AT(thread.tid)) == pid && log_u32(p, AT(thread.kind)) == TT_RUN_KIND_OTHER;
#undef AT
}

size_t tt__run_log_compact(unsigned char *b, size_t n, size_t *records)
{
    const uint32_t magic = TT_RUN_LOG_MAGIC;
    size_t off = 0, skipped = 0, k = 0;
    while (n - off >= TT_RUN_LOG_SIZE) {
        if (log_valid(b + off)) {
            /* Never onto bytes not read yet: the slot ends at or before
             * this record's end. */
            if (off != k * TT_RUN_LOG_SIZE)
                memmove(b + k * TT_RUN_LOG_SIZE, b + off, TT_RUN_LOG_SIZE);
            k++;
            off += TT_RUN_LOG_SIZE;
            continue;
        }
        /* Not a record here: on to the next place the magic is. Records
         * are appended whole, so after garbage of any length the next one
         * starts at its magic. */
        const unsigned char *next = memmem(b + off + 1, n - off - 1, &magic, sizeof magic);
        size_t to = next ? (size_t)(next - b) : n;
        skipped += to - off;
        off = to;
    }
    *records = k;
    return skipped + (n - off);
}

/* The directory must be the one threadtime run made: ours, and open to
 * nobody else. Its name is free again once run has ended (run renames the
 * directory away), and another user may make one by that name for a
 * process that outlived the command to write into. */
static int open_own_dir(const char *dir, uid_t *euid)
{
    *euid = geteuid();
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    struct stat st;
    if (fstat(dfd, &st) != 0 || st.st_uid != *euid || (st.st_mode & 077) != 0) {
        close(dfd);
        return -EPERM;
    }
    return dfd;
}

/* Maps f shared through fd, open on it, with blocks for its header's page
 * and its first `first` records reserved first. 0 or -errno, f unchanged. */
static int map_fd(tt__run_file *f, int fd, uint32_t first)
{
    uint32_t cap = f->head.thread_cap;
    size_t bytes = tt__run_file_bytes(cap, f->head.sample_cap);
    int rc = -posix_fallocate(fd, 0, (off_t)tt__run_file_bytes(first, 0));
    void *m = rc ? MAP_FAILED : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (!rc && m == MAP_FAILED)
        rc = -errno;
    if (rc)
        return rc;
    f->bytes = bytes;
    atomic_store_explicit(&f->thread_room, first, memory_order_relaxed);
    f->samples = (tt__run_sample *)((char *)m + tt__run_file_bytes(cap, 0));
    f->hdr = m;
    /* Release: a reader that finds the records finds the rest above. */
    __atomic_store_n(&f->threads, (tt__run_thread *)((char *)m + TT_RUN_HEADER_SIZE), __ATOMIC_RELEASE);
    return 0;
}

int tt__run_file_create(const char *dir, const tt__run_file_init *init, tt__run_file *out)
{
    size_t dlen = strlen(dir);
    char path[4096];
    if (dlen + 32 > sizeof path || init->thread_cap == 0 || init->sample_cap == 0)
        return -EINVAL;
    uid_t euid;
    int dfd = open_own_dir(dir, &euid);
    if (dfd < 0)
        return dfd;
    memcpy(path, dir, dlen);
    path[dlen] = '/';
    char *name = path + dlen + 1;
    tt__run_header *h = &out->head;
    memset(h, 0, sizeof *h);
    h->pid = (uint32_t)init->pid;
    /* The key: the pidfd's inode, or the start from /proc without pidfs or
     * under a seccomp filter, which /proc's open and read pass (read
     * already by a process that logged its start). */
    h->proc_ino = init->proc_ino;
    h->proc_start = init->proc_start;
    if (!h->proc_ino && !h->proc_start)
        tt__run_proc_key(init->pid, init->filtered, &h->proc_start, &h->proc_ino);
    int fd = -1;
    for (uint32_t n = 0; n < 1000 && fd < 0; n++) {
        char *p = put_u32(name, (uint32_t)init->pid);
        *p++ = '-';
        p = put_u32(p, n);
        memcpy(p, ".ttrun", 7);
        /* O_EXCL|O_NOFOLLOW and 0600 all the same, as every file the core
         * creates (docs/security.md). Not through tt__file_create: it
         * allocates and formats, which the child of a threaded fork must
         * not, and its random names would lose what these say: the pid
         * and the order of the images one process exec'd, the EEXIST
         * pointing at the file of the image this one replaced. */
        fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) {
            int e = errno;
            close(dfd);
            return -e;
        }
        if (fd < 0)
            mark_execed(dfd, name, h);
    }
    if (fd < 0) {
        close(dfd);
        return -EEXIST;
    }
    tt__run_header_init(h, init->thread_cap, init->sample_cap);
    h->ppid = (uint32_t)init->ppid;
    h->flags = init->flags;
    h->interval_ns = init->interval_ns;
    h->start_ns = init->start_ns ? init->start_ns : tt__run_now();
    h->start_real_ns = init->start_real_ns ? init->start_real_ns : tt__run_now_real();
    h->boot_offset = tt__run_boot_offset();
    if (init->exe)
        strncpy(h->exe, init->exe, sizeof h->exe - 1);
    /* One write of less than a page: a reader finds the whole header, magic
     * included, or none (a file without the magic never started). */
    size_t bytes = tt__run_file_bytes(init->thread_cap, init->sample_cap);
    struct stat st;
    int rc = !fsize_allows(bytes) ? -EFBIG : ftruncate(fd, (off_t)bytes) != 0 || fstat(fd, &st) != 0 ? -errno : 0;
    if (!rc) {
        ssize_t w = pwrite(fd, h, sizeof *h, 0);
        rc = w == (ssize_t)sizeof *h ? 0 : w < 0 ? -errno : -ENOSPC;
    }
    if (rc)
        unlinkat(dfd, name, 0);
    close(dfd);
    if (rc) {
        close(fd);
        return rc;
    }
    out->hdr = h;
    out->threads = NULL;
    out->samples = NULL;
    out->bytes = 0;
    atomic_store_explicit(&out->thread_room, 0, memory_order_relaxed);
    out->sample_room = 0;
    atomic_store_explicit(&out->full, 0, memory_order_relaxed);
    out->dev = st.st_dev;
    out->ino = st.st_ino;
    memcpy(out->path, path, strlen(path) + 1);
    /* A file made by root is mapped now, through the descriptor in hand:
     * a root process may drop to another user (setuid) or change its root
     * (chroot, a mount namespace) before its first record, and could not
     * open the file by its path then (its directory is root's, 0700).
     * Blocks for records come later, through reserve(), which needs no
     * path for a mapped file; a lone process's exit record goes into the
     * header's page (tt__run_file_put_alone), as unmapped. Left unmapped
     * if that fails (a full disk). */
    if (euid == 0)
        (void)map_fd(out, fd, 0);
    close(fd);
    return 0;
}

/* The file f was made as, opened again by its path: a descriptor kept
 * open could be closed by the program, and its number reused. The fd or
 * -errno (-ESTALE: something else is at the path now). Checked only once
 * open, so the open itself neither waits (a FIFO planted at the path) nor
 * takes a controlling terminal (a tty), as root after a chroot might. */
static int open_same(const tt__run_file *f)
{
    if (!f->path[0])
        return -ENOSPC; /* in memory: there is no more than its capacity */
    int fd = open(f->path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = fstat(fd, &st) != 0 ? -errno : st.st_dev != f->dev || st.st_ino != f->ino ? -ESTALE : 0;
    if (rc) {
        close(fd);
        return rc;
    }
    return fd;
}

int tt__run_file_map(tt__run_file *f)
{
    if (f->threads)
        return 0;
    int fd = open_same(f);
    if (fd < 0)
        return fd;
    uint32_t cap = f->head.thread_cap;
    int rc = map_fd(f, fd, cap < FIRST_RECORDS ? cap : FIRST_RECORDS);
    close(fd); /* the mapping keeps the file; growth opens it again */
    return rc;
}

/* Writes n bytes at off, whole; 0 or -errno. */
static int write_at(int fd, const void *buf, size_t n, off_t off)
{
    for (size_t done = 0; done < n;) {
        ssize_t w = pwrite(fd, (const char *)buf + done, n - done, off + (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -ENOSPC;
        done += (size_t)w;
    }
    return 0;
}

int tt__run_file_put_alone(tt__run_file *f, const tt__run_thread *rec)
{
    /* The record before the header that counts it and says EXITED. */
    f->head.flags |= TT_RUN_FLAG_ALONE;
    if (f->hdr != &f->head) {
        /* Mapped when made (by root), its header page's blocks reserved
         * then: the same stores through the mapping, the state last. */
        memcpy((char *)f->hdr + TT_RUN_ALONE_AT, rec, sizeof *rec);
        f->hdr->flags = f->head.flags;
        atomic_store_explicit(&f->hdr->threads_used, f->head.threads_used, memory_order_relaxed);
        atomic_store_explicit(&f->hdr->end_ns, f->head.end_ns, memory_order_relaxed);
        atomic_store_explicit(&f->hdr->state, f->head.state, memory_order_release);
        return 0;
    }
    if (f->threads)
        return -EINVAL;
    int fd = open_same(f);
    if (fd < 0)
        return fd;
    int rc = write_at(fd, rec, sizeof *rec, TT_RUN_ALONE_AT);
    if (!rc)
        rc = write_at(fd, &f->head, sizeof f->head, 0);
    close(fd);
    return rc;
}

/* Gives [off, off + len) of f blocks: 0 or -errno. Through a fresh open
 * of the file; where that is refused (a process that dropped root or
 * changed its root since the file was made and mapped), through the
 * mapping: MADV_POPULATE_WRITE (Linux 5.14) makes the kernel take the
 * write faults ahead, which give blocks as a store would, and fails
 * (EFAULT) where a store would raise SIGBUS (a full disk). */
static int reserve(tt__run_file *f, off_t off, off_t len)
{
    int fd = open_same(f);
    if (fd < 0 && f->path[0] && f->threads) {
        off_t page = (off_t)sysconf(_SC_PAGESIZE), at = off / page * page;
        return madvise((char *)f->hdr + at, (size_t)(off + len - at), MADV_POPULATE_WRITE) == 0 ? 0 : -errno;
    }
    if (fd < 0)
        return fd;
    int rc = -posix_fallocate(fd, off, len);
    close(fd);
    return rc;
}

/* The next room: double what there is (fewer reservations for many
 * threads), at least need, at most cap. */
static uint32_t next_room(uint32_t room, uint32_t need, uint32_t cap)
{
    uint64_t r = (uint64_t)room * 2;
    if (r < need)
        r = need;
    return r > cap ? cap : (uint32_t)r;
}

void tt__run_file_close(tt__run_file *f)
{
    if (f && f->threads)
        munmap(f->hdr, f->bytes);
    if (f) {
        f->hdr = NULL;
        f->threads = NULL;
    }
}

tt__run_thread *tt__run_thread_take(tt__run_file *f)
{
    /* Relaxed: the slot is this caller's alone; its state store publishes it. */
    uint32_t i = atomic_fetch_add_explicit(&f->hdr->threads_used, 1, memory_order_relaxed);
    if (i >= f->hdr->thread_cap)
        return NULL;
    uint32_t room = atomic_load_explicit(&f->thread_room, memory_order_acquire);
    if (i >= room) {
        /* Threads racing here reserve the same blocks: harmless. Once one
         * reservation failed nothing more is taken, so no record is ever
         * written past the blocks (the reader sees zeros, EMPTY, there). */
        if (atomic_load_explicit(&f->full, memory_order_relaxed))
            return NULL;
        uint32_t want = next_room(room, i + 1, f->hdr->thread_cap);
        int rc = reserve(f, TT_RUN_HEADER_SIZE, (off_t)want * TT_RUN_THREAD_SIZE);
        if (rc) {
            atomic_store_explicit(&f->full, -rc, memory_order_relaxed);
            return NULL;
        }
        /* Release: a later taker that sees the room sees the blocks. */
        while (room < want && !atomic_compare_exchange_weak_explicit(&f->thread_room, &room, want,
                                                                      memory_order_release, memory_order_acquire))
            ;
    }
    return &f->threads[i];
}

int tt__run_thread_claim(tt__run_thread *t, uint32_t from)
{
    /* Acquire: the winner reads the fields the previous state published. */
    return atomic_compare_exchange_strong_explicit(&t->state, &from, TT_RUN_WRITING, memory_order_acquire,
                                                   memory_order_relaxed);
}

void tt__run_thread_sched(tt__run_thread *t, const tt_sched *s)
{
    t->run_wait_ns = s->run_wait_ns;
    t->timeslices = s->timeslices;
    t->voluntary_switches = s->voluntary_switches;
    t->involuntary_switches = s->involuntary_switches;
    t->flags |= TT_RUN_SCHED | (s->run_wait_ns < 0 ? TT_RUN_NO_WAIT : 0);
}

void tt__run_thread_publish(tt__run_thread *t, uint32_t to)
{
    /* Release: a reader that sees the state sees the fields. */
    atomic_store_explicit(&t->state, to, memory_order_release);
}

void tt__run_sample_add(tt__run_file *f, uint64_t t_ns, uint32_t tid, uint32_t round, int64_t total_ns)
{
    uint64_t head = atomic_load_explicit(&f->hdr->samples_head, memory_order_relaxed);
    uint32_t slot = (uint32_t)(head % f->hdr->sample_cap);
    if (slot >= f->sample_room) {
        uint32_t need = slot < FIRST_SAMPLES ? FIRST_SAMPLES : slot + 1;
        uint32_t want = next_room(f->sample_room, need, f->hdr->sample_cap);
        off_t at = (off_t)tt__run_file_bytes(f->hdr->thread_cap, 0);
        if (atomic_load_explicit(&f->full, memory_order_relaxed))
            return;
        int rc = reserve(f, at, (off_t)want * TT_RUN_SAMPLE_SIZE);
        if (rc) {
            atomic_store_explicit(&f->full, -rc, memory_order_relaxed);
            return;
        }
        f->sample_room = want;
    }
    tt__run_sample *s = &f->samples[slot];
    s->t_ns = t_ns;
    s->tid = tid;
    s->round = round;
    s->total_ns = total_ns;
    /* Release: a reader that counts the sample sees it whole. */
    atomic_store_explicit(&f->hdr->samples_head, head + 1, memory_order_release);
}

/* The header's layout is this version's (1) or version 1's (2), or neither
 * (0, *why set). */
static int layout_of(const tt__run_header *h, const char **why)
{
    if (h->header_size == TT_RUN_HEADER_SIZE && h->sample_size == TT_RUN_SAMPLE_SIZE) {
        if (h->version == TT_RUN_VERSION && h->thread_size == TT_RUN_THREAD_SIZE)
            return 1;
        if (h->version == 1 && h->thread_size == TT_RUN_THREAD_SIZE_V1)
            return 2;
    }
    *why = h->version > TT_RUN_VERSION ? "run file of a newer threadtime (unknown version)"
                                       : "unknown run file version or layout";
    return 0;
}

/* The capacities bounded (a damaged header can say anything), and the
 * file at least as long as they say in its layout. */
static int caps_fit(const tt__run_header *h, uint64_t n, const char **why)
{
    if (h->thread_cap == 0 || h->sample_cap == 0 || h->thread_cap > TT_RUN_THREAD_CAP_MAX || h->sample_cap > TT_RUN_SAMPLE_CAP_MAX ||
        layout_bytes(h->thread_size, h->thread_cap, h->sample_cap) > n) {
        *why = "run file shorter than its header says";
        return 0;
    }
    return 1;
}

int tt__run_file_check(const void *buf, size_t n, const char **why)
{
    const tt__run_header *h = buf;
    if (n < TT_RUN_HEADER_SIZE || memcmp(h->magic, TT_RUN_MAGIC, TT_RUN_MAGIC_LEN) != 0) {
        *why = "not a threadtime run file (or never started)";
        return -EINVAL;
    }
    int layout = layout_of(h, why);
    if (layout == 2)
        *why = "run file of version 1 not upgraded";
    if (layout != 1)
        return -EINVAL;
    return caps_fit(h, n, why) ? 0 : -EINVAL;
}

unsigned char *tt__run_file_upgrade(unsigned char *b, size_t *n, const char **why)
{
    const tt__run_header *h = (const tt__run_header *)b;
    int layout = 0;
    if (*n < TT_RUN_HEADER_SIZE || memcmp(h->magic, TT_RUN_MAGIC, TT_RUN_MAGIC_LEN) != 0)
        *why = "not a threadtime run file (or never started)";
    else if ((layout = layout_of(h, why)) != 0 && !caps_fit(h, *n, why))
        layout = 0;
    if (layout != 2) {
        if (!layout) {
            free(b);
            return NULL;
        }
        return b;
    }
    /* Version 1: each record moved to its wider slot; the fields it lacks
     * stay zero, and its flags do not have TT_RUN_SCHED (not read). */
    size_t len = tt__run_file_bytes(h->thread_cap, h->sample_cap);
    unsigned char *c = calloc(1, len);
    if (!c) {
        *why = "out of memory";
        free(b);
        return NULL;
    }
    memcpy(c, b, TT_RUN_HEADER_SIZE);
    for (uint32_t i = 0; i < h->thread_cap; i++)
        memcpy(c + TT_RUN_HEADER_SIZE + (size_t)i * TT_RUN_THREAD_SIZE,
               b + TT_RUN_HEADER_SIZE + (size_t)i * TT_RUN_THREAD_SIZE_V1, TT_RUN_THREAD_SIZE_V1);
    memcpy(c + tt__run_file_bytes(h->thread_cap, 0), b + layout_bytes(TT_RUN_THREAD_SIZE_V1, h->thread_cap, 0),
           (size_t)h->sample_cap * TT_RUN_SAMPLE_SIZE);
    tt__run_header *ch = (tt__run_header *)c;
    ch->version = TT_RUN_VERSION;
    ch->thread_size = TT_RUN_THREAD_SIZE;
    free(b);
    *n = len;
    return c;
}

/* Reads n bytes at off; 0 or -1 (short: the file is not what it says). */
static int read_at(int fd, void *buf, size_t n, off_t off)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

unsigned char *tt__run_file_read(int fd, off_t size, size_t *len, const char **why)
{
    /* The header and the first page of records in one read: all a
     * single-threaded process (most of a build's, a shell's children)
     * wrote, so its file costs the reader one system call here. */
    union {
        tt__run_header h;
        unsigned char b[TT_RUN_HEADER_SIZE + 4096];
    } first;
    size_t got = 0;
    while (got < sizeof first.b) {
        ssize_t r = pread(fd, first.b + got, sizeof first.b - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break; /* the end of a short file: its header says whether it is */
        got += (size_t)r;
    }
    *why = "cannot read it";
    if (got < sizeof first.h)
        return NULL;
    tt__run_header h;
    memcpy(&h, &first.h, sizeof h);
    if (memcmp(h.magic, TT_RUN_MAGIC, TT_RUN_MAGIC_LEN) != 0) {
        *why = "not a threadtime run file (or never started)";
        return NULL;
    }
    /* A layout this reader knows, with the caps bounded as
     * tt__run_file_check bounds them, and the file as long as they say: a
     * shorter one was cut while it was made. */
    if (!layout_of(&h, why) || !caps_fit(&h, (uint64_t)size, why))
        return NULL;
    uint32_t tsize = h.thread_size;
    uint32_t used = h.threads_used < h.thread_cap ? h.threads_used : h.thread_cap;
    uint64_t head = h.samples_head;
    uint32_t kept = head < h.sample_cap ? (uint32_t)head : h.sample_cap;
    tt__run_header c = h;
    /* One record spare where none was dropped: room for what a reader adds
     * (threadtime run's row for a killed process). */
    c.thread_cap = h.threads_used < h.thread_cap ? used + 1 : used;
    c.sample_cap = kept ? kept : 1;
    size_t n = layout_bytes(tsize, c.thread_cap, c.sample_cap);
    unsigned char *b = calloc(1, n);
    *why = "out of memory";
    if (!b)
        return NULL;
    /* The header page and records as far as the first read went (the file
     * is as long as its caps, checked above: it went past the header),
     * then the rest of the records. */
    size_t want = TT_RUN_HEADER_SIZE + (size_t)used * tsize, have = got < want ? got : want;
    memcpy(b, first.b, have);
    if ((h.flags & TT_RUN_FLAG_ALONE) && tsize == TT_RUN_THREAD_SIZE) {
        /* The lone record, written in the header's page, to record 0. */
        c.flags &= ~TT_RUN_FLAG_ALONE;
        if (used == 1 && got >= TT_RUN_ALONE_AT + TT_RUN_THREAD_SIZE)
            memcpy(b + TT_RUN_HEADER_SIZE, first.b + TT_RUN_ALONE_AT, TT_RUN_THREAD_SIZE);
        memset(b + TT_RUN_ALONE_AT, 0, TT_RUN_THREAD_SIZE);
    }
    memcpy(b, &c, sizeof c);
    int rc = have < want ? read_at(fd, b + have, want - have, (off_t)have) : 0;
    /* The ring's last `kept` samples, each at its index modulo the new
     * capacity, so the reader's walk from samples_head finds them. That
     * capacity is the ring's, or (a ring that never wrapped) the samples
     * written, so the index is the same in both: two reads at most, the
     * ring's end and then its start (not one per sample). */
    tt__run_sample *ring = (tt__run_sample *)(b + layout_bytes(tsize, c.thread_cap, 0));
    off_t at = (off_t)layout_bytes(tsize, h.thread_cap, 0);
    for (uint64_t j = head - kept, k; !rc && j < head; j += k) {
        uint64_t i = j % h.sample_cap;
        k = head - j < h.sample_cap - i ? head - j : h.sample_cap - i;
        rc = read_at(fd, &ring[i], (size_t)k * sizeof *ring, at + (off_t)i * TT_RUN_SAMPLE_SIZE);
    }
    if (rc) {
        *why = "run file shorter than its header says";
        free(b);
        return NULL;
    }
    if (!(b = tt__run_file_upgrade(b, &n, why)) || tt__run_file_check(b, n, why) != 0) {
        free(b);
        return NULL;
    }
    *len = n;
    return b;
}
