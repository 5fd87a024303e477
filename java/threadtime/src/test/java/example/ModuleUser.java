package example;

import io.threadtime.ThreadTime;

/** Run by ModuleTest with threadtime on the module path: which module answered, and one reading. */
public final class ModuleUser {
    private ModuleUser() {}

    public static void main(String[] args) {
        System.out.println("module=" + ThreadTime.class.getModule().getName());
        System.out.println("cpu=" + ThreadTime.currentThreadCpuTime());
    }
}
