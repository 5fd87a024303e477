/* The cycle counter for the -javaagent's mounted mode
 * (io.threadtime.CycleCounter): read through a critical FFM downcall on
 * JDK 22+ (tt_java_counter_read, ~11 ns here against ~38 ns for
 * System.nanoTime(); jvmti/bench/clock) and through JNI on JDK 21. The
 * frequency is the core's calibration, the one the JVMTI agent uses. */
#include <jni.h>
#include <stdint.h>

#include <threadtime/arch.h>

#include "event_internal.h"

__attribute__((visibility("default"))) uint64_t tt_java_counter_read(void);
__attribute__((visibility("default"))) double tt_java_counter_hz(void);

uint64_t tt_java_counter_read(void)
{
    return tt__counter_read();
}

/* The counter's frequency if the core's calibration trusts it, else 0
 * (~25 ms, the first time in the process). */
double tt_java_counter_hz(void)
{
    double hz = 0;
    return tt__counter_calibrated(&hz) == 1 && hz > 0 ? hz : 0;
}

JNIEXPORT jlong JNICALL Java_io_threadtime_CycleCounter_read(JNIEnv *jni, jclass cls)
{
    (void)jni;
    (void)cls;
    return (jlong)tt__counter_read();
}

JNIEXPORT jdouble JNICALL Java_io_threadtime_CycleCounter_hz(JNIEnv *jni, jclass cls)
{
    (void)jni;
    (void)cls;
    return tt_java_counter_hz();
}
