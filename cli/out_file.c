/* Output files of the command (-o, --report): created as the core creates
 * its files (src/event_file.c), so that a report written as root in a
 * shared directory can neither be redirected by another user's symlink nor
 * held up by their FIFO (docs/security.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event_log.h"
#include "out.h"

/* A stream destination (tt__file_target said so): opened without waiting
 * for a reader and appended to, never truncated (stdout redirected with >>
 * keeps what it held). */
static int open_stream(const char *path, const char **why)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        *why = e == ENXIO ? "it is a FIFO or socket that no process reads" : strerror(e);
        return -e;
    }
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        *why = strerror(errno);
    } else if (S_ISBLK(st.st_mode) || S_ISDIR(st.st_mode)) {
        rc = -EINVAL;
        *why = "it is a block device or a directory";
    } else if (S_ISFIFO(st.st_mode) && st.st_uid != geteuid()) {
        /* Another user's FIFO (in /tmp, say) would hand them the report. */
        rc = -EACCES;
        *why = "it is a FIFO another user owns";
    } else if (fcntl(fd, F_SETFL, O_APPEND) != 0) { /* blocking again: a slow reader is waited for */
        rc = -errno;
        *why = strerror(errno);
    }
    if (rc) {
        close(fd);
        return rc;
    }
    return fd;
}

int out_file_open(const char *path, out_file *o, const char **why)
{
    *o = (out_file){0};
    *why = NULL;
    int rc = tt__file_target(path, &o->real);
    int fd = -1;
    if (rc == TT__FILE_PLANTED) {
        *why = "it is another user's symlink (neither followed nor replaced)";
        return -EACCES;
    }
    if (rc == TT__FILE_STREAM) {
        fd = open_stream(path, why);
    } else if (rc == 0) {
        fd = tt__file_create(o->real, 0600, &o->tmp);
    } else {
        fd = rc;
        if (rc == -EISDIR)
            *why = "it is a directory";
        else if (rc == -EINVAL)
            *why = "it is a block device";
    }
    if (fd >= 0 && !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        fd = -e;
    }
    if (fd < 0) {
        if (o->tmp)
            unlink(o->tmp);
        free(o->tmp);
        free(o->real);
        *o = (out_file){0};
        if (!*why)
            *why = strerror(-fd);
        return fd;
    }
    return 0;
}

int out_file_close(out_file *o, int ok)
{
    if (!o->f)
        return 0;
    int rc = 0;
    if (fflush(o->f) != 0)
        rc = -errno;
    else if (ferror(o->f))
        rc = -EIO; /* an earlier write failed; its errno is long gone */
    if (fclose(o->f) != 0 && rc == 0)
        rc = -errno;
    if (o->tmp) {
        if (rc == 0 && ok)
            rc = tt__file_place(o->tmp, o->real);
        else
            unlink(o->tmp);
    }
    free(o->tmp);
    free(o->real);
    *o = (out_file){0};
    return rc;
}
