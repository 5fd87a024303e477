/* x86-64: what the fast clock needs of rseq (included through src/arch.h).
 *
 * The signature is the one glibc registers every thread's rseq area with
 * (RSEQ_SIG in glibc's x86 bits/rseq.h): the kernel checks that the four
 * bytes before a descriptor's abort_ip hold it, and kills the task with
 * SIGSEGV if not. */
#ifndef TT_ARCH_X86_64_RSEQ_H
#define TT_ARCH_X86_64_RSEQ_H

#define TT__RSEQ_SIG 0x53053053u

/* The rseq system call's number (Linux 4.18+), written out: a build
 * against an old sysroot (glibc 2.17's headers) has no SYS_rseq. */
#define TT__NR_RSEQ 334

/* The thread pointer: glibc keeps the TCB's own address at %fs:0, and
 * __rseq_offset is counted from it. One load. */
static inline char *tt__thread_pointer(void)
{
    char *tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return tp;
}

/* Top-level asm: the signature, then the label `name` that a descriptor's
 * abort_ip names. The kernel only reads the signature; nothing ever jumps to
 * the label (our descriptors' ranges are empty), so it holds a trap. */
#define TT__RSEQ_ABORT_LABEL(name)                                                                 \
    __asm__(".pushsection .text\n\t"                                                               \
            ".balign 16\n\t"                                                                       \
            ".long 0x53053053\n"                                                                   \
            ".hidden " #name "\n" #name ":\n\t"                                                    \
            "ud2\n\t"                                                                              \
            ".popsection\n")

#endif /* TT_ARCH_X86_64_RSEQ_H */
