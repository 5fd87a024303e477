/* A shared library for the `threadtime run` tests (test_run.py): a
 * sandboxing library, whose constructor installs, through libc's prctl, a
 * seccomp filter that kills the process on prctl(PR_GET_SECCOMP). The
 * program's libraries are initialised before the preload's load may run,
 * so the filter can be in place when it does. run_sandboxed prints what
 * happened. */
#include "../test_seccomp.h"

#define EXPORT __attribute__((visibility("default")))

/* 1 if the constructor installed the filter, 0 if it was refused, -1 where
 * none is built for this architecture. */
EXPORT int run_sandbox_installed = -1;

__attribute__((constructor)) static void sandbox(void)
{
#ifdef FILTER_ARCH
    run_sandbox_installed = install_filter(__NR_prctl, PR_GET_SECCOMP, SECCOMP_RET_KILL_PROCESS, 0) == 0;
#endif
}
