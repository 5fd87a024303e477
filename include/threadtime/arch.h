/* threadtime: the one place that selects the platform.
 *
 * It is public because the inline recording path in event.h reads the cycle
 * counter in the caller's code. The library adds its own platform code
 * (invariance check, frequency hints) in src/arch/<arch>/, chosen by the
 * build, and declares it in src/arch.h; nothing else tests the architecture.
 */
#ifndef THREADTIME_ARCH_H
#define THREADTIME_ARCH_H

#include <stdint.h>

#if defined(__x86_64__)
#include "arch/x86_64.h"
#elif defined(__aarch64__)
#include "arch/aarch64.h"
#else
#include "arch/generic.h"
#endif

#endif /* THREADTIME_ARCH_H */
