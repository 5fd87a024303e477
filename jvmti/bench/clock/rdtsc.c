/* The cycle counter, for clock/ClockCost.java only: what mounted mode would
 * read instead of System.nanoTime(). */
#include <stdint.h>
#include <x86intrin.h>

uint64_t bench_rdtsc(void)
{
    return __rdtsc();
}
