package io.threadtime;

import java.lang.invoke.MethodHandle;
import java.lang.reflect.Field;

/**
 * Run in a child JVM under the -javaagent (JDK 21+, with java.lang.invoke
 * opened to it) by {@link HookWarmUpTest}: prints "NAME=customized" or
 * "NAME=not customized" (or NAME=null) for each method handle a virtual-thread hook calls,
 * before any virtual thread has run.
 */
public final class HookHandlesChild {
    private HookHandlesChild() {}

    public static void main(String[] args) throws Exception {
        System.out.println("backend " + ThreadTime.backend());
        Class<?> config = Class.forName("io.threadtime.agent.vthreads.hooks.VirtualThreadHooks", false, null);
        for (String name : new String[] {"clock", "mountMark", "unmountMark", "mountName"}) {
            print(name, field(config, name, null));
        }
        print("ThreadNames.IS_VIRTUAL", field(ThreadNames.class, "IS_VIRTUAL", null));
        if (ThreadTime.backend().equals("ffm")) {
            // the names go through JNI: only the markers are downcall handles
            for (String name : new String[] {"EventMount", "EventUnmount"}) {
                print("FfmBackend." + name, field(Class.forName("io.threadtime.FfmBackend$" + name), "H", null));
            }
        }
    }

    /** A handle is customized once its LambdaForm was made for it alone. */
    private static void print(String name, Object handle) throws ReflectiveOperationException {
        if (handle == null) {
            System.out.println(name + "=null");
            return;
        }
        Object form = field(MethodHandle.class, "form", handle);
        Object owner = field(form.getClass(), "customized", form);
        System.out.println(name + "=" + (owner == handle ? "customized" : "not customized"));
    }

    /** Field name of class c in object of (null: a static field), whatever its access. */
    private static Object field(Class<?> c, String name, Object of) throws ReflectiveOperationException {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(of);
    }
}
