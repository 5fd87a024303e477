#!/usr/bin/env python3
"""Tests of `threadtime run` on real programs, each against a truth that
threadtime does not produce: wait4() rusage, the program's own reading of
its threads, thread names the JVM gives, the processes make starts.

Usage: test_run.py THREADTIME RUN_THREADS RUN_SANDBOXED
(TEST_RUN_ONLY="test_a test_b" runs those alone). No check depends on
timing: the programs' work is fixed, and every tolerance is explained
where it is used.
Temporary files go under $TMPDIR (the build tree's)."""
import errno
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from harness import check, main, scratch

TT, RUN_THREADS, RUN_SANDBOXED = (os.path.abspath(a) for a in sys.argv[1:4])
TMP = scratch("test_run.")


def run(args, fmt="json", stdin=None, extra=(), wrap=(), env=None):
    """threadtime run --format fmt -- args: (returncode, stdout, report);
    wrap: a command that runs threadtime (unshare ...); env: variables added."""
    rep = os.path.join(TMP, "report")
    p = subprocess.run([*wrap, TT, "run", "--format", fmt, "--report", rep, *extra, "--", *args],
                       env={**os.environ, **(env or {})}, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=TMP)
    with open(rep) as f:
        text = f.read()
    check(os.stat(rep).st_mode & 0o077 == 0, f"--report: mode {os.stat(rep).st_mode & 0o777:o}, want 600")
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    return p.returncode, out, err, (json.loads(text) if fmt == "json" else text)


def threads(report):
    return [t for p in report["processes"] for t in p["threads"]]


def program_threads(report):
    return [t for t in threads(report) if t["how"] != "threadtime"]


def sum_matches_rusage(report, name):
    # The report's threads are read by themselves at their end, or at exit()
    # by the exit handler; wait4() counts every ns the process ran, so it
    # also holds what ran after those reads: the rest of exit() and the
    # kernel's teardown of the process. Both sums are runtimes (the kernel
    # scales its user/system ticks so user + system == runtime), so the
    # difference is that CPU alone, never a tick's rounding (neither the
    # 4 ms scheduler tick, HZ=250, nor the 10 ms unit of /proc, getconf
    # CLK_TCK = 100 here: neither figure is in clock ticks). 4 ms per thread
    # is far above it for these small inputs (seen: 1-5 ms in all).
    total = report["threads_total_ns"]
    rus = report["rusage"]["user_ns"] + report["rusage"]["system_ns"]
    n = len(threads(report))
    print(f"  {name}: threads {total / 1e6:.3f} ms, wait4 {rus / 1e6:.3f} ms, {n} threads")
    check(total <= rus + 1_000_000 * n, f"{name}: threads sum {total} above wait4 {rus}")
    check(rus - total <= 4_000_000 * n, f"{name}: threads sum {total} short of wait4 {rus} by more than 4 ms/thread")


def every_process_counted(report, name):
    # For programs whose threads are all read at their ends (no killed
    # process, no sampled thread), what wait4 counts beyond the reads is
    # each process's teardown after its last read: tens of us for a shell,
    # ~0.3 ms for python. 2 ms per process is far above that and far below
    # a lost main thread or worker (tens to hundreds of ms in these tests).
    total = report["threads_total_ns"]
    rus = report["rusage"]["user_ns"] + report["rusage"]["system_ns"]
    n = len(report["processes"])
    print(f"  {name}: threads {total / 1e6:.3f} ms, wait4 {rus / 1e6:.3f} ms, {n} processes")
    check(total <= rus + 1_000_000 and rus - total <= 2_000_000 * n, f"{name}: threads sum {total} against wait4 {rus}")


def text_file():
    path = os.path.join(TMP, "input.txt")
    with open(path, "w") as f:
        for i in range(200000):
            f.write(f"line {i} of some text {i * 7919 % 10007} alpha beta gamma\n")
    return path


def test_xz_zstd():
    src = text_file()
    for name, args, workers in (("xz", ["xz", "-1", "-T2", "-c", src], 2),
                                ("zstd", ["zstd", "-1", "-T2", "-q", "-c", src], 2)):
        if not shutil.which(name):
            print(f"  SKIP {name}: not installed (.ci/deps.d/run.apt)")
            continue
        rc, out, err, rep = run(args)
        check(rc == 0, f"{name}: exit status {rc}: {err}")
        check(len(rep["processes"]) == 1 and rep["processes"][0]["exited"], f"{name}: one process that exited")
        # A worker still in its own end when the process exits (exit_group
        # kills it inside its record) reads as its last sample, one the
        # sampler found before its start record as sampled: both with no
        # split (-1), the report's word that none is known. The exit raced
        # it, so either is true; its CPU still counts against wait4 below.
        started = [t for t in program_threads(rep) if t["how"] in ("ended", "at exit", "last sample", "sampled")
                   and t["tid"] != rep["processes"][0]["pid"]]
        check(len(started) >= workers, f"{name}: {len(started)} worker threads reported, want >= {workers}")
        split = [t for t in program_threads(rep) if t["user_ns"] + t["system_ns"] != t["total_ns"] and
                 not (t["how"] in ("last sample", "sampled") and t["user_ns"] == t["system_ns"] == -1)]
        check(not split, f"{name}: user + system == total: {split}")
        sum_matches_rusage(rep, name)


def test_short_threads():
    rc, out, err, rep = run([RUN_THREADS, "short", "200"])
    check(rc == 0, f"short: exit status {rc}: {err}")
    own, before = {}, {}
    for line in out.split("\n"):
        if line:
            tid, user, system, before[tid] = map(int, line.split())
            own[tid] = (user, system)
    check(len(own) == 200, f"short: the program printed {len(own)} threads")
    ended = {t["tid"]: t for t in threads(rep) if t["how"] == "ended"}
    missing = [tid for tid in own if tid not in ended]
    check(not missing, f"short: {len(missing)} of 200 threads not reported as ended: {missing[:5]}")
    bad = []
    for tid, (user, system) in own.items():
        t = ended.get(tid)
        if not t:
            continue
        # The report's split is read on the same thread after the program's
        # own read, and the kernel keeps each part monotonic per thread:
        # never less. Above it by at most the CPU the thread used after its
        # sleep began, which is at most the wall time from the sleep's end
        # to the report's end of its life: the kernel counts a thread's CPU
        # when it leaves the CPU, so the program's read missed at most what
        # ran after the sleep; and the report's start is before the
        # program's, so that wall time is at most lifetime - before. (Mostly
        # a printf's CPU, but a loaded host has shown 2.7 ms of system time
        # there: no fixed bound holds; a report that counted the sleep as
        # CPU exceeds this one.)
        if not (t["user_ns"] >= user and t["system_ns"] >= system and
                t["total_ns"] - (user + system) <= t["lifetime_ns"] - before[tid]):
            bad.append((tid, (user, system), (t["user_ns"], t["system_ns"])))
    check(not bad, f"short: splits disagree with the threads' own: {bad[:3]}")
    # Every ended thread has its switch counts; one that lived under 2 ms
    # has no wait read (-1, never 0: reading it would cost more than the
    # thread). (A wait that was read is not bounded by the life shown: it
    # counts from the thread's creation, and a new thread can wait long
    # for its first run before it stamps its start.)
    wait_bad = [t for t in ended.values() if t["voluntary_switches"] < 0 or t["involuntary_switches"] < 0 or
                (t["lifetime_ns"] < 2_000_000 and t["run_wait_ns"] != -1)]
    check(not wait_bad, f"short: switches and waits: {wait_bad[:3]}")
    sum_matches_rusage(rep, "short")


def test_short_threads_exact():
    # The truth is the kernel's: the program's main thread reads the process
    # CPU clock around each thread's life (once the thread is gone, its
    # runtime is in the process's figure) and takes its own part out, so the
    # thread ran between lo and hi. The threads burn with no system call, so
    # a read that is not brought up to date misses up to a tick (4 ms here)
    # at their end. No sampler: its CPU would count in the process clock.
    rc, out, err, rep = run([RUN_THREADS, "exact", "100"], extra=("--interval", "0"))
    check(rc == 0, f"exact: exit status {rc}: {err}")
    truth = {int(t): (int(lo), int(hi)) for t, lo, hi in (l.split() for l in out.splitlines() if l)}
    ended = {t["tid"]: t for t in threads(rep) if t["how"] == "ended"}
    check(len(truth) == 100 and set(truth) <= set(ended), f"exact: {len(truth)} threads printed, all reported ended")
    # After its read at its end a thread still runs the rest of its exit
    # (libc's and the kernel's): 7-92 us of CPU seen here, idle, pinned to
    # one CPU and beside a busy loop per CPU. 500 us is far above that and
    # far below what a read as of the last tick misses (median 1 ms).
    bad = [(tid, lo, hi, ended[tid]["total_ns"]) for tid, (lo, hi) in truth.items()
           if tid in ended and not (lo - 500_000 <= ended[tid]["total_ns"] <= hi)]
    check(not bad, f"exact: {len(bad)} threads outside the kernel's figure (tid, lo, hi, report): {bad[:3]}")


def test_dash():
    # dash (Debian's /bin/sh) ends with _exit(), and so does its subshell, a
    # fork that never execs; neither runs exit()'s handlers. The truth is
    # wait4()'s rusage of the whole command.
    loop = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"
    rc, out, err, rep = run(["/bin/sh", "-c", f"{loop}; ({loop}); exit 3"])
    check(rc == 3, f"dash: exit status {rc}: {err}")
    procs = rep["processes"]
    check(len(procs) == 2 and all(p["exited"] for p in procs),
          f"dash: the shell and its subshell both exited: {[(p['pid'], p['state']) for p in procs]}")
    mains = [t for p in procs for t in p["threads"] if t["tid"] == p["pid"]]
    check(len(mains) == 2 and all(t["how"] == "at exit" and t["total_ns"] > 0 for t in mains),
          f"dash: each main thread read at its exit: {mains}")
    every_process_counted(rep, "dash")


def test_vfork_child_exit():
    # A vfork child runs on its parent's memory: its _exit() must leave the
    # parent's recording alone (the parent goes on and starts a thread).
    rc, out, err, rep = run([RUN_THREADS, "vfork"])
    check(rc == 0, f"vfork: exit status {rc}: {err}")
    tid = int(out.split()[0]) if out.split() else -1
    # The child (counted from the parent's wait4: it has no record of its
    # own) and the parent, which exited.
    procs = {p["pid"]: p for p in rep["processes"]}
    check(len(procs) == 2 and sum(p["exited"] for p in procs.values()) == 1 and
          all(p["exited"] or "parent's wait4" in p["state"] for p in procs.values()),
          f"vfork: the parent exited: {[p['state'] for p in procs.values()]}")
    check(any(t["tid"] == tid and t["how"] == "ended" for t in threads(rep)), f"vfork: the later thread {tid} ended")
    # The main thread's 30 ms after the vfork are counted: read at the
    # parent's exit, not at the child's _exit.
    every_process_counted(rep, "vfork")


def test_names():
    # An empty name is the thread's name (not the one it inherited).
    rc, out, err, rep = run([RUN_THREADS, "noname"])
    tid = int(out.split()[0]) if out.split() else -1
    t = [t for t in threads(rep) if t["tid"] == tid]
    check(rc == 0 and len(t) == 1 and t[0]["name"] == "", f"noname: thread {tid} named '': {t}")
    # The sampler is never one of the program's threads, not even in a
    # process that ends before it ran: 20 /bin/true, each main thread only.
    rc, out, err, rep = run(["/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do /bin/true; done"])
    extra = [(p["pid"], t["tid"], t["name"]) for p in rep["processes"] for t in p["threads"]
             if t["how"] != "threadtime" and t["tid"] != p["pid"]]
    check(rc == 0 and not extra, f"sampler: threads other than the main ones reported: {extra}")


def tmp_left(d):
    return [f for f in os.listdir(d) if f.startswith("threadtime-run.")]


