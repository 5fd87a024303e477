package io.threadtime.agent.probes;

import java.util.List;

/**
 * One probe filter, in JFR's method-filter syntax (JEP 520):
 * {@code pkg.Class::method}, {@code pkg.Class} (all its methods),
 * {@code pkg.Class::<init>} and {@code ::<clinit>}, {@code @pkg.Annotation}
 * (every method of a class carrying it, or every method carrying it), nested
 * classes with {@code $}; and {@code pkg.Class::method@LINE}, an instant
 * event where that source line starts.
 */
public final class ProbeFilter {
    /**
     * Packages a probe may not go into: threadtime's own, and those a probe's
     * own call runs through (method handles, the FFM linker, continuations),
     * where a probe would call itself.
     */
    static final List<String> REFUSED_PACKAGES = List.of("io.threadtime.", "java.lang.invoke.",
            "java.lang.foreign.", "jdk.internal.foreign.", "jdk.internal.invoke.", "jdk.internal.vm.",
            "jdk.internal.misc.", "sun.invoke.");

    /** The filter as written. */
    final String text;
    /** Class as an internal name (pkg/Outer$Inner); null for an annotation filter. */
    final String className;
    /** Method name; null: every method of the class. */
    final String method;
    /** Source line of a line probe; 0: a method probe. */
    final int line;
    /** Annotation descriptor (Lpkg/Ann;) of an annotation filter, else null. */
    final String annotation;

    private ProbeFilter(String text, String className, String method, int line, String annotation) {
        this.text = text;
        this.className = className;
        this.method = method;
        this.line = line;
        this.annotation = annotation;
    }

    /** Parses one filter; a malformed one throws with what is wrong (without the position). */
    public static ProbeFilter parse(String text) {
        if (text.isEmpty()) {
            throw new IllegalArgumentException("empty filter");
        }
        if (text.startsWith("@")) {
            String name = text.substring(1);
            checkQualified(name, "annotation");
            return new ProbeFilter(text, null, null, 0, "L" + name.replace('.', '/') + ";");
        }
        int sep = text.indexOf("::");
        String cls = sep < 0 ? text : text.substring(0, sep);
        checkQualified(cls, "class");
        for (String p : REFUSED_PACKAGES) {
            if (cls.startsWith(p)) {
                throw new IllegalArgumentException("classes of " + p.substring(0, p.length() - 1) + " cannot be probed ("
                        + (p.equals("io.threadtime.") ? "threadtime's own" : "a probe's own call runs through them") + ")");
            }
        }
        if (sep < 0) {
            return new ProbeFilter(text, cls.replace('.', '/'), null, 0, null);
        }
        String rest = text.substring(sep + 2);
        int at = rest.indexOf('@');
        String method = at < 0 ? rest : rest.substring(0, at);
        if (method.isEmpty()) {
            throw new IllegalArgumentException("no method name after '::'");
        }
        if (!method.equals("<init>") && !method.equals("<clinit>") && !isIdentifier(method)) {
            throw new IllegalArgumentException("'" + method + "' is not a method name");
        }
        int line = 0;
        if (at >= 0) {
            String digits = rest.substring(at + 1);
            try {
                line = digits.chars().allMatch(Character::isDigit) ? Integer.parseInt(digits) : -1;
            } catch (NumberFormatException tooLong) {
                line = -1;
            }
            // the class file keeps line numbers as u2
            if (line < 1 || line > 65535) {
                throw new IllegalArgumentException("'" + digits + "' after '@' is not a line number (1-65535)");
            }
        }
        return new ProbeFilter(text, cls.replace('.', '/'), method, line, null);
    }

    private static void checkQualified(String name, String what) {
        if (name.isEmpty()) {
            throw new IllegalArgumentException("no " + what + " name");
        }
        for (String part : name.split("\\.", -1)) {
            if (!isIdentifier(part)) {
                throw new IllegalArgumentException("'" + name + "' is not a " + what + " name (pkg.Name, nested classes with $)");
            }
        }
    }

    private static boolean isIdentifier(String s) {
        if (s.isEmpty() || !Character.isJavaIdentifierStart(s.codePointAt(0))) {
            return false;
        }
        return s.codePoints().allMatch(Character::isJavaIdentifierPart);
    }

    boolean isLine() {
        return line > 0;
    }

    /** Whether a method of this name in a class of that name matches (annotation filters: never by name). */
    boolean matches(String internalClass, String methodName) {
        return className != null && className.equals(internalClass) && (method == null || method.equals(methodName));
    }

    @Override
    public String toString() {
        return text;
    }
}
