/* threadtime attach: probes into a running JVM.
 *
 * The work is Java's (the Attach API): this runs the target's own java
 * binary, so the attaching JVM is the target's version, as
 *   java -jar threadtime-VERSION.jar attach PID OPTIONS
 * (io.threadtime.Main), which checks the options and loads the JAR's agent
 * into the target. The JAR is --jar, else $THREADTIME_JAR, else the one a
 * checkout builds beside this binary (java/threadtime/target/).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "threadtime/threadtime.h"

int tt_cli_attach(int argc, char **argv);

static void usage(FILE *f)
{
    fprintf(f, "usage: threadtime attach [--jar JAR] PID OPTIONS\n"
               "  loads threadtime's Java agent into the running JVM PID, with OPTIONS\n"
               "  (comma-separated): probe=FILTER[;FILTER...], probes=@FILE, probe=off,\n"
               "  probe.cpu=on|off, out=PATH, ring=N, dump=PATH (java/README.md, \"Probes\")\n"
               "  --jar  threadtime's JAR (default: $THREADTIME_JAR, else the checkout's build)\n");
}

/* The checkout's JAR, from this binary's place (build/cli/threadtime). */
static int checkout_jar(char *out, size_t n)
{
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return -1;
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    int w = snprintf(out, n, "%s/../../java/threadtime/target/threadtime-%s.jar", self, tt_version());
    return w > 0 && (size_t)w < n && access(out, R_OK) == 0 ? 0 : -1;
}

int tt_cli_attach(int argc, char **argv)
{
    const char *jar = NULL;
    int a = 1;
    if (a < argc && (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (a + 1 < argc && strcmp(argv[a], "--jar") == 0) {
        jar = argv[a + 1];
        a += 2;
    }
    if (argc - a != 2 || argv[a][0] == '\0' || strspn(argv[a], "0123456789") != strlen(argv[a])) {
        usage(stderr);
        return 2;
    }
    const char *pid = argv[a], *options = argv[a + 1];

    char found[PATH_MAX];
    if (!jar)
        jar = getenv("THREADTIME_JAR");
    if (!jar && checkout_jar(found, sizeof found) == 0)
        jar = found;
    if (!jar) {
        fprintf(stderr, "threadtime attach: no threadtime JAR found; give --jar or set THREADTIME_JAR\n");
        return 2;
    }
    if (access(jar, R_OK) != 0) {
        fprintf(stderr, "threadtime attach: cannot read %s: %s\n", jar, strerror(errno));
        return 2;
    }

    /* The target's own java: /proc/PID/exe. */
    char link[64], java[PATH_MAX];
    snprintf(link, sizeof link, "/proc/%s/exe", pid);
    ssize_t len = readlink(link, java, sizeof java - 1);
    if (len <= 0) {
        fprintf(stderr, "threadtime attach: process %s: %s\n", pid,
                errno == ENOENT ? "no such process" : strerror(errno));
        return 1;
    }
    java[len] = '\0';
    const char *base = strrchr(java, '/');
    if (strcmp(base ? base + 1 : java, "java") != 0) {
        fprintf(stderr, "threadtime attach: process %s runs %s, not java\n", pid, java);
        return 1;
    }
    char *args[] = {java, "-jar", (char *)jar, "attach", (char *)pid, (char *)options, NULL};
    execv(java, args);
    fprintf(stderr, "threadtime attach: cannot run %s: %s\n", java, strerror(errno));
    return 1;
}