def test_fork_pool():
    # A multiprocessing pool forks without exec; leaving the with-block
    # terminates (SIGTERM) its workers, which record no exit of their own.
    # The truth is wait4's: threadtime's children's rusage (the command and
    # what it reaped).
    code = ("import multiprocessing as mp\n"
            "def f(n):\n    return sum(i * i for i in range(n))\n"
            "if __name__ == '__main__':\n"
            "    mp.set_start_method('fork')\n"
            "    with mp.Pool(2) as p:\n        print(sum(p.map(f, [200000] * 8)))\n")
    rc, out, err, rep = run([sys.executable, "-c", code])
    check(rc == 0, f"pool: exit status {rc}: {err[-300:]}")
    procs = rep["processes"]
    check(len(procs) == 3, f"pool: the python process and its 2 workers: {[(p['pid'], p['state']) for p in procs]}")
    every_process_counted(rep, "pool")


def test_survivor():
    # A background subshell outlives the command. The report says it is
    # still running (the kernel agrees: /proc has it when threadtime has
    # returned), with its CPU so far; --wait-all waits for it instead. The
    # subshell burns first (tens of ms: several scheduler ticks, each of
    # which adds its CPU to the runtime the kernel shows other processes),
    # then tells the shell (a FIFO) and blocks on a second FIFO that only
    # this test opens, after the report: so it is alive when the report is
    # written, with CPU the kernel has counted. A running task's schedstat
    # lags by up to a tick when read by another process: a subshell that
    # had run only part of its first slice read 0 there (15 times in 40
    # under load, when the report came while it was still in that slice).
    d = tempfile.mkdtemp(dir=TMP)
    ran, go = os.path.join(d, "ran"), os.path.join(d, "go")
    os.mkfifo(ran)
    os.mkfifo(go)
    loop = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"
    for wait in (False, True):
        rep_path = os.path.join(d, "report")
        p = subprocess.Popen([TT, "run", "--format", "json", "--report", rep_path, *(["--wait-all"] if wait else []),
                              "--", "/bin/sh", "-c", f"({loop}; echo > '{ran}'; read y < '{go}') > '{d}/bg.out' & read x < '{ran}'; echo $!"],
                             stdout=subprocess.PIPE, text=True, env=dict(os.environ, TMPDIR=d))
        bg = int(p.stdout.readline().split()[0])
        p.stdout.close()
        if wait:
            with open(go, "w") as f:  # let it go on: the command waits for its end
                f.write("\n")
            p.wait()
            alive = os.path.exists(f"/proc/{bg}")
            rep = json.load(open(rep_path))
            mine = [q for q in rep["processes"] if q["pid"] == bg]
            check(not alive and len(mine) == 1 and mine[0]["exited"], f"--wait-all: the background job ended first: {mine}")
            every_process_counted(rep, "--wait-all")
        else:
            p.wait()
            alive = os.path.exists(f"/proc/{bg}")
            rep = json.load(open(rep_path))
            mine = [q for q in rep["processes"] if q["pid"] == bg]
            check(alive and len(mine) == 1 and "still running" in mine[0]["state"] and
                  sum(t["total_ns"] for t in mine[0]["threads"]) > 0,
                  f"survivor: reported as still running, with its CPU so far: alive {alive}, {mine}")
            with open(go, "w") as f:
                f.write("\n")
            while os.path.exists(f"/proc/{bg}"):  # its end, not a time
                time.sleep(0.05)
        check(not tmp_left(d), f"survivor (wait={wait}): left in TMPDIR: {tmp_left(d)}")


def test_survivor_planted_dir():
    # A process that outlives the command keeps THREADTIME_RUN_DIR, whose
    # name is free again once run has ended. A directory made again at that
    # name (another user's, if world-writable /tmp lets them) is not written
    # through: one that others may enter is refused whole, and in a private
    # one a planted symlink is not followed. The truth: the victim file's
    # bytes, and what the planted directory holds after the survivor exec'd.
    d = tempfile.mkdtemp(dir=TMP)
    for mode in (0o755, 0o700):
        go = os.path.join(d, f"go{mode:o}")
        os.mkfifo(go)
        p = subprocess.run([TT, "run", "--format", "json", "--report", os.path.join(d, "report"), "--",
                            "/bin/sh", "-c", f"(read x < '{go}'; exec /bin/true) > '{go}.out' & echo $!"],
                           stdout=subprocess.PIPE, text=True, env=dict(os.environ, TMPDIR=d))
        bg = int(p.stdout.split()[0])
        with open(f"/proc/{bg}/environ", "rb") as f:
            env = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
        run_dir = env.get(b"THREADTIME_RUN_DIR", b"").decode()
        check(run_dir and not os.path.exists(run_dir), f"planted ({mode:o}): run's directory is gone: {run_dir!r}")
        victim = os.path.join(d, f"victim{mode:o}")
        with open(victim, "wb") as f:
            f.write(bytes(4096))
        os.mkdir(run_dir)
        os.chmod(run_dir, mode)
        planted = {f"{bg}-{n}.ttrun" for n in range(4)} | {"run.ttlog"}
        for name in planted:
            os.symlink(victim, os.path.join(run_dir, name))
        with open(go, "w") as f:
            f.write("\n")
        while os.path.exists(f"/proc/{bg}"):  # its end, not a time
            time.sleep(0.05)
        with open(victim, "rb") as f:
            check(f.read() == bytes(4096), f"planted ({mode:o}): the file behind a symlink was written")
        made = sorted(set(os.listdir(run_dir)) - planted)
        if mode == 0o755:
            check(made == [], f"planted ({mode:o}): files made in a directory open to others: {made}")
        shutil.rmtree(run_dir)


def test_signals_and_leftovers():
    import signal
    d = tempfile.mkdtemp(dir=TMP)
    env = dict(os.environ, TMPDIR=d)
    # The report written into a closed pipe: CMD's status passes through.
    p = subprocess.Popen([TT, "run", "--", "sh", "-c", "seq 20000 >&2; exit 5"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=env)
    p.stderr.close()
    check(p.wait() == 5, f"closed pipe: exit status {p.returncode}, want the command's 5")
    check(not tmp_left(d), f"closed pipe: left in TMPDIR: {tmp_left(d)}")
    # SIGUSR1 to threadtime goes on to CMD, which dies of it; so does
    # threadtime, after its report, leaving nothing behind.
    p = subprocess.Popen([TT, "run", "--report", os.path.join(d, "r1"), "--", "sleep", "60"], env=env,
                         stderr=subprocess.DEVNULL)
    while not recorded(d):  # the command's start is recorded: it runs
        time.sleep(0.01)
    p.send_signal(signal.SIGUSR1)
    check(p.wait() == -signal.SIGUSR1, f"SIGUSR1: exit status {p.returncode}")
    check("exit status 138" in open(os.path.join(d, "r1")).read(), "SIGUSR1: the report came first")
    check(not tmp_left(d), f"SIGUSR1: left in TMPDIR: {tmp_left(d)}")
    # After CMD has ended (--wait-all waiting for a background sleep), a
    # SIGTERM still ends threadtime, and cleans up.
    p = subprocess.Popen([TT, "run", "--wait-all", "--report", os.path.join(d, "r3"), "--", "sh", "-c",
                          "sleep 60 & echo $!"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    bg = int(p.stdout.readline())
    while parent_of(bg) != p.pid:  # sh has ended and its sleep came to threadtime
        time.sleep(0.01)
    p.send_signal(signal.SIGTERM)
    check(p.wait() == -signal.SIGTERM, f"SIGTERM after the command: exit status {p.returncode}")
    os.kill(bg, signal.SIGKILL)
    check(not tmp_left(d), f"SIGTERM after the command: left in TMPDIR: {tmp_left(d)}")
    # Neither the report it did not write, nor the new file made for it.
    check(sorted(os.listdir(d)) == ["r1"], f"SIGTERM after the command: files left: {sorted(os.listdir(d))}")


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def recorded(d):
    """Whether a process of a run under d recorded its start: a file of its
    own, or a record in the run's log (a lone process's)."""
    import glob
    logs = glob.glob(os.path.join(d, "threadtime-run.*", "run.ttlog"))
    return glob.glob(os.path.join(d, "threadtime-run.*", "*.ttrun")) or any(os.path.getsize(f) for f in logs)


def pty_rest(fd):
    """What a pty's master reads until the other side is gone."""
    buf = b""
    while True:
        try:
            chunk = os.read(fd, 1000)
        except OSError:
            return buf
        if not chunk:
            return buf
        buf += chunk


def test_sigint_once():
    # Ctrl-C on a terminal reaches the whole foreground group, CMD included:
    # threadtime must not send it a second one.
    import pty
    prog = ("import signal, time\nn = 0\ndef h(s, f):\n    global n; n += 1\n"
            "signal.signal(signal.SIGINT, h)\nprint('ready', flush=True)\n"
            "t = time.monotonic()\nwhile n == 0 or time.monotonic() - t < 0.5:\n    time.sleep(0.01)\n"
            "print('INT', n, flush=True)\n")
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(TT, [TT, "run", "--report", os.path.join(TMP, "int.txt"), "--", sys.executable, "-c", prog])
    buf = b""
    while b"ready" not in buf:
        buf += os.read(fd, 1000)
    os.write(fd, b"\x03")
    buf += pty_rest(fd)
    os.waitpid(pid, 0)
    check(b"INT 1" in buf, f"SIGINT once: {buf[-200:]!r}")


def test_ctrl_c_keeps_the_report():
    # Ctrl-C on a terminal: SIGINT to the whole foreground group. The
    # command handles it by exiting 0 (its own output says it had it): the
    # report is written and the status is the command's, whether the
    # command ended before threadtime took its own SIGINT or after. As
    # root, the command runs first (SCHED_FIFO, all on one CPU), the order
    # in which threadtime once took the signal as "stop the report".
    import pty
    import signal
    ready, rep = os.path.join(TMP, "ctrl-c-ready"), os.path.join(TMP, "ctrl-c.txt")
    cmd = ["sh", "-c", f"trap 'echo interrupted; exit 0' INT; : > {ready}; while :; do sleep 0.05; done"]
    first = os.geteuid() == 0 and shutil.which("chrt") and shutil.which("taskset")
    argv = [TT, "run", "--report", rep, "--", *(["chrt", "-f", "10"] if first else []), *cmd]
    pid, fd = pty.fork()
    if pid == 0:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # an ignored one would stay so (a background test run)
        if first:
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        os.execv(TT, argv)
    while not os.path.exists(ready):
        time.sleep(0.01)
    os.write(fd, b"\x03")
    buf = b""
    buf += pty_rest(fd)
    _, st = os.waitpid(pid, 0)
    text = open(rep).read() if os.path.exists(rep) else ""
    check(b"interrupted" in buf, f"ctrl-c: the command had the SIGINT: {buf[-200:]!r}")
    check(os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0, f"ctrl-c: threadtime's status {st:#x}, the command's was 0")
    check("exit status 0" in text, f"ctrl-c: the report is written: {text[-300:]!r}")


def nobody_dir(test):
    """A directory of nobody's own, beside TMP (nobody cannot enter TMP),
    else in /var/tmp where a clone in a 0700 directory hides the build tree,
    with threadtime and its preload library copied there (nobody may not
    reach the build tree's: THREADTIME_RUN_LIB names the copy). Returns
    nobody's passwd entry, the directory, the threadtime copy and an
    environment with TMPDIR the directory; d None (one SKIP line said why)
    where there is no such directory."""
    import pwd
    nobody = pwd.getpwnam("nobody")
    for base in (os.path.dirname(TMP), "/var/tmp"):
        d = tempfile.mkdtemp(prefix="test_run_nobody.", dir=base)
        os.chown(d, nobody.pw_uid, nobody.pw_gid)
        if subprocess.run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
                           "test", "-w", d]).returncode == 0:
            break
        os.rmdir(d)
    else:
        print(f"  SKIP {test}: nobody can reach no new directory beside the build tree's or in /var/tmp")
        return nobody, None, None, None
    tt = os.path.join(d, "threadtime")
    shutil.copy(TT, tt)
    build = os.path.dirname(os.path.dirname(TT))
    lib = glob.glob(os.path.join(build, "lib*", "**", "libthreadtime_run.so"), recursive=True)
    shutil.copy(lib[0], d)
    return nobody, d, tt, dict(os.environ, TMPDIR=d, THREADTIME_RUN_LIB=os.path.join(d, "libthreadtime_run.so"))


def test_unprivileged_leaves_nothing():
    # Run by a user other than root, threadtime removes its run directory
    # and the files in it: the kernel's listing of TMPDIR after it returns
    # holds nothing of it. As root here, the run is nobody's.
    if os.geteuid() != 0:
        d = tempfile.mkdtemp(dir=TMP)
        p = subprocess.run([TT, "run", "--", "true"], stderr=subprocess.PIPE, text=True, env=dict(os.environ, TMPDIR=d))
        check(p.returncode == 0 and not tmp_left(d), f"unprivileged: {p.returncode}, left in TMPDIR: {tmp_left(d)}")
        return
    if not shutil.which("setpriv"):
        print("  SKIP unprivileged: needs setpriv (to run as nobody)")
        return
    nobody, d, tt, env = nobody_dir("unprivileged")
    if not d:
        return
    for cmd in (["true"], ["/bin/sh", "-c", "true & wait"]):
        p = subprocess.run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
                            tt, "run", "--", *cmd], stderr=subprocess.PIPE, text=True, env=env)
        left = [os.path.join(r, f) for r, ds, fs in os.walk(d) for f in ds + fs if "threadtime-run." in r + f]
        check(p.returncode == 0 and not left, f"unprivileged {cmd}: {p.returncode} {p.stderr[-300:]}, left: {left}")
    shutil.rmtree(d)


