/* threadtime-vthreads: a JVMTI agent that charges CPU time to virtual threads.
 *
 * HotSpot (JDK 21+) posts two extension events around each stretch a virtual
 * thread spends on a carrier: com.sun.hotspot.events.VirtualThreadMount once
 * it is mounted (the first one right after VirtualThreadStart) and
 * com.sun.hotspot.events.VirtualThreadUnmount just before it leaves (the
 * last one right before VirtualThreadEnd). Both callbacks run on the carrier
 * with the virtual thread as JVMTI's current thread, so
 *   - "this thread's clock" is the carrier's clock, and
 *   - GetThreadLocalStorage(NULL) is the virtual thread's storage, read
 *     without a VM transition (a few loads).
 *
 *   mount    a = storage (first mount: take an account, store it there);
 *            mark = clock now; carrier = this kernel tid
 *   unmount  total += clock now - mark
 *   end      (VirtualThreadEnd) the account is recycled
 *
 * A mount or unmount touches the virtual thread's own account and the
 * carrier's own thread-locals, nothing shared: no global map, no shared
 * counter (a global counter on this path is what made a loaded agent cost
 * 3x on a million-virtual-thread benchmark until JDK-8330969). The shared
 * account pool is touched once per 256 threads a carrier starts or ends.
 *
 * Java reads the figures through the JNI natives of
 * io.threadtime.JvmtiAccounts at the end of this file. HotSpot binds a
 * native method it cannot find in the class loader's libraries to a matching
 * symbol exported by an agent library, so no System.load and no
 * RegisterNatives are involved.
 *
 * Whatever the JVM lacks (JVMTI 21, the capability, the events), the agent
 * says so in one line on stderr and stays passive: Java then sees the mode
 * PASSIVE and every figure is -1, as without the agent.
 */
#include <jvmti.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "account.h"
#include "clock.h"
#include "options.h"
#include "prim/thread.h"
#include "settings.h"

#define MOUNT_EVENT "com.sun.hotspot.events.VirtualThreadMount"
#define UNMOUNT_EVENT "com.sun.hotspot.events.VirtualThreadUnmount"

/* What the agent does. Only C uses these numbers: Java reads the state by
 * its name (agentMode, below), one of the constant names of
 * io.threadtime.VirtualThreadCpu.Mode, the one list of modes, which the
 * -javaagent's hooks report theirs with too. A name Java does not know reads
 * as PASSIVE there; each state is read back by a test of its own
 * (ExactModeTest, MountedModeTest, EventsOffTest, JvmtiRefusedTest). */
enum {
    VT_STATE_PASSIVE,    /* loaded, but this JVM cannot support it */
    VT_STATE_EVENTS_OFF, /* events=off or =empty: nothing charged */
    VT_STATE_EXACT,
    VT_STATE_MOUNTED,
};
static const char *const VT_STATE_NAME[] = {
    [VT_STATE_PASSIVE] = "PASSIVE",
    [VT_STATE_EVENTS_OFF] = "EVENTS_OFF",
    [VT_STATE_EXACT] = "EXACT",
    [VT_STATE_MOUNTED] = "MOUNTED",
};

