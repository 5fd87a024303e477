/* x86-64: whether the TSC can be trusted as a clock. */
#include "internal.h"
#include "arch.h"
#include "trace.h"

#include <cpuid.h>

/* CPUID leaf 0x80000007 ("advanced power management"), EDX bit 8: the TSC
 * runs at a constant rate in every P-, C- and T-state. KVM passes it through
 * when the host has it (and sets it only then). */
#define TT__CPUID_APM_LEAF 0x80000007u
#define TT__CPUID_APM_EDX_INVARIANT_TSC (1u << 8)

int tt__counter_invariant(void)
{
    unsigned a, b, c, d;
    if ((unsigned)__get_cpuid_max(0x80000000u, NULL) < TT__CPUID_APM_LEAF)
        return 0;
    __cpuid(TT__CPUID_APM_LEAF, a, b, c, d);
    return (d & TT__CPUID_APM_EDX_INVARIANT_TSC) != 0;
}

unsigned tt__counter_source(void) { return TT__TRACE_SOURCE_TSC; }
