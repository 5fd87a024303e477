/* Array growth and whole-descriptor reads (util.h). */
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

void *tt__grow(void *items, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return items;
    size_t n = *cap ? *cap : (first ? first : 1);
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return NULL;
        n *= 2;
    }
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *bigger = realloc(items, n * size);
    if (!bigger)
        return NULL;
    *cap = n;
    return bigger;
}

ssize_t tt__read_retry(int fd, void *buf, size_t n)
{
    for (;;) {
        ssize_t got = read(fd, buf, n);
        if (got >= 0)
            return got;
        if (errno != EINTR)
            return -errno;
    }
}

int tt__read_all(int fd, unsigned char **out, size_t *out_len)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -errno;
    /* One byte past the size: the read that returns 0 then needs no growth. */
    size_t cap = 0, len = 0;
    size_t hint = S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size < SIZE_MAX ? (size_t)st.st_size + 1 : 65536;
    unsigned char *buf = tt__grow(NULL, &cap, hint, 1, hint);
    if (!buf)
        return -ENOMEM;
    for (;;) {
        if (len == cap) {
            unsigned char *b = tt__grow(buf, &cap, len + 1, 1, 0);
            if (!b) {
                free(buf);
                return -ENOMEM;
            }
            buf = b;
        }
        ssize_t n = tt__read_retry(fd, buf + len, cap - len);
        if (n < 0) {
            free(buf);
            return (int)n;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    *out = buf;
    *out_len = len;
    return 0;
}