static jvmtiEnv *g_jvmti;
static int g_state = VT_STATE_PASSIVE;
/* java.lang.Thread's `tid` field: who owns an account (resolved lazily). */
static jfieldID g_tid_field;
static int g_tid_missing;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("threadtime-vthreads: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- per carrier ---- */

/* The carrier's kernel tid, fetched once per carrier. initial-exec: one
 * %fs-relative load on every mount. */
static __thread pid_t t_tid __attribute__((tls_model("initial-exec")));

static pid_t carrier_tid(void)
{
    if (t_tid == 0)
        t_tid = tt__gettid();
    return t_tid;
}

/* The account of the virtual thread mounted on this carrier, from its mount
 * to its unmount: the unmount finds it here instead of asking JVMTI for the
 * thread's storage again (a call through the JVMTI function table and two
 * HotSpot functions). A carrier runs one virtual thread at a time, and
 * HotSpot posts a thread's unmount on the carrier that posted its mount. */
static __thread vt_account *t_mounted __attribute__((tls_model("initial-exec")));

/* ---- per virtual thread ---- */

static vt_account *current_account(jvmtiEnv *jvmti)
{
    void *p = NULL;
    if ((*jvmti)->GetThreadLocalStorage(jvmti, NULL, &p) != JVMTI_ERROR_NONE)
        return NULL;
    return p;
}

/* The thread id Java knows the thread by (Thread.threadId()); -1 if this
 * JVM's Thread has no `tid` field, which leaves the account readable only
 * by its own thread. */
static jlong owner_id(JNIEnv *jni, jthread thread)
{
    jfieldID f = __atomic_load_n(&g_tid_field, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        jclass c = (*jni)->FindClass(jni, "java/lang/Thread");
        f = c ? (*jni)->GetFieldID(jni, c, "tid", "J") : NULL;
        if (f == NULL) {
            (*jni)->ExceptionClear(jni);
            if (!__atomic_exchange_n(&g_tid_missing, 1, __ATOMIC_RELAXED))
                say("java.lang.Thread has no long field 'tid' here: only a virtual thread itself can "
                    "read its CPU time");
            return -1;
        }
        /* Release: any thread that sees the id may use it (ids are stable). */
        __atomic_store_n(&g_tid_field, f, __ATOMIC_RELEASE);
    }
    return (*jni)->GetLongField(jni, thread, f);
}

/* First mount of a thread: an account, stored in the thread's storage. */
static vt_account *adopt(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread)
{
    vt_account *a = vt_account_take(owner_id(jni, vthread));
    if (a == NULL)
        return NULL; /* out of memory: this thread goes uncharged */
    if ((*jvmti)->SetThreadLocalStorage(jvmti, NULL, a) != JVMTI_ERROR_NONE) {
        vt_account_give(a);
        return NULL;
    }
    return a;
}

static void JNICALL on_mount(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread)
{
    vt_account *a = current_account(jvmti);
    if (a == NULL)
        a = adopt(jvmti, jni, vthread);
    t_mounted = a;
    if (a == NULL)
        return;
    int64_t now = vt_clock_now();
    if (now >= 0)
        vt_account_open(a, now, carrier_tid());
}

static void JNICALL on_unmount(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread)
{
    (void)jni;
    (void)vthread;
    vt_account *a = t_mounted;
    t_mounted = NULL;
    /* None noted: a thread mounted before a late attach enabled the events. */
    if (a == NULL)
        a = current_account(jvmti);
    if (a != NULL)
        vt_account_close(a, vt_clock_now());
}

/* events=empty: both events delivered to this, which does nothing, so that
 * the benchmark can tell HotSpot's cost of posting them from the agent's. */
static void JNICALL on_nothing(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread)
{
    (void)jvmti;
    (void)jni;
    (void)vthread;
}

static void JNICALL on_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread)
{
    (void)jni;
    (void)vthread;
    vt_account *a = current_account(jvmti);
    if (a == NULL)
        return;
    /* HotSpot posts the last unmount before this; close anyway in case a
     * JVM does not. The JVM drops the thread's storage right after. */
    if (t_mounted == a)
        t_mounted = NULL;
    vt_account_close(a, vt_clock_now());
    vt_account_give(a);
}

/* ---- start-up ---- */

/* The options are the rows of src/settings.def that options.h is generated
 * from; what each value means is decided here, so a value added there stops
 * the build until it is. */
_Static_assert(VT_OPT_MODE_VALUES == 2, "mode=: exact and mounted");
_Static_assert(VT_OPT_EVENTS_VALUES == 3, "events=: on, off and empty");

/* KEY=VALUE items, comma-separated, in any order, each key at most once:
 * "mode=exact,mode=mounted" is refused like an unknown option rather than
 * letting the last one win, and so is an empty item ("mode=exact,"), as the
 * -javaagent's parser refuses them (java/agent's AgentOptionsGrammarTest
 * feeds both the same strings). value[key] is the index of its value in
 * VT_OPTIONS[key].values, the default for a key left out. */
