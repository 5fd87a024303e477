package io.threadtime.vthreads;

import static io.threadtime.vthreads.Work.MS;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.threadtime.VirtualThreadCpu;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.URL;
import java.net.URLClassLoader;
import org.junit.jupiter.api.Test;

/**
 * The -javaagent's hooks (exact mode, in a JVM of their own since one test
 * makes them fail on purpose): they never throw into VirtualThread, they
 * count their failures, and the figures are readable from any class loader
 * through the boot class path.
 */
class HooksTest {
    static final String HOOKS = "io.threadtime.agent.vthreads.hooks.VirtualThreadHooks";

    @Test
    void hooksSwallowAndCountTheirFailures() throws Exception {
        Class<?> hooks = Class.forName(HOOKS, false, null);
        assertNull(hooks.getClassLoader(), "the hooks are not the boot loader's");
        assertTrue(Object.class.getModule().canRead(hooks.getModule()), "java.base cannot call the hooks");
        MethodHandles.Lookup l = MethodHandles.publicLookup();
        MethodHandle mount = l.findStatic(hooks, "mount",
                MethodType.methodType(void.class, Thread.class, Thread.class, Object.class));
        MethodHandle unmount = l.findStatic(hooks, "unmount", MethodType.methodType(void.class, Thread.class, Object.class,
                int.class, int.class));
        MethodHandle end = l.findStatic(hooks, "end", MethodType.methodType(void.class, Thread.class, Object.class));
        long before = VirtualThreadCpu.hookFailures();
        assertDoesNotThrow(() -> mount.invoke(null, null, null));
        assertDoesNotThrow(() -> unmount.invoke(null, null, 0, 1));
        assertDoesNotThrow(() -> end.invoke(null, null));
        // a continuation that is not one: the accounts' stores fail inside
        Thread self = Thread.currentThread();
        assertDoesNotThrow(() -> mount.invoke(self, self, "not a continuation"));
        assertDoesNotThrow(() -> unmount.invoke(self, "not a continuation", 0, 1));
        assertEquals(before + 5, VirtualThreadCpu.hookFailures(), "failures not counted");
        // and the agent goes on charging
        Work.onVirtualThreads(2, i -> {
            long start = VirtualThreadCpu.currentThreadCpuTime();
            long burned = Work.burn(10 * MS);
            Thread.yield();
            ExactModeTest.assertCharged(burned, VirtualThreadCpu.currentThreadCpuTime() - start, "after failures");
        });
    }

    /** This configuration's default: the accounts are fields of the threads'
     * continuations, and no table holds any, however many threads ran. */
    @Test
    void theAccountsAreInTheThreads() throws Exception {
        assertTrue(VirtualThreadCpu.accountsInThreads(), "the -javaagent fell back to its table");
        Work.onVirtualThreads(1000, i -> Thread.yield());
        assertEquals(0, VirtualThreadCpu.accountsInUse());
        assertEquals(0, VirtualThreadCpu.accountMemoryBytes());
    }

    static long read(MethodHandle cpu) {
        try {
            return (long) cpu.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError("VirtualThreadHooks.currentThreadCpuTime threw", t);
        }
    }

    /** What an OpenTelemetry extension does from its own class loader. */
    @Test
    void anotherClassLoaderReadsTheCurrentThreadsAccount() throws Exception {
        try (URLClassLoader isolated = new URLClassLoader(new URL[0], null)) {
            Class<?> hooks = Class.forName(HOOKS, false, isolated);
            MethodHandle cpu = MethodHandles.publicLookup().findStatic(hooks, "currentThreadCpuTime",
                    MethodType.methodType(long.class));
            Work.onVirtualThreads(2, i -> {
                long start = read(cpu);
                long burned = Work.burn(10 * MS);
                Work.pause(i);
                long viaBoot = read(cpu);
                long viaApi = VirtualThreadCpu.currentThreadCpuTime();
                ExactModeTest.assertCharged(burned, viaBoot - start, "read from another loader");
                assertTrue(viaBoot <= viaApi, "boot read " + viaBoot + " after the API's " + viaApi);
            });
            long platform = read(cpu);
            assertTrue(platform > 0 && platform <= Work.MX.getCurrentThreadCpuTime(), "platform thread read " + platform);
        }
    }
}
