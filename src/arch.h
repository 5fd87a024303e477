/* Library-side platform interface. The platform itself is selected once, in
 * threadtime/arch.h (public, because the inline event path reads the counter
 * in callers' code); the build compiles exactly one of src/arch/<arch>/ for
 * these functions, so no source file tests the architecture. */
#ifndef TT_ARCH_H
#define TT_ARCH_H

#include "threadtime/arch.h"

/* The fast clock's rseq pieces (signature, thread pointer, abort label):
 * header-only, so they are chosen here, on the same test as the public
 * header's. TT__RSEQ_SIG undefined = no fast clock on this architecture. */
#if defined(__x86_64__)
#include "arch/x86_64/rseq.h"
#elif defined(__aarch64__)
#include "arch/aarch64/rseq.h"
#endif

/* 1 if the cycle counter ticks at one constant rate whatever the core's
 * frequency or sleep state (x86-64: the "invariant TSC" CPUID bit;
 * aarch64: always, by architecture); 0 if not, or if there is none. */
int tt__counter_invariant(void);

/* Trace-file code of the counter (TT__TRACE_SOURCE_*); 0 if none. */
unsigned tt__counter_source(void);

#endif /* TT_ARCH_H */