static int parse_options(const char *text, int value[VT_OPT_COUNT])
{
    for (int k = 0; k < VT_OPT_COUNT; k++)
        value[k] = VT_OPTIONS[k].dflt;
    if (text == NULL || *text == '\0')
        return 0;
    unsigned seen = 0;
    for (const char *p = text;; p++) { /* p++: past the comma; an item follows, if only an empty one */
        size_t n = strcspn(p, ",");
        const char *eq = memchr(p, '=', n);
        int k = 0, v = -1;
        for (; eq != NULL && k < VT_OPT_COUNT; k++) {
            const char *key = VT_OPTIONS[k].key;
            if (strlen(key) == (size_t)(eq - p) && memcmp(key, p, (size_t)(eq - p)) == 0) {
                v = tt__setting_value_index(VT_OPTIONS[k].values, eq + 1, n - (size_t)(eq + 1 - p));
                break;
            }
        }
        if (v < 0 || seen & 1u << k) {
            say("unknown or conflicting option '%.*s' in '%s' (expected " VT_OPTIONS_HELP ", each at most once)",
                (int)n, p, text);
            return -1;
        }
        seen |= 1u << k;
        value[k] = v;
        p += n;
        if (*p == '\0')
            return 0;
    }
}

/* The two extension events must have the shape this agent's callbacks
 * have: (jvmtiEnv *, JNIEnv *, jthread). */
static int shape_ok(const jvmtiExtensionEventInfo *e)
{
    return e->param_count == 2 && e->params[0].base_type == JVMTI_TYPE_JNIENV &&
           e->params[1].base_type == JVMTI_TYPE_JTHREAD;
}

static void release_info(jvmtiEnv *jvmti, jvmtiExtensionEventInfo *e)
{
    for (jint j = 0; j < e->param_count; j++)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)e->params[j].name);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)e->params);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)e->short_description);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)e->id);
}

/* Finds the extension indexes; -1 where the event is missing or shaped
 * differently. */
static void find_events(jvmtiEnv *jvmti, jint *mount, jint *unmount)
{
    jint n = 0;
    jvmtiExtensionEventInfo *ev = NULL;
    *mount = *unmount = -1;
    if ((*jvmti)->GetExtensionEvents(jvmti, &n, &ev) != JVMTI_ERROR_NONE)
        return;
    for (jint i = 0; i < n; i++) {
        if (shape_ok(&ev[i]) && strcmp(ev[i].id, MOUNT_EVENT) == 0)
            *mount = ev[i].extension_event_index;
        else if (shape_ok(&ev[i]) && strcmp(ev[i].id, UNMOUNT_EVENT) == 0)
            *unmount = ev[i].extension_event_index;
        release_info(jvmti, &ev[i]);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)ev);
}

/* jvmtiExtensionEvent is declared variadic; HotSpot calls it with exactly
 * the parameters GetExtensionEvents described, which shape_ok() checked. */
typedef void (*any_function)(void);
#define AS_EXTENSION_EVENT(f) ((jvmtiExtensionEvent)(any_function)(f))

/* HotSpot wants both steps for an extension event: the callback, and the
 * event switched on under its extension index like a standard event. */
static int enable_extension(jvmtiEnv *jvmti, jint index, jvmtiExtensionEvent callback)
{
    return (*jvmti)->SetExtensionEventCallback(jvmti, index, callback) == JVMTI_ERROR_NONE &&
                   (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, (jvmtiEvent)index, NULL) ==
                       JVMTI_ERROR_NONE
               ? 0
               : -1;
}

static void disable_extension(jvmtiEnv *jvmti, jint index)
{
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, (jvmtiEvent)index, NULL);
    (*jvmti)->SetExtensionEventCallback(jvmti, index, NULL);
}

/* Both extension events, unmount first, so a mount is never left unclosed;
 * neither if either fails. */
static int enable_pair(jvmtiEnv *jvmti, jint mount, jvmtiExtensionEvent on_m, jint unmount,
                       jvmtiExtensionEvent on_u)
{
    if (enable_extension(jvmti, unmount, on_u) == 0 && enable_extension(jvmti, mount, on_m) == 0)
        return 0;
    disable_extension(jvmti, mount);
    disable_extension(jvmti, unmount);
    return -1;
}

/* ---- HotSpot's transition path ---- */

#define TRANSITIONS_FLAG "DoJVMTIVirtualThreadTransitions"

/* The extension indexes, for switching the events off again. */
static jint g_mount = -1, g_unmount = -1;

