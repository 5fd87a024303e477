/* threadtime: per-thread CPU clocks and a flyweight event log for Linux.
 * Include this one header; see docs/README.md for which call to use. */
#ifndef THREADTIME_THREADTIME_H
#define THREADTIME_THREADTIME_H

#include "common.h"
#include "cpu.h"
#include "event.h"
#include "sched.h"

#endif /* THREADTIME_THREADTIME_H */
