/* The event log's files and environment against a hostile or careless
 * user: no variable is read by a setuid program, no planted
 * symlink is followed, new files are 0600, a failed start changes nothing
 * on disk, forked children do not fill the disk, and a refused value is
 * named. Every test works in a directory of its own under TMPDIR (the
 * setuid case, when its user cannot reach that, under /var/tmp or /tmp). */
#include <dirent.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include "event_test_util.h"

/* A new directory under TMPDIR, mode 0755. */
static void make_dir(char *buf, size_t n, const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, n, "%s/tt_%s_XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    CHECK(mkdtemp(buf) != NULL);
    chmod(buf, 0755);
}

/* Removes dir and the files in it (no subdirectories are made). */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Entries in dir, "." and ".." not counted. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

static void write_text(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK_OP(write(fd, text, strlen(text)), ==, (long long)strlen(text));
        fchmod(fd, mode);
        close(fd);
    }
}

/* What a file held and was, to show it untouched. */
typedef struct file_state {
    struct stat st;
    char text[64];
} file_state;

static void snapshot(const char *path, file_state *fs)
{
    memset(fs, 0, sizeof *fs);
    CHECK_OP(lstat(path, &fs->st), ==, 0);
    int fd = open(path, O_RDONLY | O_NOFOLLOW);
    if (fd >= 0) {
        CHECK(read(fd, fs->text, sizeof fs->text - 1) >= 0);
        close(fd);
    }
}

static void check_untouched(const char *path, const file_state *before)
{
    file_state now;
    snapshot(path, &now);
    CHECK(strcmp(now.text, before->text) == 0);
    CHECK_OP(now.st.st_ino, ==, before->st.st_ino);
    CHECK_OP(now.st.st_size, ==, before->st.st_size);
    CHECK_OP(now.st.st_mode, ==, before->st.st_mode);
    CHECK_OP(now.st.st_uid, ==, before->st.st_uid);
    CHECK_OP(now.st.st_gid, ==, before->st.st_gid);
}

/* ---- a setuid program reads no variable ---- */

/* An unprivileged account: tt-sec-test, else nobody, else tt-sec-test made
 * now. */
static const struct passwd *unprivileged_user(void)
{
    const struct passwd *pw = getpwnam("tt-sec-test");
    if (!pw)
        pw = getpwnam("nobody");
    if (!pw && system("useradd --system --no-create-home tt-sec-test") == 0)
        pw = getpwnam("tt-sec-test");
    return pw;
}

static int copy_file(const char *from, const char *to)
{
    unsigned char *bytes;
    long n = read_file(from, &bytes);
    int fd = n < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_EXCL, 0700);
    int ok = fd >= 0 && write(fd, bytes, (size_t)n) == n;
    if (fd >= 0)
        close(fd);
    if (n >= 0)
        free(bytes);
    return ok ? 0 : -1;
}

/* Whether the user can reach dir, as the kernel answers for that user: a
 * child takes the user's ids and tries. */
static int user_can_reach(const char *dir, const struct passwd *pw)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)
            _exit(2);
        _exit(access(dir, X_OK) == 0 ? 0 : 1);
    }
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A new directory, mode 0755, that the user can reach and where a setuid
 * bit counts: under TMPDIR (the build tree) where it can, else under
 * /var/tmp or /tmp. A clone under a 0700 directory (root's home, any
 * `mktemp -d`) hides its build tree from every other user. 0, or -1 after
 * printing one line that says why there is none. */
static int make_setuid_dir(char *buf, size_t n, const struct passwd *pw)
{
    const char *tmp = getenv("TMPDIR");
    const char *bases[] = {tmp && *tmp ? tmp : "/tmp", "/var/tmp", "/tmp"};
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        snprintf(buf, n, "%s/tt_setuid_XXXXXX", bases[i]);
        if (!mkdtemp(buf))
            continue;
        chmod(buf, 0755);
        struct statvfs vfs;
        if (user_can_reach(buf, pw) && statvfs(buf, &vfs) == 0 && !(vfs.f_flag & ST_NOSUID))
            return 0;
        rmdir(buf);
    }
    printf("skip setuid_program_reads_no_variable: uid %lu can reach no directory under %s, /var/tmp or /tmp "
           "on a file system that honours setuid\n",
           (unsigned long)pw->pw_uid, bases[0]);
    return -1;
}

