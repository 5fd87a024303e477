/* Every file the event log writes (crash files, dumps, a fork child's file)
 * is made the same way: a new inode under a name nobody can guess, beside
 * its destination, renamed into place once complete. O_EXCL refuses a name
 * that exists, even as a dangling symlink, so nothing planted in a shared
 * directory is ever opened; a failure removes the new file and leaves the
 * destination as it was. */
#include "internal.h"
#include "event_log.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* Names tried before giving up: each holds 64 random bits, so a clash is
 * someone's file at that very name, not chance. */
#define TT__FILE_ATTEMPTS 8

/* 64 unpredictable bits: getrandom (never blocks once the pool is ready,
 * which it is long before a program could record). Where it is missing or
 * refused (a seccomp filter, Linux < 3.17) the name is merely unlikely, which
 * O_EXCL makes safe: a guessed name costs a retry, never a followed link. */
static uint64_t random_bits(void)
{
    uint64_t x;
    if (getrandom(&x, sizeof x, GRND_NONBLOCK) == (ssize_t)sizeof x)
        return x;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15u ^ (uint64_t)ts.tv_sec ^ (uint64_t)getpid() << 32;
    return x ^ (uint64_t)(uintptr_t)&x;
}

int tt__file_target_check(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return errno == ENOENT ? 0 : -errno;
    /* A symlink is replaced, never followed; a device, FIFO, socket or
     * directory is never replaced. */
    return S_ISREG(sb.st_mode) || S_ISLNK(sb.st_mode) ? 0 : -EINVAL;
}

int tt__file_create(const char *path, unsigned mode, char **tmp)
{
    *tmp = NULL;
    int rc = tt__file_target_check(path);
    if (rc)
        return rc;
    size_t n = strlen(path) + 24;
    char *name = malloc(n);
    if (!name)
        return -ENOMEM;
    for (int i = 0; i < TT__FILE_ATTEMPTS; i++) {
        snprintf(name, n, "%s.%016llx.tmp", path, (unsigned long long)random_bits());
        int fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
        if (fd >= 0) {
            *tmp = name;
            return fd;
        }
        rc = -errno;
        if (rc != -EEXIST)
            break;
    }
    free(name);
    return rc;
}

int tt__file_place(const char *tmp, const char *path)
{
    /* Checked again: the destination may have changed since the file was
     * made (a long dump, a crash file's allocation). */
    int rc = tt__file_target_check(path);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc)
        unlink(tmp);
    return rc;
}

int tt__file_mode_check(unsigned mode)
{
    /* The owner reads and writes it (a crash file is mapped read-write);
     * no setuid, setgid or sticky bit. */
    return (mode & 0600u) == 0600u && mode <= 0777u ? 0 : -EINVAL;
}
