/* Seccomp filters for tests: one system call answered with an action of
 * the test's choice, and a SIGSYS handler's way to make a trapped call
 * fail. Shared by the tests in tests/ and tests/run/. */
#ifndef TT_TEST_SECCOMP_H
#define TT_TEST_SECCOMP_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__x86_64__)
#define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_ARCH AUDIT_ARCH_AARCH64
#endif

/* In a SIGSYS handler (SA_SIGINFO; p its third argument): the trapped
 * call returns -ENOSYS, as if made and refused. */
static inline void sigsys_fail_call(void *p)
{
    ucontext_t *uc = p;
#if defined(__x86_64__)
    uc->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
#elif defined(__aarch64__)
    uc->uc_mcontext.regs[0] = (unsigned long long)-ENOSYS;
#else
    (void)uc;
#endif
}

/* Installs on the calling thread (and the threads it starts after) a
 * seccomp filter that answers system call nr (with first argument arg0,
 * if arg0 >= 0) with action and allows the rest: through libc's
 * prctl(PR_SET_SECCOMP), or with raw_seccomp through the seccomp system
 * call (no_new_privs set through libc's prctl both ways; raw_seccomp 2:
 * through the prctl system call, so a preload's prctl wrapper sees
 * neither). 0, or -1 if refused or not built for this architecture. */
static inline int install_filter(int nr, long arg0, unsigned action, int raw_seccomp)
{
#ifdef FILTER_ARCH
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        /* Any first argument when arg0 < 0; its low word (little-endian). */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)arg0, 0, arg0 < 0 ? 0 : 1),
        BPF_STMT(BPF_RET | BPF_K, action),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    if ((raw_seccomp == 2 ? syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
                          : prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) != 0)
        return -1;
    if (raw_seccomp)
        return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0 ? 0 : -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0 ? 0 : -1;
#else
    (void)nr, (void)arg0, (void)action, (void)raw_seccomp;
    return -1;
#endif
}

#endif