/* 1 if HotSpot's experimental flag DoJVMTIVirtualThreadTransitions is
 * false, 0 if it is true, -1 if it cannot be read. Read through
 * HotSpotDiagnosticMXBean, the flag's one public reader (JVMTI's system
 * properties do not hold flags). That bean hides an experimental flag until
 * -XX:+UnlockExperimentalVMOptions: hidden, the flag has its default, true. */
static int transitions_off(JNIEnv *jni)
{
    jclass factory = (*jni)->FindClass(jni, "java/lang/management/ManagementFactory");
    jclass diag = factory ? (*jni)->FindClass(jni, "com/sun/management/HotSpotDiagnosticMXBean") : NULL;
    jclass option = diag ? (*jni)->FindClass(jni, "com/sun/management/VMOption") : NULL;
    jclass hidden = option ? (*jni)->FindClass(jni, "java/lang/IllegalArgumentException") : NULL;
    if (hidden == NULL) {
        (*jni)->ExceptionClear(jni);
        return -1;
    }
    jmethodID get_bean = (*jni)->GetStaticMethodID(jni, factory, "getPlatformMXBean",
                                                   "(Ljava/lang/Class;)Ljava/lang/management/PlatformManagedObject;");
    jmethodID get_option =
        (*jni)->GetMethodID(jni, diag, "getVMOption", "(Ljava/lang/String;)Lcom/sun/management/VMOption;");
    jmethodID get_value = (*jni)->GetMethodID(jni, option, "getValue", "()Ljava/lang/String;");
    jstring name = (*jni)->NewStringUTF(jni, TRANSITIONS_FLAG);
    jobject bean = get_bean && get_option && get_value && name
                       ? (*jni)->CallStaticObjectMethod(jni, factory, get_bean, diag)
                       : NULL;
    jobject value = NULL;
    if (bean != NULL) {
        jobject opt = (*jni)->CallObjectMethod(jni, bean, get_option, name);
        jthrowable e = (*jni)->ExceptionOccurred(jni);
        if (e != NULL) {
            (*jni)->ExceptionClear(jni);
            return (*jni)->IsInstanceOf(jni, e, hidden) ? 0 : -1;
        }
        value = (*jni)->CallObjectMethod(jni, opt, get_value);
    }
    if (value == NULL) {
        (*jni)->ExceptionClear(jni);
        return -1;
    }
    const char *v = (*jni)->GetStringUTFChars(jni, value, NULL);
    if (v == NULL) {
        (*jni)->ExceptionClear(jni);
        return -1;
    }
    int off = strcmp(v, "false") == 0;
    (*jni)->ReleaseStringUTFChars(jni, value, v);
    return off;
}

/* With the flag false HotSpot posts no virtual-thread event: the agent
 * would report its mode and charge 0 to every thread. It stops charging
 * instead, so every figure reads -1, and says why. */
static void check_transitions(jvmtiEnv *jvmti, JNIEnv *jni)
{
    int off = transitions_off(jni);
    if (off < 0)
        say("could not read the flag " TRANSITIONS_FLAG " through HotSpotDiagnosticMXBean; assuming it is on");
    if (off != 1)
        return;
    __atomic_store_n(&g_state, VT_STATE_PASSIVE, __ATOMIC_RELEASE);
    disable_extension(jvmti, g_mount);
    disable_extension(jvmti, g_unmount);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_VIRTUAL_THREAD_END, NULL);
    say("refusing to start: -XX:-" TRANSITIONS_FLAG " switches off the virtual-thread events this agent "
        "counts on, so every virtual thread would read 0; virtual threads read -1 instead. Use "
        "-javaagent:threadtime.jar, which works with that flag, or drop the flag");
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)thread;
    check_transitions(jvmti, jni);
}

/* at_init: also check the flag at VMInit (a load at start-up; an attach
 * checks at once). */
