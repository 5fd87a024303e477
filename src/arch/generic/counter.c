/* Platforms without a known cycle counter: events use CLOCK_MONOTONIC_RAW. */
#include "internal.h"
#include "arch.h"

int tt__counter_invariant(void) { return 0; }

unsigned tt__counter_source(void) { return 0; }
