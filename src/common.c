/* Version and error text. */
#include "internal.h"

#include <string.h>

const char *tt_version(void) { return TT_VERSION_STRING; }

const char *tt_strerror(int64_t code)
{
    if (code == 0)
        return "success";
    int64_t e = code < 0 ? -code : code;
    switch (e) {
    case ESRCH: return "no such thread or process (it may have exited)";
    case EINVAL: return "invalid argument (or a thread of another process)";
    case EFAULT: return "NULL pointer argument";
    case ENOTSUP: return "method not available on this system";
    default: break;
    }
    if (e > 4095)
        return "unknown error";
    /* strerror() text is static for every errno glibc knows. */
    return strerror((int)e);
}
