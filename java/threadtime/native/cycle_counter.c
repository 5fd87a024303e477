/* The cycle counter for the -javaagent's mounted mode
 * (io.threadtime.CycleCounter): read through a critical FFM downcall on
 * JDK 22+ (tt_java_counter_read, ~11 ns here against ~38 ns for
 * System.nanoTime(); jvmti/bench/clock) and through JNI on JDK 21. The
 * frequency is the core's calibration, the one the JVMTI agent uses. Also,
 * through JNI only, exact mode's mount clock, which leaves the counter value
 * it read in a per-thread slot for the carrier-wait stamp (fastStamped): on
 * JDK 22+ the second read is a critical FFM downcall, and saving it measured
 * nothing (docs/where-time-went.md). */
#include <jni.h>
#include <stdint.h>

#include <threadtime/arch.h>

#include "event_internal.h"
#include "internal.h"

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

/* The counter value the calling thread's last fastStamped() read. Exact
 * mode's mount reads it with a plain load right after that call, on the same
 * carrier, at the address it learnt once per carrier (CycleCounter.stampSlot):
 * the carrier-wait stamp without a second native call. A JNI function that
 * stored it into a Java object instead would itself enter the VM, as dear as
 * the call it saves. initial-exec: one %fs-relative store. */
static __thread uint64_t t_stamp __attribute__((tls_model("initial-exec")));

/* The calling thread's CPU time, ns, as tt_self_fast_ns() reads it, from a
 * counter value read here, which is left in t_stamp: also where the fast
 * path does not answer (a re-arm, a system call, the fast clock off), so the
 * slot always holds a value read during this call. */
JNIEXPORT jlong JNICALL Java_io_threadtime_CycleCounter_fastStamped(JNIEnv *jni, jclass cls)
{
    (void)jni;
    (void)cls;
    uint64_t c = tt__counter_read();
    uint64_t anchor;
    int64_t ns = tt__fast_ns_at(c, &anchor);
    t_stamp = c;
    return ns;
}

JNIEXPORT jlong JNICALL Java_io_threadtime_CycleCounter_stampSlot(JNIEnv *jni, jclass cls)
{
    (void)jni;
    (void)cls;
    return (jlong)(uintptr_t)&t_stamp;
}
