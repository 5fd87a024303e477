package io.threadtime;

import java.lang.invoke.MethodHandle;
import java.lang.management.ThreadInfo;
import java.util.Arrays;
import java.util.Objects;
import java.lang.management.ManagementFactory;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanRegistrationException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/**
 * A drop-in {@link com.sun.management.ThreadMXBean}: the CPU- and user-time
 * reads (current thread, by id, by id array) go through threadtime; every
 * other method is the platform bean's.
 * <p>
 * Kept from the platform bean: -1 while CPU time measurement is disabled
 * ({@link #setThreadCpuTimeEnabled}, which is the platform's own switch),
 * for an unknown or terminated thread and for a virtual thread (but see
 * below);
 * {@link IllegalArgumentException} for an id &lt;= 0,
 * {@link NullPointerException} for a null array and
 * {@link UnsupportedOperationException} where the JVM does not support the
 * measurement.
 * <p>
 * User time keeps the meaning the JDK's bean gives it up to JDK 25: the
 * kernel's consistent split (what {@code /proc} reports, see
 * {@link CpuTimes}), at microsecond (current thread) or nanosecond (other
 * mapped threads) resolution instead of {@code /proc}'s 10 ms. It never
 * exceeds the thread's CPU time read after it and never goes back, also
 * across a thread's mapping (a thread that has not yet called threadtime
 * is read through the platform bean, see {@link ThreadTime#register()}).
 * It is not the raw tick clock JDK 26's bean reads, which under load can
 * fall far short ({@link ThreadTime#currentThreadUserTimeRaw()} has it).
 * <p>
 * Virtual threads: while the virtual-thread agent charges them (see
 * {@link VirtualThreadCpu}), the CPU time of the current thread, asked with
 * {@link #getCurrentThreadCpuTime()} or by its own id, is the agent's figure
 * on a virtual thread too. Their user time stays -1 (the agent keeps no user
 * clock), and so does the CPU time of another virtual thread asked by id:
 * the JDK offers no way to find a virtual thread by id, so use
 * {@link VirtualThreadCpu#threadCpuTime(Thread)}. Without the agent every
 * virtual-thread figure is -1, as from the platform.
 * <p>
 * Where threadtime's native library cannot load (a platform the JAR carries
 * none for, a missing file), every read is the platform bean's: the bean is
 * never worse than the JDK's. That is said once when it happens.
 */
public final class ThreadTimeMXBean implements com.sun.management.ThreadMXBean {
    private static final ThreadTimeMXBean INSTANCE = new ThreadTimeMXBean();
    private static final MethodHandle TOTAL_ALLOCATED =
            ThreadMap.findOptional(com.sun.management.ThreadMXBean.class, "getTotalThreadAllocatedBytes", long.class);

    private final com.sun.management.ThreadMXBean platform = ThreadMap.platform();

    private ThreadTimeMXBean() {}

    /** The bean (one per JVM, like the platform's). */
    public static ThreadTimeMXBean getInstance() {
        return INSTANCE;
    }

    /** The name {@link #registerMBean()} gives the bean: {@value}. */
    public static final String OBJECT_NAME = "io.threadtime:type=Threading";

