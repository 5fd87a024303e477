package io.threadtime;

import java.nio.file.Paths;

/**
 * Run in a child JVM by the tests: prints how the library was found, one
 * reading and what the virtual-thread agent is doing. With an argument, also runs the event log with that exit-dump
 * path and records one text event, then exits without dumping.
 */
public final class ChildMain {
    private ChildMain() {}

    public static void main(String[] args) {
        System.out.println("backend=" + ThreadTime.backend());
        System.out.println("source=" + NativeLibrary.load());
        System.out.println("cpu=" + ThreadTime.currentThreadCpuTime());
        System.out.println("clock=" + ThreadTime.currentThreadCpuClock());
        System.out.println("vthreads=" + VirtualThreadCpu.mode());
        System.out.println("vclock=" + VirtualThreadCpu.clock());
        if (args.length > 0) {
            EventLog.start(new EventLog.Options(0, null, Paths.get(args[0]), false));
            EventLog.event(1, "child-exit");
        }
    }
}