static int enable_events(jvmtiEnv *jvmti, jint mount, jint unmount, int at_init)
{
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VirtualThreadEnd = on_end;
    cb.VMInit = on_vm_init;
    /* VirtualThreadEnd first: no account is handed out before its owner's
     * end can recycle it. */
    if ((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE ||
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VIRTUAL_THREAD_END, NULL) !=
            JVMTI_ERROR_NONE)
        return -1;
    if (enable_pair(jvmti, mount, AS_EXTENSION_EVENT(on_mount), unmount, AS_EXTENSION_EVENT(on_unmount)) != 0) {
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_VIRTUAL_THREAD_END, NULL);
        return -1;
    }
    g_mount = mount;
    g_unmount = unmount;
    if (at_init)
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
    return 0;
}

/* Shared by -agentpath (OnLoad) and a late attach (OnAttach). Returns
 * JNI_ERR only for options the user got wrong; anything the JVM lacks
 * leaves the agent passive and the JVM running. */
static jint start(JavaVM *vm, const char *text, int attach)
{
    int o[VT_OPT_COUNT];
    if (parse_options(text, o) != 0)
        return JNI_ERR;
    vt_mode mode = o[VT_OPT_MODE] == VT_OPT_MODE_EXACT ? VT_MODE_EXACT : VT_MODE_MOUNTED;
    if (g_jvmti != NULL) {
        say("already loaded; this second load changes nothing");
        return JNI_OK;
    }
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_21) != JNI_OK) {
        say("this JVM has no JVMTI 21 (virtual threads need JDK 21+); staying passive");
        return JNI_OK;
    }
    g_jvmti = jvmti;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    if ((*jvmti)->GetPotentialCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE || !caps.can_support_virtual_threads) {
        say("this JVM cannot give can_support_virtual_threads; staying passive");
        return JNI_OK;
    }
    memset(&caps, 0, sizeof caps);
    caps.can_support_virtual_threads = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
        say("AddCapabilities(can_support_virtual_threads) failed; staying passive");
        return JNI_OK;
    }
    jint mount, unmount;
    find_events(jvmti, &mount, &unmount);
    if (mount < 0 || unmount < 0) {
        say("this JVM does not offer the extension events %s and %s; staying passive", MOUNT_EVENT,
            UNMOUNT_EVENT);
        return JNI_OK;
    }
    if (o[VT_OPT_EVENTS] == VT_OPT_EVENTS_EMPTY &&
        enable_pair(jvmti, mount, AS_EXTENSION_EVENT(on_nothing), unmount, AS_EXTENSION_EVENT(on_nothing)) != 0) {
        say("could not enable the virtual-thread events; staying passive");
        return JNI_OK;
    }
    if (o[VT_OPT_EVENTS] != VT_OPT_EVENTS_ON) { /* off, or delivered to on_nothing */
        __atomic_store_n(&g_state, VT_STATE_EVENTS_OFF, __ATOMIC_RELEASE);
        return JNI_OK;
    }
    vt_clock_init(mode);
    if (enable_events(jvmti, mount, unmount, !attach) != 0) {
        say("could not enable the virtual-thread events; staying passive");
        return JNI_OK;
    }
    __atomic_store_n(&g_state, mode == VT_MODE_EXACT ? VT_STATE_EXACT : VT_STATE_MOUNTED, __ATOMIC_RELEASE);
    JNIEnv *jni = NULL;
    if (attach && (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_8) == JNI_OK)
        check_transitions(jvmti, jni);
    return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    return start(vm, options, 0);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    return start(vm, options, 1);
}

/* ---- what Java calls (io.threadtime.JvmtiAccounts) ---- */

static int active(void)
{
    int s = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
    return s == VT_STATE_EXACT || s == VT_STATE_MOUNTED;
}

JNIEXPORT jstring JNICALL Java_io_threadtime_JvmtiAccounts_agentMode(JNIEnv *jni, jclass cls)
{
    (void)cls;
    return (*jni)->NewStringUTF(jni, VT_STATE_NAME[__atomic_load_n(&g_state, __ATOMIC_ACQUIRE)]);
}

JNIEXPORT jstring JNICALL Java_io_threadtime_JvmtiAccounts_clockName(JNIEnv *jni, jclass cls)
{
    (void)cls;
    return (*jni)->NewStringUTF(jni, active() ? vt_clock_name() : "none");
}

/* The calling virtual thread's CPU time, ns; -1 if the agent is not
 * charging or has no account for it (a platform thread, or a virtual
 * thread that has not been mounted since the agent attached). A JNI call
 * pins the thread, so the segment read here is open on this carrier. */
