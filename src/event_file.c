/* Every file the event log writes (crash files, dumps, a fork child's file)
 * is made the same way: a new inode under a name nobody can guess, beside
 * its destination, renamed into place once complete. O_EXCL refuses a name
 * that exists, even as a dangling symlink, so nothing planted in a shared
 * directory is ever opened; a failure removes the new file and leaves the
 * destination as it was. */
#include "internal.h"
#include "event_log.h"
#include "prim/random.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    if (tt__getrandom(&x, sizeof x, GRND_NONBLOCK) == (ssize_t)sizeof x)
        return x;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15u ^ (uint64_t)ts.tv_sec ^ (uint64_t)getpid() << 32;
    return x ^ (uint64_t)(uintptr_t)&x;
}

/* 1 if the symlink at path (described by *link) may be followed: it is the
 * caller's own, or its directory's owner's (the rule of the kernel's
 * fs.protected_symlinks, applied whatever that sysctl says). In a shared
 * directory anyone else's link is a plant. */
static int link_trusted(const char *path, const struct stat *link)
{
    if (link->st_uid == geteuid())
        return 1;
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    struct stat d;
    int trusted = dir && stat(dir, &d) == 0 && d.st_uid == link->st_uid;
    free(dir);
    return trusted;
}

int tt__file_target(const char *path, char **real)
{
    *real = NULL;
    struct stat sb;
    if (lstat(path, &sb) != 0) {
        if (errno != ENOENT)
            return -errno;
        *real = strdup(path);
        return *real ? 0 : -ENOMEM;
    }
    if (S_ISLNK(sb.st_mode)) {
        if (!link_trusted(path, &sb))
            return TT__FILE_PLANTED;
        /* /dev/stdout, or a link the user made: what it leads to is the
         * destination, never the link itself (renaming over /dev/stdout
         * would replace it for everyone). */
        char head[6];
        int via_proc =
            readlink(path, head, sizeof head) == (ssize_t)sizeof head && memcmp(head, "/proc/", sizeof head) == 0;
        if (stat(path, &sb) != 0)
            return -errno;
        /* Through /proc it is a file some process has open, stdout
         * redirected with > or >>: appended to, not replaced. */
        if (S_ISREG(sb.st_mode) && via_proc)
            return TT__FILE_STREAM;
        if (S_ISREG(sb.st_mode)) {
            *real = realpath(path, NULL);
            return *real ? 0 : -errno;
        }
    }
    if (S_ISREG(sb.st_mode)) {
        *real = strdup(path);
        return *real ? 0 : -ENOMEM;
    }
    if (S_ISDIR(sb.st_mode))
        return -EISDIR;
    return S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode) || S_ISSOCK(sb.st_mode) ? TT__FILE_STREAM : -EINVAL;
}

/* 0 if path may be replaced by rename: absent, a regular file, or a symlink
 * put there since it was resolved (replaced, not followed). */
static int replaceable(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return errno == ENOENT ? 0 : -errno;
    return S_ISREG(sb.st_mode) || S_ISLNK(sb.st_mode) ? 0 : -EINVAL;
}

int tt__file_create(const char *path, unsigned mode, char **tmp)
{
    *tmp = NULL;
    int rc = -EEXIST;
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
    int rc = replaceable(path);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc)
        unlink(tmp);
    return rc;
}