    /**
     * Registers the bean with the platform MBean server as {@value #OBJECT_NAME},
     * beside the platform's {@code java.lang:type=Threading}, so that
     * JConsole, VisualVM and JMX exporters read its figures. Its attributes
     * and operations are the platform bean's. Idempotent; also safe when
     * called from several threads at once. ({@link #getObjectName()} still
     * answers the platform's name, as code using the bean as a drop-in
     * expects.)
     *
     * @return the name it is registered under
     * @throws SecurityException if the MBean server refuses it
     */
    public static ObjectName registerMBean() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = objectName();
        try {
            if (!server.isRegistered(name)) {
                server.registerMBean(INSTANCE, name);
            }
            return name;
        } catch (InstanceAlreadyExistsException raced) {
            return name;
        } catch (JMException e) {
            throw new IllegalStateException("threadtime: registering " + OBJECT_NAME + " failed", e);
        }
    }

    /** Removes what {@link #registerMBean()} registered; does nothing if it is not registered. */
    public static void unregisterMBean() {
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(objectName());
        } catch (InstanceNotFoundException notRegistered) {
            // nothing to do
        } catch (MBeanRegistrationException e) {
            throw new IllegalStateException("threadtime: unregistering " + OBJECT_NAME + " failed", e);
        }
    }

    private static ObjectName objectName() {
        try {
            return new ObjectName(OBJECT_NAME);
        } catch (MalformedObjectNameException e) {
            throw new AssertionError(e);
        }
    }

    // ---- CPU and user time: threadtime ----

    /**
     * The calling thread's precise CPU time, as {@link ThreadTime#currentThreadCpuTime()}
     * reads it: without a system call while the kernel shows that the thread
     * has not been switched out since the last real read. (User time still
     * costs one.) On a virtual thread, the agent's figure; see the class comment.
     */
    @Override
    public long getCurrentThreadCpuTime() {
        return currentEnabled() ? current(ThreadMap.Clock.TOTAL) : -1;
    }

    @Override
    public long getCurrentThreadUserTime() {
        return currentEnabled() ? current(ThreadMap.Clock.USER) : -1;
    }

    @Override
    public long getThreadCpuTime(long id) {
        return enabledFor(id) ? one(id, ThreadMap.Clock.TOTAL) : -1;
    }

    @Override
    public long getThreadUserTime(long id) {
        return enabledFor(id) ? one(id, ThreadMap.Clock.USER) : -1;
    }

    @Override
    public long[] getThreadCpuTime(long[] ids) {
        return many(ids, ThreadMap.Clock.TOTAL);
    }

    @Override
    public long[] getThreadUserTime(long[] ids) {
        return many(ids, ThreadMap.Clock.USER);
    }

    private boolean currentEnabled() {
        if (!platform.isCurrentThreadCpuTimeSupported()) {
            throw new UnsupportedOperationException("Current thread CPU time measurement is not supported.");
        }
        return platform.isThreadCpuTimeEnabled();
    }

    private long current(ThreadMap.Clock clock) {
        // A virtual thread's total is the agent's account, which needs no
        // backend: asking first whether the backend loaded would load it, and
        // its one-off start-up (~100 ms of CPU for FFM's first downcalls)
        // would be charged to the virtual thread that asked first.
        if (clock == ThreadMap.Clock.TOTAL && ThreadMap.isVirtual(Thread.currentThread())) {
            return VirtualThreadCpu.currentVirtual();
        }
        if (!Native.available()) { // never worse than the JDK's bean (Native said why, once)
            return clock == ThreadMap.Clock.TOTAL ? platform.getCurrentThreadCpuTime() : platform.getCurrentThreadUserTime();
        }
        if (clock == ThreadMap.Clock.USER) {
            return ThreadTime.currentThreadUserTime();
        }
        return ThreadMap.mapSelf() ? ThreadTimeException.check(FastClock.read()) : VirtualThreadCpu.currentVirtual();
    }

    /** The platform's argument and support checks for one id, then its switch. */
    private boolean enabledFor(long id) {
        if (id <= 0) {
            throw new IllegalArgumentException("Invalid thread ID parameter: " + id);
        }
        checkSupported(id);
        return platform.isThreadCpuTimeEnabled();
    }

    private void checkSupported(long id) {
        if (platform.isThreadCpuTimeSupported()) {
            return;
        }
        if (!platform.isCurrentThreadCpuTimeSupported()) {
            throw new UnsupportedOperationException("Thread CPU time measurement is not supported.");
        }
        if (id != Thread.currentThread().getId()) {
            throw new UnsupportedOperationException("Thread CPU time measurement is only supported for the current thread.");
        }
    }

    /** Whether a read of this id is answered here (else by the platform bean). */
    private static boolean ours(long id) {
        return Native.available() && (id == Thread.currentThread().getId() || ThreadMap.of(id) != null);
    }

    /** One id that passed the checks: -1 if it names no live platform thread. */
    private long one(long id, ThreadMap.Clock clock) {
        if (id == Thread.currentThread().getId()) {
            return current(clock);
        }
        ThreadMap.Entry e = ThreadMap.of(id);
        if (e == null) {
            return clock == ThreadMap.Clock.TOTAL ? platform.getThreadCpuTime(id) : platform.getThreadUserTime(id);
        }
        Thread t = e.get();
        return t == null ? -1 : ThreadMap.read(e, t, clock);
    }

    /** The array reads: mapped ids here, the rest in one platform call. */
    private long[] many(long[] ids, ThreadMap.Clock clock) {
        Objects.requireNonNull(ids);
        for (long id : ids) {
            if (id <= 0) {
                throw new IllegalArgumentException("Invalid thread ID parameter: " + id);
            }
        }
        for (long id : ids) {
            checkSupported(id);
        }
        long[] out = new long[ids.length];
        Arrays.fill(out, -1);
        if (!platform.isThreadCpuTimeEnabled()) {
            return out;
        }
        long[] rest = new long[ids.length];
        int[] restAt = new int[ids.length];
        int n = 0;
        for (int i = 0; i < ids.length; i++) {
            if (ours(ids[i])) {
                out[i] = one(ids[i], clock);
            } else {
                rest[n] = ids[i];
                restAt[n++] = i;
            }
        }
        if (n > 0) {
            long[] sub = Arrays.copyOf(rest, n);
            long[] got = clock == ThreadMap.Clock.TOTAL ? platform.getThreadCpuTime(sub) : platform.getThreadUserTime(sub);
            for (int k = 0; k < n; k++) {
                out[restAt[k]] = got[k];
            }
        }
        return out;
    }

    // ---- everything else: the platform bean ----

    @Override public ObjectName getObjectName() { return platform.getObjectName(); }
    @Override public int getThreadCount() { return platform.getThreadCount(); }
    @Override public int getPeakThreadCount() { return platform.getPeakThreadCount(); }
    @Override public long getTotalStartedThreadCount() { return platform.getTotalStartedThreadCount(); }
    @Override public int getDaemonThreadCount() { return platform.getDaemonThreadCount(); }
    @Override public long[] getAllThreadIds() { return platform.getAllThreadIds(); }
    @Override public ThreadInfo getThreadInfo(long id) { return platform.getThreadInfo(id); }
    @Override public ThreadInfo[] getThreadInfo(long[] ids) { return platform.getThreadInfo(ids); }
    @Override public ThreadInfo getThreadInfo(long id, int maxDepth) { return platform.getThreadInfo(id, maxDepth); }
    @Override public ThreadInfo[] getThreadInfo(long[] ids, int maxDepth) { return platform.getThreadInfo(ids, maxDepth); }
    @Override public boolean isThreadContentionMonitoringSupported() { return platform.isThreadContentionMonitoringSupported(); }
    @Override public boolean isThreadContentionMonitoringEnabled() { return platform.isThreadContentionMonitoringEnabled(); }
    @Override public void setThreadContentionMonitoringEnabled(boolean enable) { platform.setThreadContentionMonitoringEnabled(enable); }
    @Override public boolean isThreadCpuTimeSupported() { return platform.isThreadCpuTimeSupported(); }
    @Override public boolean isCurrentThreadCpuTimeSupported() { return platform.isCurrentThreadCpuTimeSupported(); }
    @Override public boolean isThreadCpuTimeEnabled() { return platform.isThreadCpuTimeEnabled(); }
    @Override public void setThreadCpuTimeEnabled(boolean enable) { platform.setThreadCpuTimeEnabled(enable); }
    @Override public long[] findMonitorDeadlockedThreads() { return platform.findMonitorDeadlockedThreads(); }
    @Override public void resetPeakThreadCount() { platform.resetPeakThreadCount(); }
    @Override public long[] findDeadlockedThreads() { return platform.findDeadlockedThreads(); }
    @Override public boolean isObjectMonitorUsageSupported() { return platform.isObjectMonitorUsageSupported(); }
    @Override public boolean isSynchronizerUsageSupported() { return platform.isSynchronizerUsageSupported(); }

    @Override
    public ThreadInfo[] getThreadInfo(long[] ids, boolean lockedMonitors, boolean lockedSynchronizers) {
        return platform.getThreadInfo(ids, lockedMonitors, lockedSynchronizers);
    }

    @Override
    public ThreadInfo[] getThreadInfo(long[] ids, boolean lockedMonitors, boolean lockedSynchronizers, int maxDepth) {
        return platform.getThreadInfo(ids, lockedMonitors, lockedSynchronizers, maxDepth);
    }

    @Override
    public ThreadInfo[] dumpAllThreads(boolean lockedMonitors, boolean lockedSynchronizers) {
        return platform.dumpAllThreads(lockedMonitors, lockedSynchronizers);
    }

    @Override
    public ThreadInfo[] dumpAllThreads(boolean lockedMonitors, boolean lockedSynchronizers, int maxDepth) {
        return platform.dumpAllThreads(lockedMonitors, lockedSynchronizers, maxDepth);
    }

    @Override public long getCurrentThreadAllocatedBytes() { return platform.getCurrentThreadAllocatedBytes(); }
    @Override public long getThreadAllocatedBytes(long id) { return platform.getThreadAllocatedBytes(id); }
    @Override public long[] getThreadAllocatedBytes(long[] ids) { return platform.getThreadAllocatedBytes(ids); }
    @Override public boolean isThreadAllocatedMemorySupported() { return platform.isThreadAllocatedMemorySupported(); }
    @Override public boolean isThreadAllocatedMemoryEnabled() { return platform.isThreadAllocatedMemoryEnabled(); }
    @Override public void setThreadAllocatedMemoryEnabled(boolean enable) { platform.setThreadAllocatedMemoryEnabled(enable); }

    /**
     * The platform's {@code getTotalThreadAllocatedBytes()}, which JDK 21
     * added to the interface (and some JDK 17 updates have); this class is
     * compiled against JDK 17's API, so it is reached through a method handle.
     *
     * @throws UnsupportedOperationException on JDKs without it
     */
    public long getTotalThreadAllocatedBytes() {
        if (TOTAL_ALLOCATED == null) {
            throw new UnsupportedOperationException("this JDK has no getTotalThreadAllocatedBytes");
        }
        try {
            return (long) TOTAL_ALLOCATED.invokeExact(platform);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
