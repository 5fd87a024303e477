/* JNI glue for io.threadtime.JniBackend: the backend of JDK 17-21, and on
 * JDK 22+ what the FFM backend calls until its handles are linked, and for
 * the calls it never links (Backend.java's list says which).
 *
 * Each function is one core call plus moving its arguments (a copy of a
 * small array, or a byte[] path handed over by pointer); no lookups and no
 * exceptions raised here. Errors travel back as the core's
 * negative errno, which the Java side turns into -1 or an exception.
 * NativeListTest holds each function here to the method of Backend.java
 * that names its core call.
 */
#include <jni.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "threadtime/threadtime.h"
#include "internal.h"

#define FN(name) JNICALL Java_io_threadtime_JniBackend_##name

/* Copies a split into a Java long[3] as {user, system, total}. */
static void put_times(JNIEnv *env, jlongArray out, const tt_times *t)
{
    jlong v[3] = {t->user_ns, t->system_ns, t->total_ns};
    (*env)->SetLongArrayRegion(env, out, 0, 3, v);
}

JNIEXPORT jstring FN(version)(JNIEnv *env, jobject self)
{
    (void)self;
    return (*env)->NewStringUTF(env, tt_version());
}

JNIEXPORT jstring FN(strerror)(JNIEnv *env, jobject self, jlong code)
{
    (void)self;
    return (*env)->NewStringUTF(env, tt_strerror(code));
}

JNIEXPORT jlong FN(selfTotal)(JNIEnv *env, jobject self)
{
    (void)env, (void)self;
    return tt_self_total_ns();
}

/* Static (JniBackend.fastRead): see there. */
JNIEXPORT jlong FN(fastRead)(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return tt_self_fast_ns();
}

/* The core decides on its first tt_self_fast_ns() whether the fast clock can
 * be used: it calibrates the cycle counter (two 12.5 ms windows asleep) and
 * tests the kernel (three short sleeps), all on the calling thread. A caller
 * that finds the decision under way does not wait: it reads the kernel's
 * clock. So the decision is claimed here and made on a thread of its own,
 * and a Java thread's first read costs one system call, not ~25 ms. */
static void *decide_fast_clock(void *unused)
{
    (void)unused;
    tt__fast_decide_claimed();
    return NULL;
}

JNIEXPORT void JNICALL Java_io_threadtime_JniBackend_decideFastClock(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    /* Claimed before the thread exists, so the caller need not wait for it
     * to be scheduled (a thread start on a loaded host took 0.1-12 ms). */
    if (!tt__fast_decide_claim())
        return; /* made, or under way */
    pthread_attr_t attr;
    pthread_t t;
    int rc = pthread_attr_init(&attr);
    if (rc == 0) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        rc = pthread_create(&t, &attr, decide_fast_clock, NULL);
        pthread_attr_destroy(&attr);
    }
    if (rc != 0)
        tt__fast_decide_claimed(); /* here, then, as the first read would */
}

JNIEXPORT jstring FN(fastClockName)(JNIEnv *env, jobject self)
{
    (void)self;
    return (*env)->NewStringUTF(env, tt_fast_clock_name());
}

JNIEXPORT jint FN(fastClockSet)(JNIEnv *env, jobject self, jint on)
{
    (void)env, (void)self;
    return tt_fast_clock_set(on);
}

JNIEXPORT jlong FN(selfUser)(JNIEnv *env, jobject self)
{
    (void)env, (void)self;
    return tt_self_user_raw_ns();
}

JNIEXPORT jlong FN(selfSystem)(JNIEnv *env, jobject self)
{
    (void)env, (void)self;
    return tt_self_system_raw_ns();
}

JNIEXPORT jlong FN(tidSystem)(JNIEnv *env, jobject self, jint tid)
{
    (void)env, (void)self;
    return tt_tid_system_raw_ns((pid_t)tid);
}

/* A handle travels to Java as its address; user-space addresses are
 * positive on the supported platforms, so a negative value is an errno. */
JNIEXPORT jlong FN(threadOpenSelf)(JNIEnv *env, jobject self)
{
    (void)env, (void)self;
    tt_thread *h;
    int rc = tt_thread_open(0, &h);
    return rc != 0 ? rc : (jlong)(intptr_t)h;
}

JNIEXPORT void FN(threadClose)(JNIEnv *env, jobject self, jlong h)
{
    (void)env, (void)self;
    tt_thread_close((tt_thread *)(intptr_t)h);
}