TT_TEST(setuid_program_reads_no_variable)
{
    if (geteuid() != 0) {
        printf("skip setuid_program_reads_no_variable: needs root to install a setuid program\n");
        return;
    }
    const struct passwd *pw = unprivileged_user();
    CHECK(pw != NULL);
    char dir[256], probe[300], crash[300], exit_dump[300];
    if (!pw || make_setuid_dir(dir, sizeof dir, pw) != 0)
        return;
    snprintf(probe, sizeof probe, "%s/probe", dir);
    snprintf(crash, sizeof crash, "%s/root-only-crash", dir);
    snprintf(exit_dump, sizeof exit_dump, "%s/root-only-exit", dir);
    CHECK_OP(copy_file(TT_SETUID_PROBE, probe), ==, 0);
    CHECK_OP(chown(probe, 0, 0), ==, 0);
    CHECK_OP(chmod(probe, 04755), ==, 0);
    write_text(crash, "root's secret\n", 0600);
    write_text(exit_dump, "root's other secret\n", 0600);
    CHECK_OP(chown(crash, 0, 0), ==, 0);
    CHECK_OP(chown(exit_dump, 0, 0), ==, 0);
    file_state crash0, exit0;
    snapshot(crash, &crash0);
    snapshot(exit_dump, &exit0);

    uid_t uid = pw->pw_uid;
    gid_t gid = pw->pw_gid;
    pid_t pid = fork();
    if (pid == 0) {
        char env_file[400], env_exit[400];
        snprintf(env_file, sizeof env_file, "THREADTIME_FILE=%s", crash);
        snprintf(env_exit, sizeof env_exit, "THREADTIME_DUMP_AT_EXIT=%s", exit_dump);
        /* A sanitizer build's runtime reads its own options; leak checking
         * cannot trace a setuid process. */
        char *env[] = {env_file, env_exit, "THREADTIME_RING=16", "ASAN_OPTIONS=detect_leaks=0", NULL};
        char *argv[] = {probe, NULL};
        if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0 || getuid() != uid)
            _exit(10);
        execve(probe, argv, env);
        _exit(11);
    }
    int status = 0;
    CHECK_OP(waitpid(pid, &status, 0), ==, pid);
    /* The probe ran (as the user, with root's rights) and its log started. */
    CHECK(WIFEXITED(status));
    CHECK_OP(WEXITSTATUS(status), ==, 0);
    check_untouched(crash, &crash0);
    check_untouched(exit_dump, &exit0);
    CHECK_OP(count_entries(dir), ==, 3); /* probe and the two files: nothing new */
    remove_dir(dir);
}

/* ---- planted symlinks ---- */

/* A link planted at the name the dump used to write first (PATH.tmp<pid>)
 * is neither followed nor removed. */
