package io.threadtime;

/** The text users see when the JDK restricts native access (JDK 22+). */
final class NativeAccess {
    private NativeAccess() {}

    /** Names the flag that grants native access to the module holding threadtime. */
    static String message(Module module) {
        String who = module.isNamed() ? module.getName() : "ALL-UNNAMED";
        return "threadtime: native access is not enabled for " + (module.isNamed() ? "module " + who : "the class path")
                + ". Add --enable-native-access=" + who + " to the java command line"
                + " (or Enable-Native-Access: ALL-UNNAMED to an executable JAR's manifest)."
                + " Without it this JDK warns on every start, and with --illegal-native-access=deny"
                + " it refuses to load threadtime.";
    }
}