def test_setuid_and_caps():
    # The loader drops LD_PRELOAD for a program that changes user or gains
    # file capabilities, run by another user than root. threadtime says so,
    # samples it from outside, and the command's rusage stands; as a child
    # of a shell, it is counted from the shell's wait4.
    if os.geteuid() != 0 or not shutil.which("setcap") or not shutil.which("setpriv"):
        print("  SKIP setuid/caps: needs root, setcap and setpriv (to run as nobody)")
        return
    nobody, d, tt, env = nobody_dir("setuid/caps")
    if not d:
        return
    caps, suid = os.path.join(d, "caps_threads"), os.path.join(d, "suid_threads")
    shutil.copy(RUN_THREADS, caps)
    shutil.copy(RUN_THREADS, suid)
    os.chmod(caps, 0o755)
    os.chmod(suid, 0o4755)  # root's, setuid
    if subprocess.run(["setcap", "cap_net_raw+ep", caps]).returncode != 0:
        print("  SKIP setuid/caps: setcap failed (a file system without xattrs?)")
        shutil.rmtree(d)
        return
    for exe, why in ((caps, "file capabilities"), (suid, "setuid")):
        rep = os.path.join(d, "report")
        p = subprocess.run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
                            tt, "run", "--format", "json", "--report", rep, "--", exe, "exact", "20"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        r = json.load(open(rep)) if os.path.exists(rep) else {"processes": []}
        check(p.returncode == 0 and why in p.stderr and "did not load" not in p.stderr,
              f"{why}: said why it is not preloaded: {p.returncode} {p.stderr[-300:]}")
        check([q["state"] for q in r["processes"]] == ["sampled from outside"] and r["rusage"]["user_ns"] > 0,
              f"{why}: sampled from outside, the rusage kept: {r}")
        if os.path.exists(rep):
            os.remove(rep)
    # Run by a shell (dash), it is a child with no record of its own.
    rep = os.path.join(d, "report")
    p = subprocess.run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
                        tt, "run", "--format", "json", "--report", rep, "--", "/bin/sh", "-c", f"{caps} exact 20; exit 0"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    r = json.load(open(rep))
    unrecorded = [q for q in r["processes"] if "parent's wait4" in q["state"]]
    check(p.returncode == 0 and len(unrecorded) == 1, f"caps child: counted from the shell's wait4: {r['processes']}")
    every_process_counted(r, "caps child")
    shutil.rmtree(d)


def test_sizes():
    # A recording is as large as what was recorded: 21 processes of one
    # thread each kept with -o take a header (4 KiB) and a record or two
    # each, not the 2.6 MB each process's file may grow to.
    keep = os.path.join(TMP, "sizes.ttrun")
    rc, out, err, rep = run(["/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do /bin/true; done"],
                            extra=("-o", keep))
    n = len(rep["processes"])
    size = os.stat(keep).st_size
    check(rc == 0 and n == 21 and size <= 16384 * n, f"sizes: -o of {n} processes is {size} bytes")
    d = subprocess.run([TT, "dump", "--format", "json", keep], stdout=subprocess.PIPE, text=True)
    check(d.returncode == 0 and json.loads(d.stdout)["processes"] == rep["processes"], "sizes: dump reads it back the same")


def test_lone_process_no_file():
    # A process that never took a record before its exit (a shell's child
    # that runs and ends) makes no file of its own: its start and its exit
    # are two records in the run's log. The truth is the run directory as
    # the shell lists it after the child ended (the log, the shell's file,
    # which it made to keep its reap of the child, and nothing of the
    # child's), and the report still has that child's one thread, read at
    # its exit.
    rc, out, err, rep = run(["/bin/sh", "-c", '/bin/true & wait $!; echo $! $$ $(ls "$THREADTIME_RUN_DIR")'])
    words = out.split()
    pid, sh = (int(words[0]), words[1]) if len(words) > 1 else (-1, "")
    check(rc == 0 and sorted(words[2:]) == [f"{sh}-0.ttrun", "run.ttlog"],
          f"no file: the run directory holds {words[2:]} ({err[-200:]})")
    p = [p for p in rep["processes"] if p["pid"] == pid]
    t = p[0]["threads"] if len(p) == 1 else []
    check(len(t) == 1 and t[0]["how"] == "at exit" and t[0]["tid"] == pid and t[0]["total_ns"] > 0 and p[0]["exited"],
          f"no file: its thread read at its exit: {p}")


DAMAGED_LOG = """\
import json, os, struct
log = os.path.join(os.environ["THREADTIME_RUN_DIR"], "run.ttlog")
def true():
    pid = os.posix_spawn("/bin/true", ["/bin/true"], os.environ)
    _, st, ru = os.wait4(pid, 0)
    return pid, round((ru.ru_utime + ru.ru_stime) * 1e9)
def append(b):
    with open(log, "ab") as f:
        f.write(b)
got = [true()]
append(b"garbage")  # no record: 7 bytes
got.append(true())
# A record's marks and size around a kind no reader knows: 512 bytes.
append(struct.pack("<IHH", 0x474C5454, 512, 9) + bytes(500) + struct.pack("<I", 0x444E4554))
got.append(true())
with open(log, "rb") as f:
    append(f.read(300))  # the first record cut short: 300 bytes
got.append(true())
print(json.dumps(got))
"""


def test_damaged_log():
    # A program of the command writes into the run's log: bytes that are
    # no record, a record of an unknown kind, a record cut short. The
    # report says how many bytes it left out (819, the sum of what was
    # written) and still has every process whose records are whole: the
    # four /bin/true the script ran, each with its one thread at its exit,
    # within 2 ms of the kernel's wait4 figure of it (read by its parent;
    # the teardown after the thread's read is the difference, as in
    # every_process_counted).
    rc, out, err, rep = run([sys.executable, "-c", DAMAGED_LOG])
    check(rc == 0, f"damaged log: exit status {rc}: {err[-300:]}")
    got = json.loads(out) if out.strip() else []
    check("819 bytes of the run's log were no whole record" in err, f"damaged log: the notice: {err[-300:]}")
    procs = {p["pid"]: p for p in rep["processes"]}
    for pid, ru in got:
        p = procs.get(pid)
        t = p["threads"] if p else []
        check(p is not None and p["exited"] and len(t) == 1 and t[0]["how"] == "at exit" and
              0 <= ru - t[0]["total_ns"] <= 2_000_000,
              f"damaged log: /bin/true {pid} (wait4 {ru} ns) reported: {p}")
    check(len(got) == 4, f"damaged log: the script ran 4 processes: {got}")


def preload_lib():
    return glob.glob(os.path.join(os.path.dirname(os.path.dirname(TT)), "lib*", "**", "libthreadtime_run.so"),
                     recursive=True)[0]