JNIEXPORT jint FN(threadTid)(JNIEnv *env, jobject self, jlong h)
{
    (void)env, (void)self;
    return tt_thread_tid((const tt_thread *)(intptr_t)h);
}

JNIEXPORT jlong FN(threadTotal)(JNIEnv *env, jobject self, jlong h)
{
    (void)env, (void)self;
    return tt_thread_total_ns((tt_thread *)(intptr_t)h);
}

JNIEXPORT jlong FN(threadUser)(JNIEnv *env, jobject self, jlong h)
{
    (void)env, (void)self;
    return tt_thread_user_raw_ns((tt_thread *)(intptr_t)h);
}

JNIEXPORT jint FN(threadTimes)(JNIEnv *env, jobject self, jlong h, jlongArray out)
{
    (void)self;
    tt_times t;
    int rc = tt_thread_times((tt_thread *)(intptr_t)h, &t);
    if (rc == 0)
        put_times(env, out, &t);
    return rc;
}

JNIEXPORT jlong FN(processTotal)(JNIEnv *env, jobject self)
{
    (void)env, (void)self;
    return tt_process_total_ns(0);
}

JNIEXPORT jlong FN(processUser)(JNIEnv *env, jobject self)
{
    (void)env, (void)self;
    return tt_process_user_raw_ns(0);
}

JNIEXPORT jint FN(processTimes)(JNIEnv *env, jobject self, jlongArray out)
{
    (void)self;
    tt_times t;
    int rc = tt_process_times(0, &t);
    if (rc == 0)
        put_times(env, out, &t);
    return rc;
}

/* ---- where the time went besides the CPU ---- */

JNIEXPORT jint FN(tidSched)(JNIEnv *env, jobject self, jint tid, jlongArray out)
{
    (void)self;
    tt_sched s;
    int rc = tt_tid_sched((pid_t)tid, &s);
    if (rc == 0) {
        jlong v[5] = {s.on_cpu_ns, s.run_wait_ns, s.timeslices, s.voluntary_switches, s.involuntary_switches};
        (*env)->SetLongArrayRegion(env, out, 0, 5, v);
    }
    return rc;
}

JNIEXPORT jlong FN(selfRunWait)(JNIEnv *env, jobject self)
{
    (void)env, (void)self;
    return tt_self_run_wait_ns();
}

JNIEXPORT jint FN(cgroupCpu)(JNIEnv *env, jobject self, jlongArray out)
{
    (void)self;
    tt_cgroup_cpu c;
    int rc = tt_cgroup_cpu_read(&c);
    if (rc == 0) {
        jlong v[6] = {c.version, c.periods, c.throttled_periods, c.throttled_ns, c.quota_us, c.period_us};
        (*env)->SetLongArrayRegion(env, out, 0, 6, v);
    }
    return rc;
}

/* ---- the event log ---- */

/* A NUL-terminated byte[] from Java as a C string (NULL for null); the
 * caller passes the same array to release_cstring. */
static const char *get_cstring(JNIEnv *env, jbyteArray a)
{
    return a == NULL ? NULL : (const char *)(*env)->GetByteArrayElements(env, a, NULL);
}

static void release_cstring(JNIEnv *env, jbyteArray a, const char *s)
{
    if (a != NULL && s != NULL)
        (*env)->ReleaseByteArrayElements(env, a, (jbyte *)s, JNI_ABORT);
}

JNIEXPORT jint FN(logStart)(JNIEnv *env, jobject self, jint ring_records, jbyteArray crash_file,
                            jbyteArray exit_dump, jboolean cpu_on_intervals)
{
    (void)self;
    /* Only the first four options are set; .size tells the core so, and it
     * takes the environment or its defaults for the fields after them. */
    tt_log_options o = {0};
    o.size = offsetof(tt_log_options, cpu_on_intervals) + sizeof o.cpu_on_intervals;
    o.ring_records = (uint32_t)ring_records;
    o.crash_file = get_cstring(env, crash_file);
    o.exit_dump_path = get_cstring(env, exit_dump);
    o.cpu_on_intervals = cpu_on_intervals;
    int rc = (crash_file != NULL && o.crash_file == NULL) || (exit_dump != NULL && o.exit_dump_path == NULL)
                 ? -ENOMEM
                 : tt_log_start(&o);
    release_cstring(env, crash_file, o.crash_file);
    release_cstring(env, exit_dump, o.exit_dump_path);
    return rc;
}

JNIEXPORT jint FN(logStop)(JNIEnv *env, jobject self)
{
    (void)env, (void)self;
    return tt_log_stop();
}

