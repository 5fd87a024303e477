/* JNI glue for io.threadtime.JniBackend (JDK 17-21, and JDK 22+ on request).
 *
 * Each function is one core call and at most one array copy: no lookups, no
 * allocation, no exceptions raised here. Errors travel back as the core's
 * negative errno, which the Java side turns into -1 or an exception. The
 * FFM backend does not use this file; it calls the tt_ symbols directly.
 */
#include <jni.h>
#include <stdint.h>

#include "threadtime/threadtime.h"

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

JNIEXPORT jint FN(selfTimes)(JNIEnv *env, jobject self, jlongArray out)
{
    (void)self;
    tt_times t;
    int rc = tt_self_times(&t);
    if (rc == 0)
        put_times(env, out, &t);
    return rc;
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