def test_log_owner_and_mode():
    # A process that outlived its run keeps the log's device and inode in
    # its environment, and a filesystem reuses a freed inode number (ext4
    # does): a file made since at the log's path, of that inode, may be
    # another user's. The preload appends only to a regular file of the
    # owner threadtime run named and of the mode it made (0600), and makes
    # its own file otherwise. The truth: the planted log's size (the kernel's
    # stat) after /bin/true ran with the variables naming it, and what the
    # directory then holds. As root the planted log is nobody's and names
    # root, as a survivor would meet it; as another user (no chown) it names
    # an owner it does not have.
    d = tempfile.mkdtemp(dir=TMP)
    log = os.path.join(d, "run.ttlog")
    me = os.geteuid()
    cases = [("as made", me, me, 0o600, 1024),
             ("another owner", 65534 if me == 0 else me, 0 if me == 0 else me + 1, 0o600, 0),
             ("group write", me, me, 0o620, 0), ("others write", me, me, 0o602, 0),
             ("not the mode made", me, me, 0o400 if me == 0 else 0o644, 0)]
    for what, owner, named, mode, want in cases:
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        fd = os.open(log, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.fchmod(fd, mode)
        if owner != me:
            os.fchown(fd, owner, -1)
        st = os.fstat(fd)
        os.close(fd)
        p = subprocess.run(["/bin/true"], env=dict(os.environ, LD_PRELOAD=preload_lib(), THREADTIME_RUN_DIR=d,
                                                   THREADTIME_RUN_LOG_DEV=str(st.st_dev),
                                                   THREADTIME_RUN_LOG_INO=str(st.st_ino),
                                                   THREADTIME_RUN_LOG_UID=str(named)))
        size, files = os.stat(log).st_size, sorted(os.listdir(d))
        print(f"  log {what}: {size} bytes appended, directory {files}")
        check(p.returncode == 0 and size == want and len(files) == (1 if want else 2),
              f"log {what} (owner {owner}, named {named}, mode {mode:o}): {size} bytes appended, want {want}; "
              f"directory {files}")


def check_unrecorded(got, err_no, what):
    """run()'s result for sh running run_threads in a mode whose one thread
    (which printed "tid cpu_ns", then sh "status 0") went unrecorded for
    err_no: the process says why, and its one row (beside its sampler's) is
    its parent's wait4, which holds the thread's CPU by its own clock
    (rusage is in us: 2 us of truncation)."""
    rc, out, err, rep = got
    words = out.split()
    cpu = int(words[1]) if len(words) == 4 else -1
    p = [p for p in rep["processes"] if p["exe"] == RUN_THREADS]
    t = [x for x in p[0]["threads"] if x["how"] != "threadtime"] if len(p) == 1 else []
    print(f"  {what}: the thread burned {cpu} ns; the process: {p[0]['state'] if p else None}, "
          f"{[(x['how'], x['total_ns']) for x in t]}")
    check(rc == 0 and words[2:] == ["status", "0"], f"{what}: output {out!r}: {err[-300:]}")
    check(len(p) == 1 and not p[0]["exited"] and f"could not be made or grown ({os.strerror(err_no)})" in p[0]["state"]
          and "parent's wait4" in p[0]["state"], f"{what}: its state: {p}")
    check(len(t) == 1 and t[0]["how"] == "parent's wait4" and t[0]["total_ns"] >= cpu - 2000 > 0,
          f"{what}: its CPU, from its parent's wait4, holds the thread's {cpu} ns: {t}")


def test_no_file_made():
    # A process that logged its start and then could not make its own file
    # when it first needed it (its second thread): run_threads nofile runs
    # one descriptor short of its limit, so the file's making (the run
    # directory's descriptor, then the file's) fails with EMFILE, and the
    # log's append (one descriptor) still works. Its thread then runs
    # unrecorded: the report must say why, and count the process from its
    # parent's wait4 (sh reaps it), not as one that exited with its main
    # thread alone (a thread joined before exit: the code before wrote an
    # EXIT record short of the thread's CPU) or one killed (a thread alive
    # at exit: no exit record at all). The truths: the kernel's text of
    # EMFILE, and the thread's CPU by its own clock, which its parent's
    # wait4 holds.
    for mode in ("join", "live"):
        got = run(["/bin/sh", "-c", f"{RUN_THREADS} nofile {mode}; echo status $?"])
        check_unrecorded(got, errno.EMFILE, f"no file ({mode})")


def test_disk_full():
    # A full disk: the process's file is made (its header's page found
    # room), but its first record finds no blocks, so its thread (joined
    # before exit) and its own exit record are lost. The process must not
    # claim it exited with what little it holds: it says why, and its
    # parent's wait4 (sh reaps it) counts it. The filesystem is a tmpfs of
    # 1 MiB that run_threads diskfull fills, mounted in a mount namespace of
    # the test's (unshare -m as root, -Urm with a user namespace
    # otherwise: root inside it, so the preload takes root's path, the file
    # mapped as made). The truths: the kernel's text of ENOSPC, and the
    # thread's CPU by its own clock, which its parent's wait4 holds.
    wrap = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-Urm"]
    d = tempfile.mkdtemp(dir=TMP)
    mount = ["sh", "-c", f'mount -t tmpfs -o size=1m none "{d}" && exec "$@"', "sh"]
    if subprocess.run([*wrap, *mount, "true"], stderr=subprocess.DEVNULL).returncode != 0:
        print(f"  SKIP disk full: {' '.join(wrap)} and a tmpfs mount in it are not allowed here")
        return
    got = run(["/bin/sh", "-c", f"{RUN_THREADS} diskfull {d}/filler; echo status $?"],
              wrap=(*wrap, *mount), env={"TMPDIR": d})
    check_unrecorded(got, errno.ENOSPC, "disk full")


def test_many_lone_processes():
    # 2,000 processes of one thread started at once from sh (&): each
    # appends its start and exit to the one log at the same time as the
    # others. Every one is reported, whole (no record cut or mixed with
    # another: no notice), and the CPU of all threads stays within the
    # bound of every_process_counted of the kernel's wait4 of the tree.
    n = 2000
    rc, out, err, rep = run(["/bin/sh", "-c", f"i=0; while [ $i -lt {n} ]; do /bin/true & i=$((i+1)); done; wait"])
    check(rc == 0, f"many: exit status {rc}: {err[-300:]}")
    check("run's log" not in err, f"many: the log read whole: {err[-300:]}")
    trues = [p for p in rep["processes"] if p["exe"] == "/bin/true"]
    odd = [p for p in trues if not (p["exited"] and len(p["threads"]) == 1 and p["threads"][0]["total_ns"] > 0)]
    check(len(trues) == n and not odd,
          f"many: {len(trues)} of {n} /bin/true reported, exited with their thread; not so: "
          f"{[(p['pid'], p['exited'], p['state'], p['threads']) for p in odd[:3]]}")
    every_process_counted(rep, "many")


def test_lone_killed():
    # A process of one thread killed by SIGKILL has no exit record; its
    # parent (python, which never waits for it) leaves it to threadtime,
    # so no wait4 figure reaches the report either. Its start in the log
    # still lists it, as a process that did not exit. The truth is the pid
    # its parent started, and the kernel's word that it died of SIGKILL
    # (threadtime --wait-all reaps it; the shell's own status says it).
    script = ("import os, sys; p = os.posix_spawn('/bin/sh', ['sh', '-c', 'kill -9 $$'], os.environ); "
              "print(p); sys.stdout.flush(); os._exit(0)")
    rc, out, err, rep = run([sys.executable, "-c", script], extra=("--wait-all",))
    pid = int(out.split()[0]) if out.split() else -1
    p = [p for p in rep["processes"] if p["pid"] == pid]
    check(rc == 0 and len(p) == 1 and not p[0]["exited"] and "did not exit" in p[0]["state"] and
          os.path.basename(p[0]["exe"]) == "sh",
          f"killed: the lone sh {pid} listed as killed: {p} ({err[-200:]})")


def test_sample_ring_read_back():
    # The sampler's ring, far smaller than the samples written (7 against
    # ~2 a round at 1 ms), read back from the run directory in runs that
    # are contiguous in the file's ring and in the copy's: the report keeps
    # the latest ones (all but the slot being overwritten) in the order the
    # sampler wrote them, each of a thread of the process. The truth is the
    # order of writing: rounds never go back, and a later round's time is
    # later (the samples of one round share its time).
    rc, out, err, rep = run([RUN_THREADS, "pinned", "20"], extra=("--interval", "1"),
                            env={"THREADTIME_RUN_SAMPLES": "7"})
    p = rep["processes"][0]
    s, rounds = p["samples"], p["sampler"]["rounds"]
    tids = {t["tid"] for t in p["threads"]}
    if rounds < 20:
        print(f"  (sample ring: only {rounds} sampler rounds: the ring may not have wrapped)")
    ordered = all((a["round"], a["t_ns"]) == (b["round"], b["t_ns"]) or a["round"] < b["round"] and a["t_ns"] < b["t_ns"]
                  for a, b in zip(s, s[1:]))
    check(rc == 0 and (len(s) == 6 or rounds < 20) and ordered and all(x["tid"] in tids for x in s),
          f"sample ring: {len(s)} samples over {rounds} rounds, in the order written, of the process's threads: {s}")


def test_clone_thread():
    # A thread started with clone() directly: only the sampler can find it.
    # The program keeps it alive until the sampler finished two more rounds.
    rc, out, err, rep = run([RUN_THREADS, "clone"])
    check(rc == 0, f"clone: exit status {rc}: {err}")
    tid = int(out.split()[0]) if out.split() else -1
    t = [t for t in threads(rep) if t["tid"] == tid]
    check(len(t) == 1 and t[0]["how"] == "sampled" and t[0]["total_ns"] > 0,
          f"clone: the clone()d thread {tid} reported once, from the sampler: {t}")


def test_lone_clone_at_exit():
    # A process that started no thread through pthread_create, so the
    # preload knows of none but its main one, has a thread started with
    # clone() alive when it calls exit(): the exit handler must still read
    # it (whatever tells it the process is single-threaded must be the
    # kernel's count, not what the preload saw). The truth: the tid clone()
    # returned, and that thread's CPU as the kernel's clock of it said
    # before exit(), a floor for what the handler reads after.
    rc, out, err, rep = run([RUN_THREADS, "lone"])
    tid, cpu = (int(x) for x in out.split()) if len(out.split()) == 2 else (-1, -1)
    t = [t for t in threads(rep) if t["tid"] == tid]
    check(rc == 0 and len(t) == 1 and t[0]["how"] == "at exit" and t[0]["total_ns"] >= cpu > 0,
          f"lone: the clone()d thread {tid} (CPU {cpu} ns before exit) read at exit: {t} ({err})")


SPAWN_TRUE = """\
import os
pid = os.posix_spawn("/bin/true", ["/bin/true"], os.environ)
print(pid, os.waitpid(pid, 0)[1])
"""


def test_seccomp_at_exit():
    # The exit handler asks the kernel whether the process has one thread
    # without /proc, through unshare(CLONE_THREAD), only where the process
    # has no seccomp filter: a filter may kill it for a call it does not
    # expect. Here python and the /bin/true it starts run under a filter
    # that kills on unshare: both end as they would (the truth: their exit
    # statuses, and that the kernel did not kill either), and each is read
    # at its exit all the same (through /proc).
    rc, out, err, rep = run([sys.executable, "-c", "SECCOMP_DENY = {'unshare': 'kill'}\n" + SECCOMP + SPAWN_TRUE])
    child, status = (int(x) for x in out.split()) if len(out.split()) == 2 else (-1, -1)
    check(rc == 0 and status == 0, f"seccomp: python exit status {rc}, /bin/true's wait status {status}: {err[-300:]}")
    procs = {p["pid"]: p for p in rep["processes"]}
    for pid, what in ((child, "/bin/true"), (rep["processes"][0]["pid"], "python")):
        p = procs.get(pid, {})
        at_exit = [t for t in p.get("threads", []) if t["how"] == "at exit" and t["total_ns"] > 0]
        check(p.get("exited") and len(at_exit) == 1, f"seccomp: {what} ({pid}) read at its exit: {p}")


SPAWN_BURN = """\
import json, os, sys
burn = "x = 0\\nfor i in range(1_000_000):\\n    x += i\\n"
pid = os.posix_spawn(sys.executable, [sys.executable, "-c", burn], os.environ)
_, st, ru = os.wait4(pid, 0)
print(json.dumps({"pid": pid, "status": st, "ru": round((ru.ru_utime + ru.ru_stime) * 1e9)}))
"""


def test_sigsys_at_exit():
    # A sandbox's seccomp filter may answer a call with SIGSYS
    # (SECCOMP_RET_TRAP) and emulate it in its handler. The preload holds
    # signals while it writes a lone process's exit record, whose first call
    # is the open of the run's log; a held SIGSYS is one the kernel forces
    # to its default action, killing the process. The truth: the process's
    # exit status (0: its handler ran and the call failed with ENOSYS, not
    # killed by SIGSYS) and the handler's own "T" for each trapped call.
    rc, out, err, rep = run([RUN_THREADS, "sigsys"])
    if out.strip() == "skip":
        print("  SKIP sigsys: no seccomp filter for this architecture here")
        return
    print(f"  sigsys: exit status {rc}, output {out.split()}")
    check(rc == 0 and out.startswith("installed\n") and "T" in out[len("installed\n"):],
          f"sigsys: exit status {rc} (0: the handler ran), output {out!r}: {err[-300:]}")


def test_file_size_limit():
    # A shell under `ulimit -f 1` (512 bytes in dash) runs lone processes
    # after the run's log, which the whole tree shares, has outgrown that
    # limit. A write or a truncate past it raises SIGXFSZ, whose default
    # action ends the process: the first /bin/true died of it, and the shell
    # at its exit (status 153 from the command before the limit was checked).
    # The truth: the shell's own output and exit status; the programs run
    # as they do without threadtime, and what could not be recorded is not.
    rc, out, err, rep = run(["/bin/sh", "-c", "ulimit -f 1; /bin/true && /bin/true && /bin/true; echo done $?"])
    print(f"  file size limit: exit status {rc}, output {out.split()}")
    check(rc == 0 and out == "done 0\n", f"file size limit: exit status {rc}, output {out!r}: {err[-300:]}")


def test_errno_kept():
    # The preload's wrappers run inside the program's calls, and its own
    # calls can fail (making its file in a fork child, a reopen after
    # setuid): errno after pthread_create, and as a new thread first finds
    # it, and at main's start, must be what they are without the preload.
    # The truth: the same program run without threadtime (errno 0 at
    # main's start, 4242 kept across a successful
    # pthread_create; a new thread's errno starts at 0).
    plain = subprocess.run([RUN_THREADS, "errno"], stdout=subprocess.PIPE, check=True).stdout.decode()
    rc, out, err, rep = run([RUN_THREADS, "errno"])
    print(f"  errno: plain {plain.split()}, recorded {out.split()}")
    check(plain.splitlines() == ["start 0"] + ["create 0 4242 0"] * 2, f"errno: without threadtime {plain!r}")
    check(rc == 0 and out == plain, f"errno: recorded {out!r}, without threadtime {plain!r}: {err[-300:]}")
    # A process that outlived its run, whose directory is gone: the
    # preload's load, then the fork child's pthread_create, try to make the
    # process's file there and fail (ENOENT), which must not show in errno
    # (0 at main's start, as C says).
    gone = subprocess.run([RUN_THREADS, "errno"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=dict(os.environ, LD_PRELOAD=preload_lib(), THREADTIME_RUN_DIR=os.path.join(TMP, "gone-run")))
    print(f"  errno: run's directory gone {gone.stdout.decode().split()}")
    check(gone.returncode == 0 and gone.stdout.decode() == plain, f"errno: run's directory gone: {gone.stdout!r}, "
          f"without threadtime {plain!r}: {gone.stderr[-300:]!r}")


def filtered_run(args, what):
    """run(args) of a run_threads mode that installs a seccomp filter: None
    where none can be installed here (said), else (rc, out, err, report,
    the threads read at exit with some CPU)."""
    rc, out, err, rep = run(args)
    if out.strip() == "skip":
        print(f"  SKIP {what}: no seccomp filter for this architecture here")
        return None
    at_exit = [t for t in threads(rep) if t["how"] == "at exit" and t["total_ns"] > 0]
    print(f"  {what}: exit status {rc}, output {out.split()}, {len(at_exit)} read at exit")
    return rc, out, err, rep, at_exit


def test_get_seccomp_after_filter():
    # A strict seccomp filter kills a process on a prctl option it does not
    # list (Chromium's baseline policy), and the exit handler asks
    # prctl(PR_GET_SECCOMP) unless it knows of a filter. A process that
    # installs one after load through libc's prctl (PR_SET_SECCOMP, or
    # PR_SET_NO_NEW_PRIVS before the seccomp system call, as libseccomp
    # does) is known to have one: the handler must not ask. The truth: the
    # exit status (0, not killed by SIGSYS) of a program whose filter kills
    # on PR_GET_SECCOMP, and that it is read at its exit all the same.
    for how in ("prctl", "raw"):
        got = filtered_run([RUN_THREADS, "getseccomp", how], f"get seccomp ({how})")
        if not got:
            return
        rc, out, err, rep, at_exit = got
        check(rc == 0 and out == "installed\n" and len(at_exit) == 1,
              f"get seccomp ({how}): exit status {rc} (-31: killed by the filter), {out!r}, {threads(rep)}: {err[-300:]}")


def test_vfork_child_no_new_privs():
    # A vfork child runs on its parent's memory: its prctl(PR_SET_NO_NEW_PRIVS)
    # sets the flag on the child alone, and must not make the preload take
    # the parent as filtered (the parent's exit then asks no
    # PR_GET_SECCOMP and counts its threads through /proc, the slower
    # path). The truth: the kernel's trap of that question, by a filter the
    # parent installs after the child ended, with raw system calls alone
    # (no wrapper sees them): its handler writes "T" when the exit asks,
    # and the process is still read at its exit.
    got = filtered_run([RUN_THREADS, "vforkprivs"], "vfork no_new_privs")
    if not got:
        return
    rc, out, err, rep, at_exit = got
    check(rc == 0 and out == "installed\nT" and len(at_exit) == 1,
          f"vfork no_new_privs: exit status {rc}, {out!r} (no T: the exit did not ask), {threads(rep)}: {err[-300:]}")


def test_filter_before_load():
    # A program's own libraries are initialised before the preload's load
    # may run: a sandboxing library that installs a filter in its
    # constructor, through libc's prctl, puts it in place before load,
    # which must then know of it and not ask PR_GET_SECCOMP. The truth: the
    # exit status (0, not killed by SIGSYS) of run_sandboxed, whose library
    # installs a filter that kills on that question, its output (printed
    # by main, after load), and that it is read at its exit all the same.
    got = filtered_run([RUN_SANDBOXED], "filter before load")
    if not got:
        return
    rc, out, err, rep, at_exit = got
    check(rc == 0 and out == "installed\n" and len(at_exit) == 1,
          f"filter before load: exit status {rc} (-31: killed by the filter), {out!r}, {threads(rep)}: {err[-300:]}")


def test_seccomp_at_load():
    # A process that starts under a seccomp filter (inherited: systemd's
    # SystemCallFilter=, a sandbox) may be killed for a call its filter does
    # not list; the preload's load must make none the program would not.
    # Here python installs a filter that kills on pidfd_open, then one that
    # kills on fstatfs (the two calls of the pidfs key), and starts a python
    # that burns under it. The truth is the kernel's: the child's wait
    # status (it exits, not of SIGSYS) and its wait4 rusage, read by its
    # parent, which its own figure in the report matches (it reads itself
    # before its teardown, ~0.3 ms: 2 ms bounds it, as in every_process_counted).
    for call in ("pidfd_open", "fstatfs"):
        rc, out, err, rep = run([sys.executable, "-c", f"SECCOMP_DENY = {{'{call}': 'kill'}}\n" + SECCOMP + SPAWN_BURN])
        got = json.loads(out) if out.strip() else {"pid": -1, "status": -1, "ru": -1}
        check(rc == 0 and got["status"] == 0,
              f"seccomp at load ({call}): python exit status {rc}, its child's wait status {got['status']}: {err[-300:]}")
        procs = [p for p in rep["processes"] if p["pid"] == got["pid"]]
        cpu = sum(t["total_ns"] for p in procs for t in p["threads"] if t["total_ns"] > 0)
        print(f"  seccomp at load ({call}): child {got['pid']} wait4 {got['ru'] / 1e6:.3f} ms, report {cpu / 1e6:.3f} ms")
        check(len(procs) == 1 and procs[0]["exited"] and 0 <= got["ru"] - cpu <= 2_000_000,
              f"seccomp at load ({call}): the child counted by itself: {cpu} ns, "
              f"{[(p['state'], p['exited']) for p in procs]}, against wait4 {got['ru']}")


def test_handler_at_exit():
    # A signal handler that reaps a child while a single-threaded process
    # writes its exit record (which it does without mapping its file) would
    # map the file and take a record, and the exit record was lost: the
    # process then looked killed. The program's parent traces it and sends
    # the signal when the exit record's read of its split returns (a
    # syscall stop: not a matter of timing). The truth: the child's wait4
    # rusage, read by its parent, which its own exit record matches (it
    # reads itself before its teardown: 2 ms bounds the rest, as in
    # every_process_counted).
    rc, out, err, rep = run([RUN_THREADS, "handler"])
    if out.startswith("skip"):
        print(f"  SKIP handler at exit: {out.strip()}")
        return
    pid, ru = (int(x) for x in out.split()) if len(out.split()) == 2 else (-1, -1)
    check(rc == 0 and pid > 0, f"handler: exit status {rc}: {out} {err[-300:]}")
    procs = [p for p in rep["processes"] if p["pid"] == pid]
    own = [t for p in procs for t in p["threads"] if t["tid"] == pid and t["how"] == "at exit"]
    print(f"  handler: child {pid} wait4 {ru / 1e6:.3f} ms, its exit record {[t['total_ns'] / 1e6 for t in own]} ms")
    check(len(procs) == 1 and procs[0]["exited"] and len(own) == 1 and 0 <= ru - own[0]["total_ns"] <= 2_000_000,
          f"handler: the child's exit record kept: {[(p['state'], p['exited'], p['threads']) for p in procs]} "
          f"against wait4 {ru}")


def test_setuid_after_load():
    # A root process that drops to nobody after the preload made its file
    # can no longer open it by its path (its directory is root's, 0700):
    # what it records after must not need that path. 40 threads one after
    # another, more than the file's first page of records holds, so its
    # growth is tried after the drop too; then none (its exit record, that
    # of a lone process, alone). The truth: each thread's own CPU clock at
    # its last act (its row, read after, holds at least that) and the
    # process's wait4 rusage (sum_matches_rusage).
    for n in (40, 0):
        rc, out, err, rep = run([RUN_THREADS, "setuid", str(n)])
        if out.startswith("skip"):
            print(f"  SKIP setuid after load: {out.strip()}")
            return
        printed = dict((int(a), int(b)) for a, b in (line.split() for line in out.splitlines()))
        rows = {t["tid"]: t for t in threads(rep)}
        short = [(tid, cpu, rows.get(tid)) for tid, cpu in printed.items() if rows.get(tid, {}).get("total_ns", -1) < cpu]
        check(rc == 0 and len(printed) == n and not short and len(rows) >= n + 1,
              f"setuid {n}: exit status {rc}, {len(printed)} threads, each with its CPU: {short[:3]} {err[-300:]}")
        sum_matches_rusage(rep, f"setuid {n}")


def test_end_after_round():
    # The exit handler waits for a sampler round under way to end before it
    # reads the threads alive; the process's end, and each thread's, must be
    # read after that wait, not before, or a thread that ran meanwhile is
    # recorded with more CPU than its life. The program's parent traces it
    # and holds the sampler in a round and the handler in its wait (syscall
    # stops, not timing), while a thread burns, by its own CPU clock, more
    # than the whole time since before it started. The truth: that clock,
    # and that a thread's CPU time is never above its wall time (1 ms for
    # the read of its start, in the thread, after its clone).
    rc, out, err, rep = run([RUN_THREADS, "exitwait"])
    if out.startswith("skip"):
        print(f"  SKIP end after round: {out.strip()}")
        return
    tid, cpu = (int(x) for x in out.split()) if len(out.split()) == 2 else (-1, -1)
    t = [t for t in threads(rep) if t["tid"] == tid]
    print(f"  end after round: thread {tid} burned {cpu / 1e6:.3f} ms; report {[(r['total_ns'], r['lifetime_ns']) for r in t]}")
    check(rc == 0 and len(t) == 1 and t[0]["how"] == "at exit" and t[0]["total_ns"] >= cpu > 0 and
          t[0]["total_ns"] <= t[0]["lifetime_ns"] + 1_000_000,
          f"end after round: the thread read at exit, CPU within its life: {t} ({err[-300:]})")


def test_crowd_at_exit():
    # Every thread alive when the process calls exit() is read by the exit
    # handler, however many: 5 (listed into the handler's map on its stack)
    # and 40 (more than that holds: listed again into a larger one). The
    # truth is the kernel's list of the process's threads, read by the
    # program itself just before exit().
    for n in (5, 40):
        rc, out, err, rep = run([RUN_THREADS, "crowd", str(n)])
        listed = {int(x) for x in out.split()}
        rows = {t["tid"]: t for t in threads(rep)}
        own = {tid for tid in listed if rows.get(tid, {}).get("how") != "threadtime"}  # the sampler apart
        wrong = sorted(tid for tid in own if tid not in rows or rows[tid]["how"] != "at exit" or
                       not rows[tid]["total_ns"] > 0)
        check(rc == 0 and len(own) == n + 1 and not wrong,
              f"crowd {n}: {len(own)} threads listed (want {n} and the main one), read at exit with CPU "
              f"but for {[(t, rows.get(t)) for t in wrong][:3]}")


def test_busy_at_exit():
    # The exit handler reads the threads alive one after another, while
    # they run; each thread's end must be taken at its own read, not once
    # before all of them, or a thread read late (here after 300 others,
    # each a read of its /proc files) is recorded with more CPU than its
    # life. The truth: that a thread's CPU time is never above its wall
    # time (1 ms for the read of its start, in the thread, after its clone,
    # as in test_end_after_round), and the thread's own CPU clock, which
    # it read last just before exit() (the report holds at least that).
    rc, out, err, rep = run([RUN_THREADS, "crowd", "300", "busy"])
    got = out.split()
    tid, cpu = (int(got[1]), int(got[2])) if len(got) == 3 else (-1, -1)
    t = [t for t in threads(rep) if t["tid"] == tid]
    print(f"  busy at exit: thread {tid} own clock {cpu / 1e6:.3f} ms; report "
          f"{[(r['how'], r['total_ns'], r['lifetime_ns']) for r in t]}")
    check(rc == 0 and len(t) == 1 and t[0]["how"] == "at exit" and t[0]["total_ns"] >= cpu > 0 and
          t[0]["total_ns"] <= t[0]["lifetime_ns"] + 1_000_000,
          f"busy at exit: the thread read at exit, CPU within its life: {t} ({err[-300:]})")
    late = [(r["tid"], r["total_ns"], r["lifetime_ns"]) for r in threads(rep)
            if r["lifetime_ns"] > 0 and r["total_ns"] > r["lifetime_ns"] + 1_000_000]
    check(not late, f"busy at exit: threads with more CPU than their life: {late[:5]}")


def test_wait_pinned_pair_and_sleeper():
    # Physics, not a scheduling outcome: two threads pinned to one CPU,
    # released together, never blocking until their burns end. While one
    # runs, the other is runnable on the same CPU and not running, so the
    # one that finished second waited at least the whole burn of the first
    # (90 % of it asserted, the margin; the kernel's wait clock
    # includes IRQ time, the CPU clock does not, so it is if anything
    # larger). No thread can wait longer than it lived: each wait is at most
    # the wall time from before its pthread_create to after its join. A
    # thread that only sleeps waits no more than its wall time less the
    # sleeps it asked for (a wakeup may wait for a CPU under load: that is
    # all physics bounds).
    rc, out, err, rep = run([RUN_THREADS, "pinned", "100"])
    check(rc == 0, f"pinned: exit status {rc}: {err}")
    pair, pairwall, sleeper = {}, 0, None
    for line in out.splitlines():
        f = line.split()
        if f[0] == "pair":
            pair[int(f[2])] = (int(f[1]), int(f[3]))
        elif f[0] == "pairwall":
            pairwall = int(f[1])
        elif f[0] == "sleeper":
            sleeper = tuple(map(int, f[1:]))
    rows = {t["tid"]: t for t in threads(rep)}
    check(sorted(pair) == [1, 2] and all(pair[o][0] in rows for o in pair) and sleeper and sleeper[0] in rows,
          f"pinned: the program's threads {pair} {sleeper} reported: {sorted(rows)}")
    if sorted(pair) != [1, 2] or not sleeper or not all(pair[o][0] in rows for o in pair) or sleeper[0] not in rows:
        return
    first_cpu = pair[1][1]
    second = rows[pair[2][0]]
    print(f"  pinned: first burned {first_cpu / 1e6:.1f} ms; second waited {second['run_wait_ns'] / 1e6:.1f} ms; "
          f"sleeper waited {rows[sleeper[0]]['run_wait_ns'] / 1e6:.3f} ms")
    check(second["run_wait_ns"] >= 0.9 * first_cpu,
          f"pinned: the second waited {second['run_wait_ns']} ns, under 90 % of the first's {first_cpu} ns of CPU")
    for order in (1, 2):
        t = rows[pair[order][0]]
        check(0 <= t["run_wait_ns"] <= pairwall and t["run_wait_ns"] + t["total_ns"] <= pairwall + 1_000_000,
              f"pinned: {order}: wait {t['run_wait_ns']} + CPU {t['total_ns']} within the wall {pairwall}")
    tid, slept, wall = sleeper
    w = rows[tid]["run_wait_ns"]
    check(0 <= w <= wall - slept, f"sleeper: waited {w} ns, more than the {wall - slept} ns it was not asleep")
    check(rows[tid]["voluntary_switches"] >= 20, f"sleeper: 20 sleeps are 20 voluntary switches: {rows[tid]}")
    # The whole command: its threads' waits summed, in the text report too.
    total = sum(t["run_wait_ns"] for t in threads(rep) if t["run_wait_ns"] >= 0)
    check(rep["run_wait_ns"] == total and total >= second["run_wait_ns"], f"pinned: command {rep['run_wait_ns']} {total}")


def proc_status(pid, tid):
    """(voluntary, involuntary, on_cpu, run_wait, timeslices) of a thread as
    this process reads its /proc files, and its state letter."""
    base = f"/proc/{pid}/task/{tid}"
    with open(base + "/status") as f:
        st = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
    with open(base + "/schedstat") as f:
        on, wait, slices = map(int, f.read().split())
    with open(base + "/stat") as f:
        state = f.read().rsplit(")", 1)[1].split()[0]
    return (int(st["voluntary_ctxt_switches"]), int(st["nonvoluntary_ctxt_switches"]), on, wait, slices), state


def test_switches_against_proc():
    # The truth is the kernel's, read here, in another process, from
    # /proc/PID/task/TID/status and schedstat while each thread is blocked
    # in read() (it printed its line, then its state is S: nothing else
    # after the line sleeps). "stays" is still blocked when the process
    # exits: the exit handler's read must equal this one, field for field.
    # "ends" is woken by a byte on stdin and ends: its counts can only have
    # grown, its wait by at most the wall time from the byte to the end of
    # threadtime, and its voluntary switches by what its return and the
    # read at its end block on (nothing, or a lock or two; 50 is far above).
    rep_path = os.path.join(TMP, "switches.json")
    p = subprocess.Popen([TT, "run", "--format", "json", "--report", rep_path, "--", RUN_THREADS, "switches"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=TMP)
    try:
        pid, tids = None, {}
        while len(tids) < 2:
            line = p.stdout.readline().decode()
            if not line:
                break
            k, v = line.split()
            if k == "pid":
                pid = int(v)
            else:
                tids[k] = int(v)
        check(pid and len(tids) == 2, f"switches: the program said {pid} {tids}")
        if not pid or len(tids) != 2:
            return
        seen = {}
        deadline = time.monotonic() + 120
        for k, tid in tids.items():
            while True:
                seen[k], state = proc_status(pid, tid)
                if state == "S" or time.monotonic() > deadline:
                    break
                time.sleep(0.01)
            check(state == "S", f"switches: {k} never blocked in read(): {state}")
        # Read again now that both are blocked: what the report must start from.
        seen = {k: proc_status(pid, tid)[0] for k, tid in tids.items()}
        t_write = time.monotonic()
        p.stdin.write(b"x")
        p.stdin.close()
        p.wait(timeout=120)
        t_done = time.monotonic()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    check(p.returncode == 0, f"switches: exit status {p.returncode}: {p.stderr.read().decode(errors='replace')}")
    with open(rep_path) as f:
        rows = {t["tid"]: t for t in threads(json.load(f))}
    def figures(t):
        return (t["voluntary_switches"], t["involuntary_switches"], t["run_wait_ns"], t["timeslices"])
    stays, ends = rows.get(tids["stays"]), rows.get(tids["ends"])
    check(stays and stays["how"] == "at exit" and ends and ends["how"] == "ended", f"switches: rows {stays} {ends}")
    if not stays or not ends:
        return
    v, i, on, w, n = seen["stays"]
    print(f"  switches: stays {figures(stays)} against /proc {(v, i, w, n)}")
    check(figures(stays) == (v, i, w, n) and v >= 50, f"switches: stays {figures(stays)}, /proc said {(v, i, w, n)}")
    v, i, on, w, n = seen["ends"]
    got = figures(ends)
    print(f"  switches: ends {got} against /proc {(v, i, w, n)} before it woke")
    check(v >= 50 and v <= got[0] <= v + 50 and got[1] >= i and got[3] >= n,
          f"switches: ends {got}, /proc said {(v, i, w, n)} before it woke")
    check(w <= got[2] <= w + (t_done - t_write) * 1e9, f"switches: ends waited {got[2]}, from {w} over {t_done - t_write} s")


def test_cgroup_throttling():
    # threadtime in a cgroup of its own with 20 % of a CPU (2 ms per 10 ms;
    # v1, root): the report has the group's quota and period as written
    # here, and its counters over the run within what the group's cpu.stat,
    # read here before threadtime starts and after it ends, moved.
    d = f"/sys/fs/cgroup/cpu/threadtime-run-test-{os.getpid()}"
    try:
        os.mkdir(d, 0o700)
    except OSError as e:
        print(f"  SKIP cgroup throttling: cannot make a cgroup at /sys/fs/cgroup/cpu ({e.strerror})")
        return
    try:
        for name, v in (("cpu.cfs_period_us", "10000"), ("cpu.cfs_quota_us", "2000")):
            with open(os.path.join(d, name), "w") as f:
                f.write(v)

        def stat():
            with open(os.path.join(d, "cpu.stat")) as f:
                return {k: int(v) for k, v in (l.split() for l in f)}

        def join():
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

        before = stat()
        rep_path = os.path.join(TMP, "cgroup.json")
        p = subprocess.run([TT, "run", "--format", "json", "--report", rep_path, "--", RUN_THREADS, "pinned", "20"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=join, timeout=300)
        after = stat()
        check(p.returncode == 0, f"cgroup: exit status {p.returncode}: {p.stderr.decode(errors='replace')}")
        with open(rep_path) as f:
            cg = json.load(f)["cgroup"]
        print(f"  cgroup: report {cg}; cpu.stat moved {({k: after[k] - before[k] for k in after})}")
        check(cg.get("available") and cg["version"] == 1 and cg["quota_us"] == 2000 and cg["period_us"] == 10000,
              f"cgroup: the group's figures {cg}")
        if cg.get("available"):
            check(0 <= cg["periods"] <= after["nr_periods"] - before["nr_periods"] and
                  0 <= cg["throttled_periods"] <= after["nr_throttled"] - before["nr_throttled"] and
                  0 <= cg["throttled_ns"] <= after["throttled_time"] - before["throttled_time"],
                  f"cgroup: the run's counters {cg} outside what cpu.stat moved")
    finally:
        # Every process in it has ended and been reaped: the group goes.
        for _ in range(100):
            try:
                os.rmdir(d)
                break
            except OSError:
                time.sleep(0.05)


def test_kill():
    keep = os.path.join(TMP, "killed.ttrun")
    rc, out, err, rep = run([RUN_THREADS, "kill"], extra=("-o", keep))
    check(rc == -9, f"kill: exit status {rc}: threadtime dies of the command's SIGKILL")
    p = rep["processes"][0]
    check(not p["exited"], "kill: the report says the process did not exit")
    check("did not exit" in p["state"], f"kill: state says so: {p['state']}")
    ended = [t for t in p["threads"] if t["how"] == "ended"]
    check(len(ended) == 10, f"kill: {len(ended)} ended threads reported, want 10")
    sampled = [t for t in p["threads"] if t["how"] == "last sample"]
    check(len(sampled) == 2 and all(t["total_ns"] > 0 for t in sampled),
          f"kill: the 2 burning threads come from the last sample: {sampled}")
    # The kept recording reads back the same through dump.
    d = subprocess.run([TT, "dump", "--format", "json", keep], stdout=subprocess.PIPE, text=True)
    check(d.returncode == 0 and json.loads(d.stdout)["processes"] == rep["processes"],
          "kill: threadtime dump of -o FILE gives the same report")
    c = subprocess.run([TT, "dump", "--format", "chrome", keep], stdout=subprocess.PIPE, text=True)
    ev = json.loads(c.stdout)["traceEvents"] if c.returncode == 0 else []
    check(sum(e["ph"] == "X" for e in ev) == len(p["threads"]), "kill: chrome has one life slice per thread")
    check(any(e["ph"] == "C" for e in ev), "kill: chrome has CPU rate counters")
    # A damaged recording is refused with the reason, never read half.
    data = open(keep, "rb").read()
    cut = os.path.join(TMP, "cut.ttrun")
    with open(cut, "wb") as f:
        f.write(data[: len(data) // 2])
    d = subprocess.run([TT, "dump", cut], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(d.returncode != 0 and "damaged run recording" in d.stderr and not d.stdout,
          f"kill: a cut recording is refused: {d.returncode} {d.stderr}")


# A seccomp filter for the scripts below, which they install on themselves
# (their children inherit it): SECCOMP_DENY = {syscall name: "kill" (the
# process dies of SIGSYS) or "enosys" (the call fails)}, every other call
# allowed. Python alone, through ctypes: prctl(PR_SET_NO_NEW_PRIVS) and
# prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER) with a classic BPF program.
SECCOMP = """\
import ctypes, os, platform, struct
def seccomp_deny(rules):
    arch, nrs = {"x86_64": (0xC000003E, {"unshare": 272, "pidfd_open": 434, "fstatfs": 138}),
                 "aarch64": (0xC00000B7, {"unshare": 97, "pidfd_open": 434, "fstatfs": 44})}[platform.machine()]
    ret = lambda k: (0x06, 0, 0, k)
    prog = [(0x20, 0, 0, 4), (0x15, 1, 0, arch), ret(0x7FFF0000), (0x20, 0, 0, 0)]
    for name, what in rules.items():
        prog += [(0x15, 0, 1, nrs[name]), ret(0x80000000 if what == "kill" else 0x00050000 | 38)]
    prog.append(ret(0x7FFF0000))
    code = b"".join(struct.pack("HBBI", *i) for i in prog)
    buf = ctypes.create_string_buffer(code)
    fprog = struct.pack("HxxxxxxP", len(prog), ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.c_char_p(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")
seccomp_deny(SECCOMP_DENY)
"""

REUSED_PID = """\
import json, os, sys
burn = "x = 0\\nfor i in range(1_000_000):\\n    x += i\\n"
# A burns, ends a thread (a record of its own), then is killed: its file
# says RUNNING, no exit record.
thread = "import threading; t = threading.Thread(target=lambda: sum(range(100000))); t.start(); t.join()\\n"
a = os.posix_spawn(sys.executable, [sys.executable, "-c", burn + thread + "import os; os.kill(os.getpid(), 9)"], os.environ)
_, st_a, ru_a = os.wait4(a, 0)
# The next pid of this namespace is A's again.
with open("/proc/sys/kernel/ns_last_pid", "w") as f:
    f.write(str(a - 1))
b = os.posix_spawn(sys.executable, [sys.executable, "-c", burn], os.environ)
_, st_b, ru_b = os.wait4(b, 0)
print(json.dumps({"a": a, "b": b, "killed": os.WIFSIGNALED(st_a),
                  "ru_a": round((ru_a.ru_utime + ru_a.ru_stime) * 1e9),
                  "ru_b": round((ru_b.ru_utime + ru_b.ru_stime) * 1e9)}))
"""


def test_reused_pid():
    # Two processes share a pid in one run (pids wrap at pid_max; here a
    # new pid namespace is told which pid comes next): A is killed, B gets
    # its pid and exits. The truth is the kernel's, wait4's rusage of each,
    # read by their parent. A's CPU is its parent's figure (nothing of its
    # own was recorded), so it matches to the microsecond; B read itself
    # before its end, so python's teardown after that read (~0.3 ms) is
    # missing: 2 ms bounds it, as in every_process_counted. A ends a thread
    # before it is killed, so a file of its own taken for B's earlier image
    # shows (as "replaced by exec"). Each process's
    # key is its pidfd's inode where the kernel has pidfs (a key that were
    # the pid alone would merge A and B: B would take A's file for its own
    # earlier image), and its start from /proc where pidfd_open is refused:
    # the second run denies it to A and B with a seccomp filter. The third
    # installs that filter between A and B: A's key is its inode alone, B's
    # its start alone (its file is made under a filter), which cannot be
    # compared; B started after A's file was made, so it is another process.
    reused_pid("")
    reused_pid("SECCOMP_DENY = {'pidfd_open': 'enosys'}\n" + SECCOMP, " (no pidfd_open)")
    reused_pid("", " (A by inode, B by start)", between="SECCOMP_DENY = {'pidfd_open': 'enosys'}\n" + SECCOMP)


def reused_pid(prelude, what="", between=""):
    wrap = ("unshare", "-p", "-f", "--mount-proc")
    if os.geteuid() != 0 or not shutil.which("unshare") or \
            subprocess.run([*wrap, "true"], stderr=subprocess.DEVNULL).returncode != 0:
        print("  SKIP reused pid: needs root and unshare -p (a pid namespace whose next pid can be set)")
        return
    script = prelude + REUSED_PID.replace("# The next pid", between + "# The next pid")
    # No sampler: A's CPU is its thread's record and the rest of its
    # parent's wait4, to the microsecond, with no sampler's CPU beside them.
    rc, out, err, rep = run([sys.executable, "-c", script], wrap=wrap, extra=("--interval", "0"))
    check(rc == 0, f"reused pid{what}: exit status {rc}: {err[-300:]}")
    got = json.loads(out)
    if got["a"] != got["b"]:
        print(f"  SKIP reused pid: the namespace gave {got['b']}, not {got['a']} again")
        return
    check(got["killed"], f"reused pid{what}: A died of its SIGKILL")
    procs = [p for p in rep["processes"] if p["pid"] == got["a"]]
    cpu = sorted((sum(t["total_ns"] for t in p["threads"] if t["total_ns"] > 0), p["exited"], p["state"]) for p in procs)
    print(f"  reused pid{what} {got['a']}: wait4 A {got['ru_a'] / 1e6:.3f} ms, B {got['ru_b'] / 1e6:.3f} ms; report {cpu}")
    killed = [c for c in cpu if not c[1]]
    exited = [c for c in cpu if c[1]]
    check(len(killed) == 1 and abs(killed[0][0] - got["ru_a"]) <= 1000,
          f"reused pid{what}: A (killed) counted from its parent's wait4: {killed} against {got['ru_a']}")
    check(len(exited) == 1 and 0 <= got["ru_b"] - exited[0][0] <= 2_000_000,
          f"reused pid{what}: B (exited) counted by itself: {exited} against {got['ru_b']}")
    check(not any("exec" in c[2] for c in cpu), f"reused pid{what}: neither is taken for an exec: {cpu}")


REAPER = """\
import os
reaped = 0
for i in range(10):
    os.waitpid(os.posix_spawn("/bin/true", ["/bin/true"], os.environ), 0)
    reaped += 1
print(reaped, len(os.listdir("/proc/self/task")))
"""


def test_reaped_children_cap():
    # Records are shared by threads and reaped children (4 here): a python
    # that reaps 10 children fills them, and what found none is said as
    # what it was, in every format. The truth is the program's: the
    # children wait4 returned and its threads in /proc.
    cap = 4
    rc, out, err, rep = run([sys.executable, "-c", REAPER], env={"THREADTIME_RUN_THREADS": str(cap)})
    reaped, tasks = map(int, out.split())
    me = [p for p in rep["processes"] if p["exe"] == sys.executable or "python" in p["exe"]]
    check(rc == 0 and len(me) == 1, f"reaper: exit status {rc}, the python process: {me}: {err[-300:]}")
    if rc != 0 or len(me) != 1:
        return
    p = me[0]
    rows = len(p["threads"])
    print(f"  reaper: {reaped} reaped, {tasks} threads; report: {rows} thread rows, "
          f"dropped threads {p['dropped_threads']}, children {p.get('dropped_children')}")
    check(rows + p["dropped_threads"] == tasks, f"reaper: {rows} rows + {p['dropped_threads']} dropped != {tasks} threads")
    children = p.get("dropped_children", 0)
    check(children > 0 and children + (cap - rows) == reaped,
          f"reaper: dropped children {children} + {cap - rows} recorded != {reaped} reaped")
    want = f"{children} children it reaped had no record"
    rc, out, err, text = run([sys.executable, "-c", REAPER], "text", env={"THREADTIME_RUN_THREADS": str(cap)})
    check(want in text and f"{p['dropped_threads']} more threads had no record" in text, f"reaper: text: {text}")
    rc, out, err, text = run([sys.executable, "-c", REAPER], "csv", env={"THREADTIME_RUN_THREADS": str(cap)})
    lines = [l for l in text.split("\n") if "(reaped children with no record)" in l]
    check(len(lines) == 1 and f"dropped {children} children" in lines[0], f"reaper: csv: {lines}")
    rc, out, err, text = run([sys.executable, "-c", REAPER], "chrome", env={"THREADTIME_RUN_THREADS": str(cap)})
    ev = json.loads(text)["traceEvents"]
    check([e["args"].get("dropped_children") for e in ev if e["ph"] == "i" and "dropped_children" in e["args"]] ==
          [children], "reaper: chrome has an instant event with the dropped children")


def test_behaves_like_the_program():
    # SIGTERM sent to threadtime reaches CMD, which dies of it: 128 + 15.
    rep = os.path.join(TMP, "term.txt")
    p = subprocess.Popen([TT, "run", "--report", rep, "--", "sleep", "60"], stderr=subprocess.PIPE)
    child = None
    while child is None and p.poll() is None:  # wait for the exec, not for a time
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    st = f.read()
            except OSError:
                continue
            if pid.isdigit() and st.split(") ")[-1].split()[1] == str(p.pid) and "(sleep)" in st:
                child = int(pid)
    p.send_signal(15)
    check(p.wait() == -15, f"SIGTERM: exit status {p.returncode}: threadtime dies of the command's SIGTERM")
    check("exit status 143" in open(rep).read(), "SIGTERM: the report still comes")
    # A command that cannot run: 127 as a shell says, and why.
    r = subprocess.run([TT, "run", "--", os.path.join(TMP, "no-such-program")], stderr=subprocess.PIPE, text=True)
    check(r.returncode == 127 and "cannot run" in r.stderr and "preload" not in r.stderr,
          f"missing command: {r.returncode} {r.stderr}")
    # --opt=value as well as --opt value.
    r = subprocess.run([TT, "run", "--interval=50", "--format=csv", "--", "true"], stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0 and r.stderr.startswith("pid,"), f"--interval=50 --format=csv: {r.returncode} {r.stderr[:200]}")
    # Bad options change nothing and say what is wrong.
    for args, what in ((["--format", "xml", "--", "true"], "unknown format"), (["--interval", "-1", "--", "true"], "--interval"),
                       ([], "no command")):
        r = subprocess.run([TT, "run", *args], stderr=subprocess.PIPE, text=True)
        check(r.returncode == 2 and what in r.stderr, f"run {args}: {r.returncode} {r.stderr}")
    # stdin and stdout are CMD's own.
    r = subprocess.run([TT, "run", "--report", os.path.join(TMP, "cat.txt"), "--", "cat"], input=b"abc\n",
                       stdout=subprocess.PIPE)
    check(r.returncode == 0 and r.stdout == b"abc\n", f"cat: {r.returncode} {r.stdout!r}")


def test_hostile_names():
    # A program names its threads (prctl PR_SET_NAME) with escape sequences,
    # a newline, CSV's delimiters, C1 controls, bytes that are not UTF-8 and
    # a CJK name of 16 bytes, which the kernel cuts to 15 inside a
    # character. Truth: those bytes as the kernel keeps them (15 of each).
    # Every format of run's own report holds them: JSON and Chrome to
    # json.loads (controls escaped and read back, each ill-formed piece one
    # U+FFFD as Python decodes it), CSV to Python's csv module (escaped
    # as out.h says), text to what a terminal may get.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from untrusted import HOSTILE, escaped, terminal_text
    given = [n if i != 3 else b"a" + "\u65e5\u672c\u8a9e\u65e5\u672c".encode() for i, n in enumerate(HOSTILE)]
    kept = [n[:15] for n in given]
    code = ("import ctypes, threading\nlibc = ctypes.CDLL(None)\n"
            f"def w(n):\n    libc.prctl(15, ctypes.c_char_p(n), 0, 0, 0)\n"
            f"ts = [threading.Thread(target=w, args=(n,)) for n in {given!r}]\n"
            "[t.start() for t in ts]; [t.join() for t in ts]\n")
    rep = os.path.join(TMP, "hostile")
    for fmt in ("json", "chrome", "csv", "text"):
        p = subprocess.run([TT, "run", "--format", fmt, "--report", rep, "--", sys.executable, "-c", code],
                           stderr=subprocess.PIPE, cwd=TMP)
        out = open(rep, "rb").read()
        check(p.returncode == 0, f"hostile {fmt}: exit status {p.returncode}: {p.stderr[-300:]}")
        text, bad = terminal_text(out)
        if not text:
            check(False, f"hostile {fmt}: the report is no UTF-8: {bad}")
            continue
        check(fmt == "json" or fmt == "chrome" or not bad, f"hostile {fmt}: raw control characters {bad[:5]}")
        if fmt == "json":
            names = {t["name"] for t in threads(json.loads(text))}
            want = {n.decode("utf-8", "replace") for n in kept}
        elif fmt == "chrome":
            names = {e["args"]["name"] for e in json.loads(text)["traceEvents"] if e["name"] == "thread_name"}
            want = {n.decode("utf-8", "replace") for n in kept}
        elif fmt == "csv":
            import csv
            import io
            rows = list(csv.reader(io.StringIO(text, newline="")))
            check(all(len(r) == len(rows[0]) for r in rows), "hostile csv: every row has the header's columns")
            names = {r[3] for r in rows[1:]}
            want = {escaped(n) for n in kept}
        else:
            names = {l[11:].split("  ")[0].split(" (was ")[0] for l in text.split("\n") if l[2:9].strip().isdigit()}
            want = {escaped(n) for n in kept}
        check(want <= names, f"hostile {fmt}: {sorted(want - names)} not among {sorted(names)}")


def test_planted_run_files():
    # The command writes into its own run directory (THREADTIME_RUN_DIR): a
    # symlink to /dev/zero and a FIFO named like process files. The
    # reporter reads regular files only, each up to the size its header
    # states: the report comes, with every process the script ran. (Before,
    # /dev/zero was read until ENOMEM and the processes after it were
    # lost, and the FIFO blocked the report for good. The address-space
    # limit keeps such a read from taking the host's memory; a hang is a
    # TimeoutExpired, a failure.)
    import resource
    rep = os.path.join(TMP, "planted.json")
    script = ('ln -s /dev/zero "$THREADTIME_RUN_DIR/zero.ttrun"; mkfifo "$THREADTIME_RUN_DIR/fifo.ttrun"; '
              'ln -s "$THREADTIME_RUN_DIR/zero.ttrun" "$THREADTIME_RUN_DIR/link.ttrun"; exit 3')
    try:
        p = subprocess.run([TT, "run", "--format", "json", "--report", rep, "--", "sh", "-c", script],
                           stderr=subprocess.PIPE, timeout=120, cwd=TMP,
                           preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30)))
    except subprocess.TimeoutExpired:
        check(False, "planted: threadtime hung on a FIFO in its run directory")
        return
    check(p.returncode == 3, f"planted: exit status {p.returncode}: {p.stderr[-500:]}")
    exes = sorted(os.path.basename(x["exe"]) for x in json.load(open(rep))["processes"])
    check(exes == ["ln", "ln", "mkfifo", "sh"], f"planted: every process the script ran is reported: {exes}")


JAVA = r"""
import java.util.concurrent.*;
public class Pools {
    public static void main(String[] a) throws Exception {
        ExecutorService p1 = Executors.newFixedThreadPool(3);
        ExecutorService p2 = Executors.newFixedThreadPool(2);
        long s = 0;
        for (int i = 0; i < 30; i++) {
            final int k = i;
            Future<Long> f = (k % 2 == 0 ? p1 : p2).submit(() -> { long x = 0; for (int j = 0; j < 2_000_000; j++) x += j ^ k; return x; });
            s += f.get();
        }
        p1.shutdown(); p2.shutdown();
        p1.awaitTermination(1, TimeUnit.MINUTES); p2.awaitTermination(1, TimeUnit.MINUTES);
        System.out.println(s);
    }
}
"""


def test_java():
    if not shutil.which("java"):
        print("  SKIP java: not installed")
        return
    src = os.path.join(TMP, "Pools.java")
    with open(src, "w") as f:
        f.write(JAVA)
    rc, out, err, rep = run(["java", "-XX:ParallelGCThreads=2", "-XX:+UseParallelGC", src], extra=("--group",))
    check(rc == 0, f"java: exit status {rc}: {err[-500:]}")
    java = [p for p in rep["processes"] if p["groups"]]
    names = {g["name"]: g["threads"] for p in java for g in p["groups"]}
    print("  java groups:", sorted(names))
    check(names.get("pool-1-thread-*") == 3, f"java: pool-1-thread-* groups 3 threads: {names.get('pool-1-thread-*')}")
    check(names.get("pool-2-thread-*") == 2, f"java: pool-2-thread-*: {names.get('pool-2-thread-*')}")
    check(any(n.startswith("GC Thread") for n in names), "java: GC threads reported by name")
    check(any(n.startswith("C2 Compi") or n.startswith("C1 Compi") for n in names), "java: compiler threads by name")


def test_python():
    # join() returns once Python's thread has finished, which can be before
    # the kernel's thread has: the program waits for /proc/self/task to lose
    # each worker (the kernel's word that its end, and the record it makes
    # there, are over) before it exits, so each worker reads as ended.
    code = ("import os, threading, time\n"
            "def w():\n    sum(i * i for i in range(200000))\n"
            "ts = [threading.Thread(target=w) for _ in range(4)]\n"
            "[t.start() for t in ts]; [t.join() for t in ts]\n"
            "for t in ts:\n"
            "    while os.path.exists(f'/proc/self/task/{t.native_id}'):\n        time.sleep(0.001)\n"
            "print(*[t.native_id for t in ts])\n")
    rc, out, err, rep = run([sys.executable, "-c", code])
    check(rc == 0, f"python: exit status {rc}: {err}")
    workers = [int(x) for x in out.split()]
    how = {t["tid"]: t["how"] for t in threads(rep)}
    check(len(workers) == 4 and all(how.get(w) == "ended" for w in workers),
          f"python: the 4 workers {workers} ended: {[how.get(w) for w in workers]}")
    sum_matches_rusage(rep, "python")


def test_make_tree():
    if not shutil.which("make") or not shutil.which("cc"):
        print("  SKIP make: make or cc missing")
        return
    d = os.path.join(TMP, "mk")
    os.makedirs(d, exist_ok=True)
    for i in range(3):
        with open(os.path.join(d, f"f{i}.c"), "w") as f:
            f.write(f"int f{i}(int x) {{ return x * {i + 2}; }}\n")
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write("all: f0.o f1.o f2.o\n%.o: %.c\n\tcc -O2 -c $< -o $@\n")
    rc, out, err, rep = run(["make", "-s", "-j2", "-C", d])
    check(rc == 0, f"make: exit status {rc}: {err}")
    procs = rep["processes"]
    by_pid = {p["pid"]: p for p in procs}
    root = procs[0]
    check(os.path.basename(root["exe"]) == "make" and root["depth"] == 0, f"make: root is make: {root['exe']}")
    cc1 = [p for p in procs if os.path.basename(p["exe"]) == "cc1" or p["exe"].endswith("/cc1")]
    check(len(cc1) == 3, f"make: 3 cc1 processes, found {len(cc1)}: {[p['exe'] for p in procs]}")

    def ancestors(p):
        seen = []
        while p["ppid"] in by_pid and len(seen) < 10:
            p = by_pid[p["ppid"]]
            seen.append(p)
        return seen
    check(all(root in ancestors(p) for p in cc1), "make: each cc1 descends from make in the tree")
    check(all(p["depth"] >= 2 for p in cc1), "make: cc1 sits under a compiler driver")


def wait_sampled_then_signal(rep_args, exe, want, ready=False):
    """Runs threadtime run on exe, which waits for SIGUSR1; sends it once
    threadtime's recording holds want thread records (read from the file,
    not a time) and, with ready, once a round of the sampler ran after the
    CLOCK_MONOTONIC ns the program prints first. Returns run()'s result."""
    import glob
    import signal
    import struct
    rep = os.path.join(TMP, "report")
    # Only this run's directory: one an earlier run left would name a
    # process that is gone.
    before = set(glob.glob(os.path.join(TMP, "threadtime-run.*")))
    p = subprocess.Popen([TT, "run", "--format", "json", "--report", rep, "--", exe],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=TMP, env=dict(os.environ, TMPDIR=TMP))
    target = None  # a pidfd: never signals another process that reuses the pid
    since = int(p.stdout.readline()) if ready else 0
    while p.poll() is None:
        if target is not None:
            # Again until it ends: a Go program ignores the signal until
            # main() has called signal.Notify.
            try:
                signal.pidfd_send_signal(target, signal.SIGUSR1)
            except ProcessLookupError:
                pass
            time.sleep(0.05)
            continue
        for path in glob.glob(os.path.join(TMP, "threadtime-run.*", "*.ttrun")):
            if os.path.dirname(path) in before:
                continue
            try:
                with open(path, "rb") as f:
                    head = f.read(96)
            except OSError:
                continue
            # threads_used at 72, end_ns (the latest round) at 88.
            if len(head) == 96 and head[:8] == b"TTRUN\0v1" and struct.unpack_from("<I", head, 72)[0] >= want and \
                    struct.unpack_from("<Q", head, 88)[0] > since:
                # It waits for the signal, so it is alive (and this pid its own) now.
                target = os.pidfd_open(struct.unpack_from("<I", head, 32)[0])
    out, err = p.communicate()
    if target is not None:
        os.close(target)
    return p.returncode, out.decode(errors="replace"), err.decode(errors="replace"), json.load(open(rep))


def test_fallback():
    cc = shutil.which("cc")
    src = os.path.join(TMP, "st.c")
    with open(src, "w") as f:
        # Each thread burns 20-40 ms, then waits; main prints when all
        # have, then waits for SIGUSR1.
        f.write("#include <pthread.h>\n#include <signal.h>\n#include <stdio.h>\n#include <time.h>\n#include <unistd.h>\n"
                "static long long ns(clockid_t c) { struct timespec t; clock_gettime(c, &t);"
                " return t.tv_sec * 1000000000LL + t.tv_nsec; }\n"
                "static void burn(long long n) { long long a = ns(CLOCK_THREAD_CPUTIME_ID);"
                " while (ns(CLOCK_THREAD_CPUTIME_ID) - a < n) ; }\n"
                "static int done;\n"
                "static void *b(void *a) { burn((long)a); __atomic_add_fetch(&done, 1, __ATOMIC_SEQ_CST);"
                " for (;;) pause(); return a; }\n"
                "int main(void) { sigset_t s; sigemptyset(&s); sigaddset(&s, SIGUSR1);"
                " pthread_sigmask(SIG_BLOCK, &s, 0); pthread_t t[2];"
                " for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, b, (void *)(23000000 + 13000000 * i));"
                " burn(31000000); while (__atomic_load_n(&done, __ATOMIC_SEQ_CST) < 2) usleep(1000);"
                " printf(\"%lld\\n\", ns(CLOCK_MONOTONIC)); fflush(stdout);"
                " int sig; sigwait(&s, &sig); return 3; }\n")
    exe = os.path.join(TMP, "st")
    built = cc and subprocess.run([cc, "-static", "-O1", "-pthread", src, "-o", exe]).returncode == 0
    if not built:
        print("  SKIP static: cc -static failed (libc6-dev's static libc missing?)")
    else:
        t0 = time.monotonic()
        rc, out, err, rep = wait_sampled_then_signal([], exe, 3, ready=True)
        wall = (time.monotonic() - t0) * 1e9
        check(rc == 3, f"static: exit status {rc}")
        # Read from outside too: each thread's wait for a CPU and switch
        # counts, known, and its wait and CPU together no longer than the
        # program lived (at most the wall time around threadtime here).
        bad = [t for t in program_threads(rep) if min(t["run_wait_ns"], t["voluntary_switches"],
                                                      t["involuntary_switches"]) < 0 or
               t["run_wait_ns"] + t["total_ns"] > wall]
        check(not bad, f"static: waits and switches read from outside within {wall:.0f} ns: {bad}")
        lines = [l for l in err.splitlines() if "static binary" in l]
        check(len(lines) == 1, f"static: one line says why: {err}")
        check(len(program_threads(rep)) == 3, f"static: main and 2 threads sampled from outside: {program_threads(rep)}")
        # The last round came after all the burning: each thread's figure is
        # its runtime in ns (schedstat), not clock ticks (10 ms here, each
        # part cut down: up to 20 ms short per thread). wait4 has the same
        # runtime and what ran after the round (the signal and the exit).
        total, rus = rep["threads_total_ns"], rep["rusage"]["user_ns"] + rep["rusage"]["system_ns"]
        print(f"  static: threads {total / 1e6:.3f} ms, wait4 {rus / 1e6:.3f} ms")
        check(total <= rus + 1_000_000 and rus - total <= 2_000_000, f"static: threads sum {total} against wait4 {rus}")
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else None)
    if not go:
        print("  SKIP go: go is not installed")
        return
    gd = os.path.join(TMP, "gop")
    os.makedirs(gd, exist_ok=True)
    with open(os.path.join(gd, "main.go"), "w") as f:
        f.write("package main\nimport (\"os\"; \"os/signal\"; \"syscall\")\n"
                "func main() { c := make(chan os.Signal, 1); signal.Notify(c, syscall.SIGUSR1); <-c }\n")
    with open(os.path.join(gd, "go.mod"), "w") as f:
        f.write("module gop\ngo 1.20\n")
    env = dict(os.environ, GOCACHE=os.path.join(TMP, "gocache"), GOPATH=os.path.join(TMP, "gopath"), CGO_ENABLED="0")
    b = subprocess.run([go, "build", "-o", "gop"], cwd=gd, env=env)
    if b.returncode != 0:
        print("  SKIP go: the build failed")
        return
    # The Go runtime always runs several threads (sysmon, the signal
    # handler's, the scheduler's); 2 are enough to say they were found.
    rc, out, err, rep = wait_sampled_then_signal([], os.path.join(gd, "gop"), 2)
    check(rc == 0, f"go: exit status {rc}")
    lines = [l for l in err.splitlines() if "Go program" in l]
    check(len(lines) == 1, f"go: one line says why: {err}")
    check(len(program_threads(rep)) >= 2, "go: threads sampled from outside")


main(globals(), TMP)
