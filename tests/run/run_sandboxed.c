/* A program for the `threadtime run` tests (test_run.py), linked with the
 * library run_sandbox, whose constructor installed a seccomp filter that
 * kills on prctl(PR_GET_SECCOMP) before main: prints "installed",
 * "refused" or "skip" (no filter for this architecture) and returns 0. */
#include <stdio.h>

extern int run_sandbox_installed;

int main(void)
{
    puts(run_sandbox_installed < 0 ? "skip" : run_sandbox_installed ? "installed" : "refused");
    return 0;
}
