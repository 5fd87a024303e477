/* aarch64: what the fast clock needs of rseq (included through src/arch.h).
 *
 * The signature is glibc's RSEQ_SIG for aarch64: BRK #0x45E0 as an
 * instruction (RSEQ_SIG_CODE), registered as data (RSEQ_SIG_DATA, the same
 * word on little-endian; big-endian aarch64 stores code little-endian). */
#ifndef TT_ARCH_AARCH64_RSEQ_H
#define TT_ARCH_AARCH64_RSEQ_H

#ifdef __AARCH64EB__
#define TT__RSEQ_SIG 0x00bc28d4u
#else
#define TT__RSEQ_SIG 0xd428bc00u
#endif

/* The rseq system call's number (Linux 4.18+), written out: a build
 * against an old sysroot (glibc 2.17's headers) has no SYS_rseq. */
#define TT__NR_RSEQ 293

/* The thread pointer (TPIDR_EL0), from which __rseq_offset is counted. */
static inline char *tt__thread_pointer(void)
{
    char *tp;
    __asm__("mrs %0, tpidr_el0" : "=r"(tp));
    return tp;
}

/* Top-level asm: the signature as an instruction, then the label `name`
 * that a descriptor's abort_ip names; nothing ever jumps to it. */
#define TT__RSEQ_ABORT_LABEL(name)                                                                 \
    __asm__(".pushsection .text\n\t"                                                               \
            ".balign 16\n\t"                                                                       \
            ".inst 0xd428bc00\n"                                                                   \
            ".hidden " #name "\n" #name ":\n\t"                                                    \
            "brk #0x45e0\n\t"                                                                      \
            ".popsection\n")

#endif /* TT_ARCH_AARCH64_RSEQ_H */
