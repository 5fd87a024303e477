#include "bench.h"
__attribute__((weak)) const tt_bench_method tt_bench_event_methods[] = {{0}};
