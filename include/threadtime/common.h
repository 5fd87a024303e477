/* threadtime: shared definitions of the public C API.
 *
 * Error convention: a call that can fail returns a negative errno value
 * (-EINVAL, -ESRCH, ...). Calls that produce one time value return it
 * directly as int64_t nanoseconds (always >= 0 on success), so a binding
 * can make the call with a single return register and no out-pointer;
 * calls that produce several values return int (0 or -errno) and fill a
 * struct. tt_strerror() turns any of these codes into text.
 */
#ifndef THREADTIME_COMMON_H
#define THREADTIME_COMMON_H

#include <stdint.h>

#if defined(TT_BUILDING_LIBRARY)
#define TT_API __attribute__((visibility("default")))
#else
#define TT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define TT_VERSION_MAJOR 0
#define TT_VERSION_MINOR 1
#define TT_VERSION_PATCH 0
#define TT_VERSION_STRING "0.1.0"

/* The library's version as "major.minor.patch"; never NULL. */
TT_API const char *tt_version(void);

/* Text for a code returned by any tt_ call: a negative errno (or a plain
 * positive errno). Any value is accepted: 0 is "success", and anything
 * outside the kernel's errno range (beyond +-4095, INT64_MIN included) is
 * "unknown error". Never NULL; the string is static. */
TT_API const char *tt_strerror(int64_t code);

#ifdef __cplusplus
}
#endif

#endif /* THREADTIME_COMMON_H */