TT_TEST(symlink_at_the_old_temporary_name_is_not_followed)
{
    char dir[256], path[300], victim[300], planted[320];
    make_dir(dir, sizeof dir, "plant_tmp");
    snprintf(path, sizeof path, "%s/out.trace", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(planted, sizeof planted, "%s.tmp%d", path, (int)getpid());
    write_text(victim, "keep me\n", 0644);
    CHECK_OP(symlink(victim, planted), ==, 0);
    file_state v0;
    snapshot(victim, &v0);
    tt_log_options o = small_log(64, 2);
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_event_value(1, 5);
    CHECK_OP(tt_log_dump(path), ==, 0);
    CHECK_OP(tt_log_stop(), ==, 0);
    check_untouched(victim, &v0);
    struct stat sb;
    CHECK(lstat(planted, &sb) == 0 && S_ISLNK(sb.st_mode));
    loaded_trace lt;
    CHECK_OP(load_trace(path, &lt), ==, 0);
    free_trace(&lt);
    CHECK_OP(count_entries(dir), ==, 3);
    remove_dir(dir);
}

/* A link planted at the destination by another user in a world-writable
 * sticky directory (the /tmp case) is neither followed nor replaced, by a
 * dump or by a crash file: the start or dump fails with -EACCES. */
TT_TEST(another_users_symlink_at_the_destination_is_refused)
{
    if (geteuid() != 0) {
        printf("skip another_users_symlink_at_the_destination_is_refused: "
               "needs root to plant a link as another user\n");
        return;
    }
    const struct passwd *pw = unprivileged_user();
    CHECK(pw != NULL);
    if (!pw)
        return;
    char dir[256], path[300], victim[300];
    make_dir(dir, sizeof dir, "plant_dest");
    chmod(dir, 01777);
    snprintf(path, sizeof path, "%s/shared.trace", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    write_text(victim, "keep me too\n", 0644);
    CHECK_OP(symlink(victim, path), ==, 0);
    CHECK_OP(lchown(path, pw->pw_uid, pw->pw_gid), ==, 0);
    file_state v0, l0;
    snapshot(victim, &v0);
    snapshot(path, &l0);
    tt_log_options o = small_log(64, 2);
    o.crash_file = path;
    CHECK_OP(tt_log_start(&o), ==, -EACCES);
    CHECK(strstr(tt_log_error(), "symlink") != NULL);
    o.crash_file = NULL;
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_event_value(1, 6);
    CHECK_OP(tt_log_dump(path), ==, -EACCES);
    CHECK_OP(tt_log_stop(), ==, 0);
    check_untouched(victim, &v0);
    check_untouched(path, &l0);
    CHECK_OP(count_entries(dir), ==, 2);
    remove_dir(dir);
}

/* A link of one's own (or /dev/stdout, root's) is followed: the trace
 * replaces the file it leads to, and the link stays a link. */
TT_TEST(own_symlink_at_the_destination_is_followed)
{
    char dir[256], link[300], target[300];
    make_dir(dir, sizeof dir, "own_link");
    snprintf(link, sizeof link, "%s/latest.trace", dir);
    snprintf(target, sizeof target, "%s/run1.trace", dir);
    write_text(target, "old\n", 0600);
    CHECK_OP(symlink("run1.trace", link), ==, 0);
    for (int crash = 0; crash < 2; crash++) {
        tt_log_options o = small_log(64, 2);
        if (crash)
            o.crash_file = link;
        CHECK_OP(tt_log_start(&o), ==, 0);
        tt_event_value(1, 7);
        if (!crash)
            CHECK_OP(tt_log_dump(link), ==, 0);
        CHECK_OP(tt_log_stop(), ==, 0);
        struct stat sb;
        CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
        loaded_trace lt;
        CHECK_OP(load_trace(target, &lt), ==, 0);
        free_trace(&lt);
        CHECK_OP(count_entries(dir), ==, 2);
    }
    remove_dir(dir);
}

/* A link through /proc (what /dev/stdout is) leads to a file some process
 * has open, here as stdout redirected with >>: the trace is appended, the
 * file keeps what it held, and the link stays. */
TT_TEST(symlink_through_proc_is_appended_to)
{
    char dir[256], link[300], log[300], target[64];
    make_dir(dir, sizeof dir, "proc_link");
    snprintf(link, sizeof link, "%s/stdout", dir);
    snprintf(log, sizeof log, "%s/log.txt", dir);
    write_text(log, "log line\n", 0600);
    int fd = open(log, O_WRONLY | O_APPEND);
    CHECK(fd >= 0);
    snprintf(target, sizeof target, "/proc/self/fd/%d", fd);
    CHECK_OP(symlink(target, link), ==, 0);
    tt_log_options o = small_log(64, 2);
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_event_value(1, 8);
    CHECK_OP(tt_log_dump(link), ==, 0);
    CHECK_OP(tt_log_stop(), ==, 0);
    close(fd);
    struct stat sb;
    CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
    unsigned char *bytes;
    long n = read_file(log, &bytes);
    CHECK(n > 9 + TT__TRACE_MAGIC_LEN);
    if (n > 9 + TT__TRACE_MAGIC_LEN) {
        CHECK(memcmp(bytes, "log line\n", 9) == 0);
        CHECK(memcmp(bytes + 9, TT__TRACE_MAGIC, TT__TRACE_MAGIC_LEN) == 0);
    }
    if (n >= 0)
        free(bytes);
    CHECK_OP(count_entries(dir), ==, 2);
    remove_dir(dir);
}

/* ---- modes ---- */

static mode_t mode_of(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? sb.st_mode & 07777 : (mode_t)-1;
}

TT_TEST(new_files_are_0600)
{
    char dir[256], dump[300], crash[300];
    make_dir(dir, sizeof dir, "mode");
    snprintf(dump, sizeof dump, "%s/dump.trace", dir);
    snprintf(crash, sizeof crash, "%s/crash.trace", dir);
    mode_t old = umask(022);
    tt_log_options o = small_log(64, 2);
    o.crash_file = crash;
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_event(1);
    CHECK_OP(tt_log_dump(dump), ==, 0);
    CHECK_OP(tt_log_stop(), ==, 0);
    CHECK_OP(mode_of(crash), ==, 0600);
    CHECK_OP(mode_of(dump), ==, 0600);
    /* An existing 0644 file is replaced by a 0600 one. */
    CHECK_OP(chmod(dump, 0644), ==, 0);
    CHECK_OP(tt_log_dump(dump), ==, 0);
    CHECK_OP(mode_of(dump), ==, 0600);
    umask(old);
    remove_dir(dir);
}

/* ---- a failed start changes nothing ---- */

TT_TEST(failed_start_leaves_the_disk_as_it_was)
{
    char dir[256], keep[300], absent[300];
    make_dir(dir, sizeof dir, "failed_start");
    snprintf(keep, sizeof keep, "%s/keep.txt", dir);
    snprintf(absent, sizeof absent, "%s/absent.trace", dir);
    write_text(keep, "precious\n", 0644);
    file_state k0;
    snapshot(keep, &k0);
    /* A file-size limit refuses the allocation as a full disk would. */
    struct rlimit old, small = {64 * 1024, 0};
    getrlimit(RLIMIT_FSIZE, &old);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &small);
    tt_log_options o = small_log(4096, 4); /* ~0.6 MB */
    o.crash_file = keep;
    int rc = tt_log_start(&o);
    CHECK(rc == -EFBIG || rc == -ENOSPC);
    o.crash_file = absent;
    rc = tt_log_start(&o);
    CHECK(rc == -EFBIG || rc == -ENOSPC);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    check_untouched(keep, &k0);
    CHECK(access(absent, F_OK) != 0);
    CHECK_OP(count_entries(dir), ==, 1);
    /* A FIFO (or device) is never a crash file, and stays what it was. */
    CHECK_OP(mkfifo(absent, 0600), ==, 0);
    o.crash_file = absent;
    CHECK_OP(tt_log_start(&o), ==, -EINVAL);
    struct stat sb;
    CHECK(stat(absent, &sb) == 0 && S_ISFIFO(sb.st_mode));
    CHECK_OP(count_entries(dir), ==, 2);
    remove_dir(dir);
}

/* ---- fork in crash-safe mode ---- */

#define FORKS 50

/* A pre-forking server: FORKS children, every other one records a few
 * events. The children keep no crash file (they record in memory); those
 * that recorded leave their exit dump, with their events; the others leave
 * nothing; the parent's file is intact. */
TT_TEST(forked_children_do_not_fill_the_disk)
{
    char dir[256], crash[300], exit_dump[300], child[340];
    make_dir(dir, sizeof dir, "prefork");
    snprintf(crash, sizeof crash, "%s/server.trace", dir);
    snprintf(exit_dump, sizeof exit_dump, "%s/exit.trace", dir);
    tt_log_options o = small_log(256, 4);
    o.crash_file = crash;
    o.exit_dump_path = exit_dump;
    CHECK_OP(tt_log_start(&o), ==, 0);
    tt_event_value(1, 1);
    pid_t pids[FORKS];
    for (int i = 0; i < FORKS; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            if (i % 2)
                for (uint64_t k = 0; k < 3; k++)
                    tt_event_value(2, (uint64_t)i * 10 + k);
            exit(0);
        }
    }
    for (int i = 0; i < FORKS; i++) {
        int status = 0;
        CHECK_OP(waitpid(pids[i], &status, 0), ==, pids[i]);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    tt_event_value(1, 2);
    /* The parent's crash file and one exit dump per child that recorded. */
    CHECK_OP(count_entries(dir), ==, 1 + FORKS / 2);
    for (int i = 0; i < FORKS; i++) {
        snprintf(child, sizeof child, "%s.%d", crash, (int)pids[i]);
        CHECK(access(child, F_OK) != 0);
        snprintf(child, sizeof child, "%s.%d", exit_dump, (int)pids[i]);
        if (i % 2 == 0) {
            CHECK(access(child, F_OK) != 0);
            continue;
        }
        loaded_trace lt;
        CHECK_OP(load_trace(child, &lt), ==, 0);
        if (lt.rc == 0) {
            CHECK_OP(lt.t.nthreads, ==, 1);
            tt__trace_event ev;
            for (uint64_t k = 0; lt.t.nthreads == 1 && k < 3; k++)
                CHECK(tt__trace_event_at(&lt.t, &lt.t.threads[0], k, &ev) && ev.id == 2 &&
                      ev.p0 == (uint64_t)i * 10 + k);
            free_trace(&lt);
        }
    }
    loaded_trace parent;
    CHECK_OP(load_trace(crash, &parent), ==, 0);
    if (parent.rc == 0) {
        CHECK(!parent.t.damaged);
        const tt__trace_thread *th = find_thread(&parent.t, (uint32_t)gettid());
        CHECK(th && count_committed(&parent.t, th) == 2);
        CHECK_OP(parent.t.nthreads, ==, 1);
        free_trace(&parent);
    }
    CHECK_OP(tt_log_stop(), ==, 0);
    remove_dir(dir);
}

/* ---- tt_log_error, file_mode, fork_files ---- */

/* fork_files = 2: the first two children get a crash file, which keeps
 * their events through SIGKILL; later children record in memory; a granted
 * child that records nothing removes its file at exit. */
TT_TEST(fork_files_grants_a_bounded_number_of_crash_files)
{
    char dir[256], crash[300], child[340];
    make_dir(dir, sizeof dir, "fork_files");
    snprintf(crash, sizeof crash, "%s/server.trace", dir);
    tt_log_options o = small_log(256, 2);
    o.crash_file = crash;
    o.fork_files = 3;
    CHECK_OP(tt_log_start(&o), ==, 0);
    enum { N = 5 };
    pid_t pids[N];
    for (int i = 0; i < N; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            if (i == 0)
                exit(0); /* granted, records nothing */
            tt_event_value(3, (uint64_t)i);
            raise(SIGKILL);
            _exit(1);
        }
        int status = 0;
        CHECK_OP(waitpid(pids[i], &status, 0), ==, pids[i]);
    }
    CHECK_OP(count_entries(dir), ==, 3); /* the parent's, children 1 and 2 */
    for (int i = 0; i < N; i++) {
        snprintf(child, sizeof child, "%s.%d", crash, (int)pids[i]);
        if (i == 0 || i > 2) {
            CHECK(access(child, F_OK) != 0);
            continue;
        }
        CHECK_OP(mode_of(child), ==, 0600);
        loaded_trace lt;
        CHECK_OP(load_trace(child, &lt), ==, 0);
        tt__trace_event ev;
        if (lt.rc == 0) {
            CHECK(lt.t.nthreads == 1 && tt__trace_event_at(&lt.t, &lt.t.threads[0], 0, &ev) && ev.id == 3 &&
                  ev.p0 == (uint64_t)i);
            free_trace(&lt);
        }
    }
    CHECK_OP(tt_log_stop(), ==, 0);
    remove_dir(dir);
}