JNIEXPORT jlong JNICALL Java_io_threadtime_JvmtiAccounts_currentCpuTime(JNIEnv *jni, jclass cls)
{
    (void)jni;
    (void)cls;
    if (!active())
        return -1;
    vt_account *a = current_account(g_jvmti);
    if (a == NULL)
        return -1;
    return vt_clock_to_ns(vt_account_self(a, vt_clock_now()));
}

/* java.lang.VirtualThread (a global reference), its `state` field and the
 * class's own STARTED code (read from it, not copied); NULL field until
 * first needed, g_state_missing once this JVM turned out to lack them. */
static jclass g_vthread_class;
static jfieldID g_state_field;
static jint g_started;
static int g_state_missing;

/* 1 if `thread` is a virtual thread that has been started but has not run
 * yet (its account is taken at its first mount), else 0. */
static int not_yet_run(JNIEnv *jni, jthread thread)
{
    jfieldID f = __atomic_load_n(&g_state_field, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        if (__atomic_load_n(&g_state_missing, __ATOMIC_RELAXED))
            return 0;
        jclass c = (*jni)->FindClass(jni, "java/lang/VirtualThread");
        jfieldID started = c ? (*jni)->GetStaticFieldID(jni, c, "STARTED", "I") : NULL;
        f = started ? (*jni)->GetFieldID(jni, c, "state", "I") : NULL;
        jclass global = f ? (*jni)->NewGlobalRef(jni, c) : NULL;
        if (global == NULL) {
            (*jni)->ExceptionClear(jni);
            __atomic_store_n(&g_state_missing, 1, __ATOMIC_RELAXED);
            return 0;
        }
        /* Two threads may both get here: each stores the same values (and
         * one global reference to the class is left over, once). */
        __atomic_store_n(&g_started, (*jni)->GetStaticIntField(jni, c, started), __ATOMIC_RELAXED);
        __atomic_store_n(&g_vthread_class, global, __ATOMIC_RELAXED);
        /* Release: a thread that sees the field sees the class and the code. */
        __atomic_store_n(&g_state_field, f, __ATOMIC_RELEASE);
    }
    return (*jni)->IsInstanceOf(jni, thread, __atomic_load_n(&g_vthread_class, __ATOMIC_RELAXED)) &&
           (*jni)->GetIntField(jni, thread, f) == __atomic_load_n(&g_started, __ATOMIC_RELAXED);
}

/* Another virtual thread's CPU time, ns; 0 if it has been started but has
 * not run yet; -1 if the agent is not charging, the thread has no account
 * otherwise, or the account is no longer that thread's (it ended).
 * GetThreadLocalStorage on another thread costs a VM transition and a short
 * transition-disabling handshake with that thread. */
JNIEXPORT jlong JNICALL Java_io_threadtime_JvmtiAccounts_cpuTime(JNIEnv *jni, jclass cls, jthread thread,
                                                                  jlong id)
{
    (void)cls;
    if (!active())
        return -1;
    /* Before the account is looked up: a thread not yet run then and
     * without an account after has been charged nothing, whatever came between. */
    int unrun = not_yet_run(jni, thread);
    void *p = NULL;
    if ((*g_jvmti)->GetThreadLocalStorage(g_jvmti, thread, &p) != JVMTI_ERROR_NONE || p == NULL)
        return unrun ? 0 : -1;
    int64_t units = vt_account_read(p, id, vt_clock_carrier_now);
    return units < 0 ? -1 : vt_clock_to_ns(units);
}

/* Accounts held by virtual threads now (taken at their first mount, given
 * back at their end). */
JNIEXPORT jlong JNICALL Java_io_threadtime_JvmtiAccounts_accountsInUse(JNIEnv *jni, jclass cls)
{
    (void)jni;
    (void)cls;
    return (jlong)vt_account_in_use();
}

/* Bytes the accounts occupy (live and spare). */
JNIEXPORT jlong JNICALL Java_io_threadtime_JvmtiAccounts_accountBytes(JNIEnv *jni, jclass cls)
{
    (void)jni;
    (void)cls;
    return (jlong)vt_account_bytes();
}
