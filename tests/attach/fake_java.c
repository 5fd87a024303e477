/* A program that test_attach.sh installs under the name `java`: it is no
 * JVM, and it stands for a user's own program that `threadtime attach` must
 * never run.
 *
 *   java plain        sleeps, no SIGQUIT handler (the signal would kill it)
 *   java quit         sleeps with a SIGQUIT handler, never listens
 *   java listen RC    on SIGQUIT with .attach_pid<pid> in its working
 *                     directory, listens on /tmp/.java_pid<pid> as a JVM
 *                     does, takes one request and answers "return code: RC",
 *                     then one more, answered with system properties that
 *                     hold threadtime's agent's error and warnings
 *   java listen silent  the same, but takes the request and never answers
 *   java listen full    the same, but never accepts, its queue full
 *   java listen c1      answers the request with a refusal whose text holds
 *                     raw bytes a terminal may take for controls (0x9b, CSI
 *                     in 8-bit mode, and a UTF-8 character cut short)
 *   java listen huge    answers "return code: 102", then the properties with
 *                     1 MiB - 1 bytes (all an attacher reads of them) that
 *                     end in the escape "\u" with no digits after it
 *
 * Whatever the arguments, run with uid or euid 0 it only writes the file
 * ran-as-root beside itself and exits 3: that file is the proof that an
 * attacher ran it as root. In listen mode it writes into its working
 * directory what it saw: trigger-owner (the uid that owns the trigger file),
 * peer (the client's uid and gid from SO_PEERCRED) and request (the bytes),
 * and peer2 and request2 for a second request.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* What threadtime attach reads of an answer to "properties" at most, its
 * NUL included (PROPERTIES_MAX in cli/attach.c). */
#define PROPERTIES_READ (1024 * 1024)

/* A JVM's SIGQUIT handler; here it only wakes sigsuspend. */
static void on_quit(int sig)
{
    (void)sig;
}

static int write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, data, len);
    close(fd);
    return w == (ssize_t)len ? 0 : -1;
}

/* Takes one connection on listener l: writes the client's uid and gid to
 * peer_file and its request to request_file, then answers (NULL: holds the
 * connection open without a word until it is killed). 0 or 1. */
static int serve(int l, const char *peer_file, const char *request_file, const char *answer)
{
    int s = accept(l, NULL, NULL);
    struct ucred peer;
    socklen_t plen = sizeof peer;
    if (s < 0 || getsockopt(s, SOL_SOCKET, SO_PEERCRED, &peer, &plen) != 0)
        return 1;
    char line[64];
    int n = snprintf(line, sizeof line, "%lu %lu\n", (unsigned long)peer.uid, (unsigned long)peer.gid);
    if (write_file(peer_file, line, (size_t)n) != 0)
        return 1;
    /* A version-1 request is five NUL-terminated strings. */
    char req[4096];
    size_t got = 0;
    int nuls = 0;
    while (nuls < 5 && got < sizeof req) {
        ssize_t r = read(s, req + got, sizeof req - got);
        if (r <= 0)
            return 1;
        for (ssize_t i = 0; i < r; i++)
            nuls += req[got + (size_t)i] == '\0';
        got += (size_t)r;
    }
    if (write_file(request_file, req, got) != 0)
        return 1;
    while (!answer)
        pause();
    for (size_t len = strlen(answer), sent = 0; sent < len;) {
        ssize_t w = write(s, answer + sent, len - sent);
        if (w <= 0)
            return 1;
        sent += (size_t)w;
    }
    close(s);
    return 0;
}

/* Serves attach requests the way HotSpot's listener does: a load, answered
 * "return code: RC", then the system properties, with threadtime's agent's
 * error and warnings in them (escaped as Java writes them, with a terminal
 * escape sequence inside). 0 or 1. */
static int listen_once(const char *how)
{
    char trigger[64], path[108];
    snprintf(trigger, sizeof trigger, ".attach_pid%d", (int)getpid());
    /* Blocked between the look and the wait, so that no SIGQUIT is lost. */
    sigset_t quit, old;
    sigemptyset(&quit);
    sigaddset(&quit, SIGQUIT);
    sigprocmask(SIG_BLOCK, &quit, &old);
    struct stat st;
    while (stat(trigger, &st) != 0)
        sigsuspend(&old);
    char line[64];
    int n = snprintf(line, sizeof line, "%lu\n", (unsigned long)st.st_uid);
    if (write_file("trigger-owner", line, (size_t)n) != 0)
        return 1;

    snprintf(path, sizeof path, "/tmp/.java_pid%d", (int)getpid());
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strcpy(addr.sun_path, path);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&addr, sizeof addr) != 0 || chmod(path, 0600) != 0 || listen(l, 1) != 0)
        return 1;
    if (strcmp(how, "full") == 0) {
        /* One connection of its own fills a queue of length 0: the next
         * connect waits for an accept that never comes. */
        int self = socket(AF_UNIX, SOCK_STREAM, 0);
        if (listen(l, 0) != 0 || self < 0 || connect(self, (struct sockaddr *)&addr, sizeof addr) != 0)
            return 1;
        for (;;)
            pause();
    }
    if (strcmp(how, "silent") == 0)
        return serve(l, "peer", "request", NULL);
    if (strcmp(how, "c1") == 0)
        return serve(l, "peer", "request", "1\nno \x9b" "31mred\x9b" "0m here, nor \xe2\x82 there\n");
    char answer[64];
    snprintf(answer, sizeof answer, "0\nreturn code: %s\n", strcmp(how, "huge") == 0 ? "102" : how);
    int failed = serve(l, "peer", "request", answer);
    if (!failed && strcmp(how, "huge") == 0) {
        /* Padding in a comment line, then the error property, whose value
         * is a backslash and a 'u' as the last bytes read. */
        static const char tail[] = "\nthreadtime.attach.error=\\u";
        char *props = malloc(PROPERTIES_READ);
        if (!props)
            return 1;
        size_t len = PROPERTIES_READ - 1, pad = len - (sizeof tail - 1);
        memset(props, '#', pad);
        memcpy(props, "0\n", 2);
        memcpy(props + pad, tail, sizeof tail);
        failed = serve(l, "peer2", "request2", props);
        free(props);
    } else if (!failed) {
        failed = serve(l, "peer2", "request2",
                       "0\n#Wed Nov 25 21:00:00 UTC 2026\njava.version=17\n"
                       "threadtime.attach.error=threadtime\\: probe \\u00e9\\u001b[31m matched nothing\\u0085 \\uD834\\uDD1E\n"
                       "threadtime.attach.warnings=probe 'a.B\\:\\:c' matched nothing\\nprobe 'd.E\\:\\:f' matched nothing\n");
    }
    close(l);
    unlink(path);
    return failed;
}

int main(int argc, char **argv)
{
    if (getuid() == 0 || geteuid() == 0) {
        char self[PATH_MAX];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len <= 0)
            return 3;
        self[len] = '\0';
        char *slash = strrchr(self, '/');
        if (!slash)
            return 3;
        strcpy(slash + 1, "ran-as-root");
        write_file(self, "", 0);
        return 3;
    }
    const char *mode = argc > 1 ? argv[1] : "plain";
    if (strcmp(mode, "plain") != 0) {
        struct sigaction sa = {.sa_handler = on_quit};
        sigaction(SIGQUIT, &sa, NULL);
    }
    if (strcmp(mode, "listen") == 0)
        return listen_once(argc > 2 ? argv[2] : "0");
    for (;;)
        pause();
}
