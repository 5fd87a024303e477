package io.threadtime;

/** The text users see when the JDK denies native access (JDK 24+, {@code --illegal-native-access=deny}). */
final class NativeAccess {
    private NativeAccess() {}

    /** Names the flag that grants native access to the module holding threadtime, and where a manifest can. */
    static String message(Module module) {
        String who = module.isNamed() ? module.getName() : "ALL-UNNAMED";
        return "threadtime: native access is not enabled for " + (module.isNamed() ? "module " + who : "the class path")
                + ". Add --enable-native-access=" + who + " to the java command line"
                + " (an executable JAR may say Enable-Native-Access: ALL-UNNAMED in its manifest instead;"
                + " the JDK reads that only in the JAR given to java -jar, not in a -javaagent or class-path JAR).";
    }
}