TT_TEST(file_mode_can_be_asked_for)
{
    char dir[256], dump[300], crash[300];
    make_dir(dir, sizeof dir, "mode_asked");
    snprintf(dump, sizeof dump, "%s/dump.trace", dir);
    snprintf(crash, sizeof crash, "%s/crash.trace", dir);
    mode_t old = umask(022);
    tt_log_options o = small_log(64, 2);
    o.crash_file = crash;
    o.file_mode = 0640;
    CHECK_OP(tt_log_start(&o), ==, 0);
    CHECK_OP(tt_log_dump(dump), ==, 0);
    CHECK_OP(tt_log_stop(), ==, 0);
    CHECK_OP(mode_of(crash), ==, 0640);
    CHECK_OP(mode_of(dump), ==, 0640);
    unlink(crash);
    o.file_mode = 0;
    setenv("THREADTIME_FILE_MODE", "0644", 1);
    CHECK_OP(tt_log_start(&o), ==, 0);
    CHECK_OP(tt_log_stop(), ==, 0);
    CHECK_OP(mode_of(crash), ==, 0644);
    /* Modes the owner could not read and write, or with special bits. */
    unlink(crash);
    o.file_mode = 0400;
    CHECK_OP(tt_log_start(&o), ==, -EINVAL);
    o.file_mode = 04600;
    CHECK_OP(tt_log_start(&o), ==, -EINVAL);
    CHECK(strstr(tt_log_error(), "file_mode") != NULL);
    o.file_mode = 0;
    setenv("THREADTIME_FILE_MODE", "0400", 1);
    CHECK_OP(tt_log_start(&o), ==, -EINVAL);
    CHECK(strstr(tt_log_error(), "THREADTIME_FILE_MODE") != NULL);
    CHECK(access(crash, F_OK) != 0);
    unsetenv("THREADTIME_FILE_MODE");
    umask(old);
    remove_dir(dir);
}