/* Calls fn with a byte[] path or name as a C string. */
static jint with_cstring(JNIEnv *env, jbyteArray a, int (*fn)(const char *))
{
    const char *s = get_cstring(env, a);
    if (s == NULL)
        return -ENOMEM;
    int rc = fn(s);
    release_cstring(env, a, s);
    return rc;
}

JNIEXPORT jint FN(logDump)(JNIEnv *env, jobject self, jbyteArray path)
{
    (void)self;
    return with_cstring(env, path, tt_log_dump);
}

JNIEXPORT jint FN(logThreadName)(JNIEnv *env, jobject self, jbyteArray name)
{
    (void)self;
    return with_cstring(env, name, tt_log_thread_name);
}

JNIEXPORT void FN(event)(JNIEnv *env, jobject self, jint id)
{
    (void)env, (void)self;
    tt_event((uint32_t)id);
}

/* The Java side hands over TT_EVENT_TEXT_MAX bytes and a NUL: copied to the
 * stack (17 bytes), cheaper than pinning the array. */
JNIEXPORT void FN(eventText)(JNIEnv *env, jobject self, jint id, jbyteArray text)
{
    (void)self;
    char buf[TT_EVENT_TEXT_MAX + 1];
    (*env)->GetByteArrayRegion(env, text, 0, TT_EVENT_TEXT_MAX + 1, (jbyte *)buf);
    buf[TT_EVENT_TEXT_MAX] = '\0';
    tt_event_text((uint32_t)id, buf);
}

JNIEXPORT void FN(eventValue)(JNIEnv *env, jobject self, jint id, jlong value)
{
    (void)env, (void)self;
    tt_event_value((uint32_t)id, (uint64_t)value);
}

JNIEXPORT void FN(eventBegin)(JNIEnv *env, jobject self, jint id)
{
    (void)env, (void)self;
    tt_event_begin((uint32_t)id);
}

JNIEXPORT void FN(eventEnd)(JNIEnv *env, jobject self, jint id)
{
    (void)env, (void)self;
    tt_event_end((uint32_t)id);
}

JNIEXPORT jint FN(eventName)(JNIEnv *env, jobject self, jint id, jbyteArray name)
{
    (void)self;
    const char *s = get_cstring(env, name);
    if (s == NULL)
        return -ENOMEM;
    int rc = tt_event_name((uint32_t)id, s);
    release_cstring(env, name, s);
    return rc;
}

JNIEXPORT jint FN(logVthreadName)(JNIEnv *env, jobject self, jlong vthread_id, jbyteArray name)
{
    (void)self;
    const char *s = get_cstring(env, name);
    if (s == NULL)
        return -ENOMEM;
    int rc = tt_log_vthread_name((uint64_t)vthread_id, s);
    release_cstring(env, name, s);
    return rc;
}

/* ---- virtual-thread markers and probes: the -javaagent's hot path ---- */

JNIEXPORT void FN(eventMount)(JNIEnv *env, jobject self, jlong vthread_id)
{
    (void)env, (void)self;
    tt_event_mount((uint64_t)vthread_id);
}

JNIEXPORT void FN(eventUnmount)(JNIEnv *env, jobject self, jlong vthread_id)
{
    (void)env, (void)self;
    tt_event_unmount((uint64_t)vthread_id);
}

JNIEXPORT jlong FN(probeBegin)(JNIEnv *env, jobject self, jint id)
{
    (void)env, (void)self;
    return (jlong)tt_probe_begin((uint32_t)id);
}

JNIEXPORT void FN(probeEnd)(JNIEnv *env, jobject self, jint id, jlong t0, jboolean thrown)
{
    (void)env, (void)self;
    tt_probe_end((uint32_t)id, (uint64_t)t0, thrown);
}

JNIEXPORT jlong FN(probeBeginCpu)(JNIEnv *env, jobject self, jint id)
{
    (void)env, (void)self;
    return (jlong)tt_probe_begin_cpu((uint32_t)id);
}

JNIEXPORT void FN(probeEndCpu)(JNIEnv *env, jobject self, jint id, jlong t0, jboolean thrown)
{
    (void)env, (void)self;
    tt_probe_end_cpu((uint32_t)id, (uint64_t)t0, thrown);
}

JNIEXPORT void FN(probeEndMeasured)(JNIEnv *env, jobject self, jint id, jlong t0, jlong ns, jint measure,
                                    jboolean thrown)
{
    (void)env, (void)self;
    tt_probe_end_measured((uint32_t)id, (uint64_t)t0, (int64_t)ns, (tt_probe_measure)measure, thrown);
}
