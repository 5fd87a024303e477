package example;

import io.threadtime.EventLog;
import java.lang.reflect.Method;

/**
 * ThreadNamesTest's child, run under {@code -javaagent:threadtime.jar=probe=example.NamesApp::work}:
 * main, a platform thread and (JDK 21+) a virtual thread each call the
 * probed {@link #work}; another platform thread records through
 * {@link EventLog} only. Prints {@code vthread=ID} (0 before JDK 21).
 */
public final class NamesApp {
    static volatile long sink;

    private NamesApp() {}

    static void work(int x) {
        sink += x * 31L + 7;
    }

    public static void main(String[] args) throws Exception {
        work(1);
        Thread platform = new Thread(() -> work(2), "main-worker-with-a-long-name");
        platform.start();
        platform.join();
        Thread events = new Thread(() -> EventLog.event(1), "event-log-thread, \u00e9t\u00e9");
        events.start();
        events.join();
        long vthread = 0;
        if (Runtime.version().feature() >= 21) {
            // Thread.ofVirtual().name("worker-v").start(task), through reflection: this compiles for JDK 17
            Class<?> builderClass = Class.forName("java.lang.Thread$Builder");
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            builder = builderClass.getMethod("name", String.class).invoke(builder, "worker-v");
            Method start = builderClass.getMethod("start", Runnable.class);
            Thread v = (Thread) start.invoke(builder, (Runnable) () -> work(3));
            v.join();
            vthread = v.getId();
        }
        System.out.println("vthread=" + vthread);
    }
}