/* Runs tt_log_start(NULL) with variable name set to value and fd 2 sent
 * to a file; returns the start's code and what it printed. */
static int start_with_env(const char *name, const char *value, char *said, size_t n)
{
    char path[256];
    temp_path(path, sizeof path, "stderr");
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    int saved = dup(2);
    fflush(stderr);
    dup2(fd, 2);
    setenv(name, value, 1);
    int rc = tt_log_start(NULL);
    unsetenv(name);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t got = pread(fd, said, n - 1, 0);
    said[got > 0 ? got : 0] = 0;
    close(fd);
    unlink(path);
    if (rc == 0)
        tt_log_stop();
    return rc;
}

TT_TEST(a_refused_value_is_named)
{
    static const struct {
        const char *name, *value, *range;
    } cases[] = {
        {"THREADTIME_RING", "12x", "8388608"},
        {"THREADTIME_RING", "99999999", "8388608"},
        {"THREADTIME_THREADS", "70000", "65536"},
        {"THREADTIME_CPU", "yes", "1"},
        {"THREADTIME_CLOCK", "sundial", "monotonic"},
        {"THREADTIME_FORK_FILES", "-1", "4294967295"},
        {"THREADTIME_FILE_MODE", "rw", "0600"},
    };
    char said[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_OP(start_with_env(cases[i].name, cases[i].value, said, sizeof said), ==, -EINVAL);
        /* The detail names the variable and the values allowed; the line
         * on stderr also shows the value refused. */
        CHECK(strstr(tt_log_error(), cases[i].name) != NULL);
        CHECK(strstr(tt_log_error(), cases[i].range) != NULL);
        CHECK(strstr(said, cases[i].name) != NULL);
        CHECK(strstr(said, cases[i].value) != NULL);
        CHECK(strchr(said, '\n') == said + strlen(said) - 1); /* one line */
    }
    /* A control byte in a value is shown escaped. */
    CHECK_OP(start_with_env("THREADTIME_RING", "1\x1b]0;x\x07", said, sizeof said), ==, -EINVAL);
    CHECK(strchr(said, '\x1b') == NULL && strstr(said, "\\x1b") != NULL);
    /* A field out of range is named by its field, with nothing printed. */
    tt_log_options o = small_log(TT_LOG_RING_MAX + 1, 2);
    fflush(stderr);
    CHECK_OP(tt_log_start(&o), ==, -EINVAL);
    CHECK(strstr(tt_log_error(), "ring_records") != NULL);
    /* A start that succeeds clears it; the code's text stays as it was. */
    CHECK_OP(start_with_env("THREADTIME_RING", "5", said, sizeof said), ==, 0);
    CHECK(strcmp(tt_log_error(), "") == 0);
    CHECK_OP(said[0], ==, 0);
    CHECK(strcmp(tt_strerror(-EINVAL), "invalid argument (or a thread of another process)") == 0);
}

TT_TEST_MAIN()
