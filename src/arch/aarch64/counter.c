/* aarch64: the generic timer's virtual counter is always a clock. */
#include "internal.h"
#include "arch.h"
#include "trace.h"

/* The architecture fixes CNTVCT_EL0 to one system-wide frequency
 * (CNTFRQ_EL0), independent of core clocks and power states. */
int tt__counter_invariant(void) { return 1; }

unsigned tt__counter_source(void) { return TT__TRACE_SOURCE_CNTVCT; }
