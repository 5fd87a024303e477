#!/usr/bin/env python3
"""Tests of the readers and reports of `threadtime run` recordings, on
recordings built here byte by byte (the layout of preload/run_file.h and
cli/run.h), read back through `threadtime dump`. No program is preloaded,
so this runs in the sanitizer builds too, where an over-read is a report.

Each check's truth is outside the reporter: the bytes written here,
json.loads, Python's csv module and UTF-8 decoder, the bytes that would
reach a terminal, the kernel's view of a file (stat).

Usage: test_run_report.py THREADTIME GOLDEN_DIR. TT_UPDATE_GOLDEN=1
rewrites the golden reports; TT_FUZZ_SEEDS=DIR keeps each recording
there (fuzz/seeds/)."""
import csv
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

from harness import check, main, scratch
from untrusted import HOSTILE, HOSTILE_EXE, escaped, terminal_text
from run_recording import AT_EXIT, ENDED, EXECED, LIVE, PTHREAD, RUNNING, SEEN, many_threads, proc_file, run_set, thread

TT, GOLDEN = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = scratch("test_run_report.")


def write(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(data)
    seeds = os.environ.get("TT_FUZZ_SEEDS")
    if seeds:
        shutil.copy(path, os.path.join(seeds, name))
    return path


def dump(path, *args, timeout=120):
    """threadtime dump ARGS PATH: (status, stdout bytes, stderr text)."""
    p = subprocess.run([TT, "dump", *args, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def sanitizer_quiet(err, what):
    check("Sanitizer" not in err and "runtime error" not in err, f"{what}: a sanitizer report: {err[-2000:]}")


def test_damaged_headers():
    # Each is cut or lies about a length; the reader must say which and
    # print nothing (it read 48 header bytes after checking 8, and `len -
    # off` wrapped around).
    good = run_set([proc_file(10, 1, b"a", [thread(10, b"main")])], cmd=b"a b")
    old = run_set([proc_file(10, 1, b"a", [thread(10, b"main", version=1)], version=1)], cmd=b"a b", version=1)
    newer = proc_file(10, 1, b"a", [thread(10, b"main")])
    newer = newer[:8] + struct.pack("<I", 3) + newer[12:]
    cases = (
        (b"TTRUNSET\1\0\0\0", "shorter than its header"),
        (good[:111], "shorter than its header"),  # version 2: 112 bytes
        (old[:47], "shorter than its header"),  # version 1: 48
        (good[:112] + b"a", "truncated command line"),
        (good[:115], "truncated"),
        (good[:115 + 8 + 100], "truncated process file"),
        (old[:51 + 8 + 100], "truncated process file"),
        (good[:8] + struct.pack("<I", 3) + good[12:], "made by a newer threadtime (unknown version)"),
        # Shorter than this version's header: only version 1's is read
        # before the version is known (the fuzzer found the over-read).
        (good[:8] + struct.pack("<I", 3) + good[12:60], "made by a newer threadtime (unknown version)"),
        (run_set([newer], cmd=b"a b"), "run file of a newer threadtime (unknown version)"),
    )
    for i, (data, why) in enumerate(cases):
        st, out, err = dump(write(f"cut{i}.ttrunset", data))
        check(st == 2 and f"damaged run recording: {why}" in err and not out,
              f"damaged {i}: status {st}, want 2 and '{why}': {err[-300:]} {out[:100]!r}")
        sanitizer_quiet(err, f"damaged {i}")


def test_exe_without_nul():
    # exe[] filled to its end and the header's padding after it too: the
    # report shows the 256 bytes the field holds, nothing past them.
    data = run_set([proc_file(10, 1, b"A" * 256, [thread(10, b"main")], pad=b"B")])
    path = write("exe256.ttrunset", data)
    for fmt in ("text", "csv", "json", "chrome"):
        st, out, err = dump(path, "--format", fmt)
        check(st == 0 and b"AB" not in out, f"exe {fmt}: status {st}; bytes past exe[] printed: {b'AB' in out}")
        sanitizer_quiet(err, f"exe {fmt}")
    st, out, err = dump(path, "--format", "json")
    check(st == 0 and json.loads(out)["processes"][0]["exe"] == "A" * 256, "exe: JSON holds exe[]'s 256 bytes")


def hostile_set():
    ts = [thread(100 + i, n, start=1_000_000_000 + i * 1000, end=1_003_000_000, user=1_000_000 + i, system=0)
          for i, n in enumerate(HOSTILE)]
    ts.append(thread(200, b"renamed", name_start=b"\x1b[31mred", sched=(2_500_000, 12, 9, 3)))
    return run_set([proc_file(100, 1, HOSTILE_EXE, ts, samples=[(1_001_000_000, 101, 1, 100), (1_002_000_000, 101, 2, 600_100)])],
                   cmd=b"prog \x1b]0;t\x07 \xff")


def no_raw_controls(out, what):
    text, bad = terminal_text(out)
    check(not bad, f"{what}: not what a terminal may get: {bad[:5]}")
    return text


def test_hostile_names():
    path = write("hostile.ttrunset", hostile_set())
    for group in ((), ("--group",)):
        st, out, err = dump(path, "--format", "json", *group)
        no_raw_controls(out, f"json{group}")
        rep = json.loads(out)
        rows = rep["processes"][0]["groups" if group else "threads"]
        names = {r["name"] for r in rows}
        # json.loads reads back the name: controls escaped and decoded
        # again, each ill-formed piece one U+FFFD, as Python's decoder has it.
        want = {n.decode("utf-8", "replace") for n in HOSTILE}
        check(want <= names, f"json{group}: names {sorted(names)} lack {sorted(want - names)}")
        check(rep["processes"][0]["exe"] == HOSTILE_EXE.decode("utf-8", "replace") and
              rep["command"] == "prog \x1b]0;t\x07 \ufffd", f"json{group}: exe and command: {rep['processes'][0]['exe']!r}")
        if not group:
            r = [r for r in rows if r["tid"] == 200][0]
            check(r["name_at_start"] == "\x1b[31mred", f"json: name at start {r}")
    st, out, err = dump(path, "--format", "chrome")
    ev = json.loads(no_raw_controls(out, "chrome"))["traceEvents"]
    names = {e["args"]["name"] for e in ev if e["name"] == "thread_name"}
    check({n.decode("utf-8", "replace") for n in HOSTILE} <= names, f"chrome: thread names {names}")
    check(any(e["ph"] == "C" and e["name"] == "cpu % 101 " + HOSTILE[1].decode() for e in ev),
          f"chrome: the counter names its thread: {[e['name'] for e in ev if e['ph'] == 'C']}")
    for group in ((), ("--group",)):
        st, out, err = dump(path, "--format", "csv", *group)
        rows = list(csv.reader(io.StringIO(no_raw_controls(out, f"csv{group}"), newline="")))
        check(all(len(r) == len(rows[0]) for r in rows), f"csv{group}: every row has the header's columns")
        col = rows[0].index("name")
        got = {r[col] for r in rows[1:]}
        want = {escaped(n) for n in HOSTILE}
        check(want <= got, f"csv{group}: names {sorted(got)} lack {sorted(want - got)}")
    st, out, err = dump(path)
    text = no_raw_controls(out, "text")
    lines = text.split("\n")
    for i, n in enumerate(HOSTILE):
        row = [l for l in lines if l.startswith(f"  {100 + i:7d}  ")]
        check(len(row) == 1 and row[0][11:].startswith(escaped(n)), f"text: one row for {n!r}, escaped: {row}")
    check(escaped(HOSTILE_EXE) in text, "text: the exe escaped")
    for fmt, ext in (("text", "txt"), ("csv", "csv"), ("json", "json"), ("chrome", "chrome.json")):
        st, out, err = dump(path, "--format", fmt)
        golden(out, f"run-hostile.{ext}")


def refused(args, want, what):
    """Runs threadtime with args, which must be refused with status 2 and
    want on stderr, without waiting (a hang is a TimeoutExpired: a
    failure, not a time asserted)."""
    try:
        p = subprocess.run([TT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, cwd=TMP)
    except subprocess.TimeoutExpired:
        check(False, f"{what}: threadtime hung")
        return
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 2 and want in err, f"{what}: status {p.returncode}, want 2 and '{want}': {err}")


def test_report_files():
    # dump -o and run --report create their files as recordings are made:
    # 0600, never through another user's symlink, never blocked by a FIFO.
    rec = write("files.ttrunset", run_set([proc_file(10, 1, b"a", [thread(10, b"main")])]))
    d = os.path.join(TMP, "files")
    os.mkdir(d)
    out = os.path.join(d, "new.txt")
    old = os.umask(0o022)
    try:
        st = subprocess.run([TT, "dump", "-o", out, rec], timeout=60).returncode
    finally:
        os.umask(old)
    _, want, _ = dump(rec)
    check(st == 0 and open(out, "rb").read() == want, "dump -o: the report is written")
    check(os.stat(out).st_mode & 0o777 == 0o600, f"dump -o: mode {os.stat(out).st_mode & 0o777:o}, want 600")
    # A FIFO nobody reads: refused at once, for dump and before run starts
    # its command.
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo, 0o600)
    refused(["dump", "-o", fifo, rec], "no process reads", "dump -o FIFO without a reader")
    marker = os.path.join(d, "ran")
    refused(["run", "--report", fifo, "--", "touch", marker], "no process reads", "run --report FIFO")
    check(not os.path.exists(marker), "run --report FIFO: the command did not run")
    # A FIFO with a reader gets the report.
    r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    st = subprocess.run([TT, "dump", "-o", fifo, rec], timeout=60).returncode
    got = os.read(r, 1 << 20)
    os.close(r)
    check(st == 0 and got == want, f"dump -o FIFO with a reader: status {st}, {len(got)} bytes")
    if os.geteuid() != 0:
        print("  SKIP another user's symlink and FIFO: needs root to make them")
        return
    # In a sticky shared directory, another user's symlink to root's file
    # and another user's FIFO (with a reader: it would take the report).
    shared = os.path.join(TMP, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    victim = os.path.join(TMP, "victim")
    with open(victim, "w") as f:
        f.write("root's\n")
    link = os.path.join(shared, "tt-report.txt")
    os.symlink(victim, link)
    os.lchown(link, 65534, 65534)
    theirs = os.path.join(shared, "their-fifo")
    os.mkfifo(theirs, 0o666)
    os.chown(theirs, 65534, 65534)
    r = os.open(theirs, os.O_RDONLY | os.O_NONBLOCK)
    for args, what in ((["dump", "-o", link, rec], "dump -o"), (["run", "--report", link, "--", "touch", marker], "run --report")):
        refused(args, "another user's symlink", f"{what} through another user's symlink")
        check(open(victim).read() == "root's\n" and os.path.islink(link), f"{what}: the symlink's target unchanged")
    refused(["dump", "-o", theirs, rec], "FIFO another user owns", "dump -o another user's FIFO")
    refused(["run", "--report", theirs, "--", "touch", marker], "FIFO another user owns", "run --report another user's FIFO")
    check(os.read(r, 1 << 20) == b"", "another user's FIFO got nothing")
    os.close(r)
    check(not os.path.exists(marker), "run --report: the command did not run")


def limited():
    """preexec_fn for a dump child: 1 GiB of address space, so that reading
    a whole multi-GB input fails instead of taking the host's memory; none
    for a sanitizer build, whose shadow memory needs more."""
    with open(TT, "rb") as f:
        asan = b"libasan" in f.read()
    if asan:
        return None
    import resource
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def dump_stream(data, endless, *args):
    """threadtime dump ARGS /dev/stdin with data then endless on a pipe,
    written until threadtime closes it: (status, stdout, stderr)."""
    import threading
    with tempfile.TemporaryFile(dir=TMP) as out, tempfile.TemporaryFile(dir=TMP) as err:
        p = subprocess.Popen([TT, "dump", *args, "/dev/stdin"], stdin=subprocess.PIPE, stdout=out, stderr=err,
                             preexec_fn=limited())

        def feed():
            try:
                p.stdin.write(data)
                while endless:
                    p.stdin.write(endless)
            except (BrokenPipeError, ValueError):
                pass
            try:
                p.stdin.close()
            except BrokenPipeError:
                pass

        threading.Thread(target=feed, daemon=True).start()
        try:
            st = p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            st = p.wait()
            err.write(b" (threadtime hung)")
        out.seek(0)
        err.seek(0)
        return st, out.read(), err.read().decode(errors="replace")


def test_bounded_input():
    # dump looks at the signature first and reads no further than the input
    # says it holds: a sparse 3 GB file and an endless pipe of zeros are
    # refused with the reader's message, and a recording followed by an
    # endless stream is reported as it is. (Before, each was read whole:
    # 3 GB of memory, or until ENOMEM.)
    sparse = os.path.join(TMP, "sparse.trace")
    with open(sparse, "wb") as f:
        f.truncate(3 << 30)
    p = subprocess.run([TT, "dump", sparse], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                       preexec_fn=limited())
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 2 and "no TTRACE signature" in err, f"sparse file: status {p.returncode}: {err}")
    os.unlink(sparse)
    st, out, err = dump_stream(b"", b"\0" * 65536)
    check(st == 2 and "no TTRACE signature" in err, f"endless zeros: status {st}: {err}")
    rec = run_set([proc_file(10, 1, b"a", [thread(10, b"main")])])
    _, want, _ = dump(write("prefix.ttrunset", rec), "--format", "json")
    st, out, err = dump_stream(rec, b"x" * 65536, "--format", "json")
    check(st == 0 and out == want, f"a recording, then an endless stream: status {st}: {err}")


def test_many_threads():
    # 60,000 records: each SEEN record is matched to its pthread record by
    # tid, and the names folded into groups, in one pass each (both were
    # quadratic: 11.5 s for 60 k records; make bench-run-report times it).
    n = 60000
    path = write("many.ttrunset", many_threads(n))
    st, out, err = dump(path, "--format", "json")
    rows = json.loads(out)["processes"][0]["threads"] if st == 0 else []
    ended = [r for r in rows if r["how"] == "ended"]
    sampled = [r for r in rows if r["how"] == "sampled"]
    check(len(ended) == n // 2 and len({r["tid"] for r in ended}) == n // 2, f"many: {len(ended)} ended threads")
    check(sorted(r["tid"] for r in sampled) == list(range(900_000, 900_010)),
          f"many: only the 10 threads no pthread record covers come from the sampler: {len(sampled)}")
    st, out, err = dump(path, "--format", "json", "--group")
    groups = {g["name"]: g for g in json.loads(out)["processes"][0]["groups"]} if st == 0 else {}
    w = groups.get("w#*", {})
    check(w.get("threads") == n // 2 and w.get("total_ns") == n // 2 * 1_500_000,
          f"many --group: w#* holds every worker once: {w.get('threads')} threads, {w.get('total_ns')} ns")
    check(groups.get("clone", {}).get("threads") == 10 and len(groups) == 2, f"many --group: {sorted(groups)}")


def test_tree_order():
    # Each process after its parent, siblings in the order they started, a
    # process whose parent is not recorded starts a tree of its own (after
    # the first), and a chain of 3,000 forks (walked without recursion).
    def p(pid, ppid, start):
        return proc_file(pid, ppid, b"p%d" % pid, [thread(pid, b"m", kind=2)], start=start)
    procs = [p(20, 99, 5), p(11, 10, 3), p(10, 1, 1), p(13, 11, 4), p(12, 10, 2)]
    procs += [p(1000 + i, 999 + i if i else 20, 10 + i) for i in range(3000)]
    st, out, err = dump(write("tree.ttrunset", run_set(procs)), "--format", "json")
    got = [(x["pid"], x["depth"]) for x in json.loads(out)["processes"]] if st == 0 else []
    want = [(10, 0), (12, 1), (11, 1), (13, 2), (20, 0)] + [(1000 + i, 1 + i) for i in range(3000)]
    check(got == want, f"tree: order and depth {got[:8]}..., status {st}: {err[-300:]}")


def test_exec_chain():
    # One pid, three images: sh, a shim, the program (each exec keeps the
    # thread and its CPU clock). The first two keep nothing but their
    # sampler: no block of their own; their samplers' CPU goes to the
    # program's, and the main thread's life starts with the chain, as its
    # CPU clock did: 250 ms of CPU in 300 ms, not in the last image's 100.
    ms = 1_000_000
    imgs = [proc_file(50, 1, b"sh", [thread(50, b"sh", state=LIVE, kind=2)], state=EXECED, sampler_tid=51,
                      sampler_cpu=1 * ms, start=1000 * ms, end=1100 * ms),
            proc_file(50, 1, b"shim", [thread(50, b"shim", state=LIVE, kind=2)], state=EXECED, sampler_tid=52,
                      sampler_cpu=2 * ms, start=1100 * ms, end=1200 * ms),
            proc_file(50, 1, b"prog", [thread(50, b"prog", kind=2, start=1200 * ms, end=1300 * ms, user=250 * ms,
                                              system=0)], sampler_tid=53, sampler_cpu=3 * ms, start=1200 * ms,
                      end=1300 * ms)]
    path = write("exec.ttrunset", run_set(imgs[::-1], rusage=(260 * ms, 0)))
    st, out, err = dump(path, "--format", "json")
    procs = json.loads(out)["processes"] if st == 0 else []
    check([(p["exe"], p["state"]) for p in procs] == [("prog", "exited")], f"exec: one block: {procs}")
    rows = {r["how"]: r for r in procs[0]["threads"]} if procs else {}
    check(rows.get("threadtime", {}).get("total_ns") == 6 * ms, f"exec: the three samplers' CPU: {rows}")
    main = rows.get("ended", {})
    check(main.get("lifetime_ns") == 300 * ms and "cpu_before_start" not in main, f"exec: the chain's life: {main}")
    st, out, err = dump(path)
    check(b"replaced by exec" not in out, "exec: no empty 'replaced by exec' block")
    # Without the chain (the program's image alone), its CPU exceeds the
    # life recorded: said, and no cpu_% above 100.
    path = write("exec-alone.ttrunset", run_set(imgs[2:]))
    st, out, err = dump(path, "--format", "json")
    main = [r for r in json.loads(out)["processes"][0]["threads"] if r["tid"] == 50][0]
    check(main.get("cpu_before_start") is True, f"exec alone: the CPU is said to start before the life: {main}")
    st, out, err = dump(path)
    row = [l for l in out.decode().split("\n") if l.startswith("       50  ")]
    check(len(row) == 1 and " - " in row[0] and "counts from exec" in row[0], f"exec alone: text row {row}")


def test_boot_offset_kept():
    # Two images of pid 60, an exec chain: the first keyed by its pidfs
    # inode alone and replaced by exec (the run's reader marked it so),
    # with nothing but its sampler, the second by its start alone (made
    # under a seccomp filter), in clock ticks since boot, suspend included.
    # Whether the second's process had started by the first's file says
    # whether they are one process, so the chain is folded into one block;
    # that takes the time suspended, which the first file recorded. A kept
    # copy read after a reboot (or a suspend) must use that, not the
    # reader's own. The truth is the recording: built so that by its offset
    # (the reader's + 100 s) the process started before the first file (one
    # process: one block), by the reader's 100 s after it (two).
    ms = 1_000_000
    own = time.clock_gettime_ns(time.CLOCK_BOOTTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    tick = 1_000_000_000 // os.sysconf("SC_CLK_TCK")
    ticks = (own + 100_000 * ms) // tick + 1  # started at (ticks * tick - offset) = 0 to 1 tick: before 1 s
    offset = ticks * tick
    imgs = [proc_file(60, 1, b"sh", [thread(60, b"sh", state=LIVE, kind=2)], state=EXECED, sampler_tid=61,
                      sampler_cpu=1 * ms, start=1000 * ms, end=1100 * ms, key=(0, 7, offset + 1)),
            proc_file(60, 1, b"prog", [thread(60, b"prog", kind=2, start=1200 * ms, end=1300 * ms, user=50 * ms,
                                              system=0)], sampler_tid=62, sampler_cpu=2 * ms, start=1200 * ms,
                      end=1300 * ms, key=(ticks, 0, 0))]
    path = write("boot-offset.ttrunset", run_set(imgs, rusage=(60 * ms, 0)))
    st, out, err = dump(path, "--format", "json")
    procs = json.loads(out)["processes"] if st == 0 else []
    print(f"  boot offset: {[(p['exe'], p['state']) for p in procs]}")
    check(st == 0 and [p["exe"] for p in procs] == ["prog"], f"boot offset: one process, the chain's last image: "
          f"{[(p['exe'], p['state']) for p in procs]} {err[-300:]}")

    # The same pair forged so that the second's start, in ns, less the
    # first's suspended time does not fit in 64 bits (any process of the
    # tree can write both): no pair, and no undefined arithmetic (the
    # ASan/UBSan build of the reader stopped on the subtraction before).
    imgs[0] = proc_file(60, 1, b"sh", [thread(60, b"sh", state=LIVE, kind=2)], state=EXECED, sampler_tid=61,
                        sampler_cpu=1 * ms, start=1000 * ms, end=1100 * ms, key=(0, 7, (1 << 62) + 1))
    imgs[1] = proc_file(60, 1, b"prog", [thread(60, b"prog", kind=2, start=1200 * ms, end=1300 * ms, user=50 * ms,
                                                system=0)], sampler_tid=62, sampler_cpu=2 * ms, start=1200 * ms,
                        end=1300 * ms, key=((3 << 62) // tick, 0, 0))
    path = write("boot-offset-forged.ttrunset", run_set(imgs, rusage=(60 * ms, 0)))
    st, out, err = dump(path, "--format", "json")
    procs = json.loads(out)["processes"] if st == 0 else []
    check(st == 0 and sorted(p["exe"] for p in procs) == ["prog", "sh"],
          f"boot offset forged: two processes: {[(p['exe'], p['state']) for p in procs]} {err[-300:]}")

    # 5 threads took records, the file had 2: the 3 others are said in
    # every format, and the line on what no read saw names what applies:
    # a process that did not exit, the dropped threads; nothing about
    # processes ending with _exit() (they are recorded).
    ms = 1_000_000
    rec = run_set([proc_file(60, 1, b"full", [thread(61, b"a"), thread(62, b"b")], thread_cap=2, threads_used=5),
                   proc_file(70, 60, b"killed", [thread(70, b"k", state=LIVE, kind=2)], state=RUNNING)],
                  rusage=(100 * ms, 0))
    path = write("dropped.ttrunset", rec)
    st, out, err = dump(path)
    text = out.decode()
    check("3 more threads had no record" in text, f"dropped: text: {text}")
    unseen = [l for l in text.split("\n") if "no read above saw" in l]
    check(len(unseen) == 1 and "1 process that did not exit" in unseen[0] and "3 threads that had no record" in
          unseen[0] and "_exit" not in unseen[0], f"unseen: {unseen}")
    st, out, err = dump(path, "--format", "json")
    check(json.loads(out)["processes"][0]["dropped_threads"] == 3, "dropped: json")
    for group, col, want in (((), "how", "dropped 3 threads"), (("--group",), "threads", "3")):
        st, out, err = dump(path, "--format", "csv", *group)
        rows = list(csv.DictReader(io.StringIO(out.decode(), newline="")))
        check([r[col] for r in rows if r["name"] == "(no record)"] == [want], f"dropped: csv{group}: {rows}")
    st, out, err = dump(path, "--format", "chrome")
    ev = json.loads(out)["traceEvents"]
    check([e["args"]["dropped_threads"] for e in ev if e["ph"] == "i"] == [3], "dropped: chrome")


def test_group_across_processes():
    # --group totals each thread name over all processes: make's three cc1
    # processes are one cc1 row of 3 threads in 3 processes, and two GC
    # workers in two JVMs one "GC Thread#*" row.
    ms = 1_000_000
    procs = [proc_file(10, 1, b"make", [thread(10, b"make", kind=2, user=1 * ms, system=0)])]
    procs += [proc_file(11 + i, 10, b"cc1", [thread(11 + i, b"cc1", kind=2, user=(i + 1) * ms, system=0)])
              for i in range(3)]
    procs += [proc_file(20 + i, 10, b"java", [thread(30 + i, b"GC Thread#%d" % i, user=5 * ms, system=ms)])
              for i in range(2)]
    path = write("across.ttrunset", run_set(procs))
    st, out, err = dump(path, "--format", "json", "--group")
    groups = {g["name"]: g for g in json.loads(out).get("groups", [])} if st == 0 else {}
    check(groups.get("cc1", {}).get("threads") == 3 and groups["cc1"]["processes"] == 3 and
          groups["cc1"]["total_ns"] == 6 * ms, f"across json: cc1 {groups.get('cc1')}")
    gc = groups.get("GC Thread#*", {})
    check(gc.get("threads") == 2 and gc.get("processes") == 2 and gc.get("total_ns") == 12 * ms, f"across json: GC {gc}")
    st, out, err = dump(path, "--format", "csv", "--group")
    rows = [r for r in csv.DictReader(io.StringIO(out.decode(), newline="")) if not r["pid"] and r["name"] != "(command)"]
    check(sorted((r["name"], r["threads"], r["total_ns"]) for r in rows) ==
          [("GC Thread#*", "2", str(12 * ms)), ("cc1", "3", str(6 * ms)), ("make", "1", str(ms))],
          f"across csv: rows without a pid {rows}")
    st, out, err = dump(path, "--group")
    text = out.decode()
    tail = text[text.find("all processes, by thread name:"):]
    check(any(l.split()[:3] == ["3", "3", "cc1"] for l in tail.split("\n")), f"across text: {tail}")


def test_samples_json():
    # The sampler's time series in JSON: each sample as the recording holds
    # it, t_ns from the earliest process's start.
    rec = run_set([proc_file(40, 1, b"s", [thread(41, b"w")], start=1_000_000_000,
                             samples=[(1_001_000_000, 41, 1, 100), (1_002_000_000, 41, 2, 600_100)])])
    st, out, err = dump(write("samples.ttrunset", rec), "--format", "json")
    got = json.loads(out)["processes"][0].get("samples") if st == 0 else None
    check(got == [{"t_ns": 1_000_000, "tid": 41, "round": 1, "total_ns": 100},
                  {"t_ns": 2_000_000, "tid": 41, "round": 2, "total_ns": 600_100}], f"samples: {got}")


def sched_set(cgroup=(0, 1, 20_000, 100_000, 50, 7, 35_000_000)):
    """Two processes: a thread with each scheduler figure known, one with
    none (sampled), one with its switches alone (short), and a sampler; the
    command's wait4 switches."""
    ms = 1_000_000
    p1 = proc_file(10, 1, b"a", [thread(10, b"main", kind=2, sched=(3 * ms, 40, 25, 7)),
                                 thread(11, b"w#1", sched=(5 * ms, 9, 4, 2)),
                                 thread(12, b"w#2", sched=(1 * ms, 3, 2, 1)),
                                 thread(13, b"clone", state=SEEN, kind=2, user=0, system=0, spare=(2 * ms, 1_001_000_000)),
                                 thread(15, b"short", sched=(99, 99, 3, 1), no_wait=True)],
                   sampler_tid=14, sampler_cpu=ms)
    p2 = proc_file(20, 10, b"b", [thread(20, b"w#3", kind=2, sched=(7 * ms, 11, 6, 5))])
    return run_set([p1, p2], rusage=(20 * ms, 2 * ms), switches=(41, 16), cgroup=cgroup)


def test_sched_every_format():
    # Each thread's wait for a CPU and switch counts as its record holds
    # them, in every format; unknown (no TT_RUN_SCHED) is '-' or -1, never
    # 0; --group sums them per name, unknown when one member is; the whole
    # command: the known threads' sum, how many are not known, wait4's
    # switches and the cgroup's throttling over the run.
    ms = 1_000_000
    path = write("sched.ttrunset", sched_set())
    st, out, err = dump(path, "--format", "json")
    rep = json.loads(out)
    rows = {t["tid"]: t for p in rep["processes"] for t in p["threads"]}
    want = {10: (3 * ms, 40, 25, 7), 11: (5 * ms, 9, 4, 2), 12: (ms, 3, 2, 1), 20: (7 * ms, 11, 6, 5),
            13: (-1, -1, -1, -1), 14: (-1, -1, -1, -1), 15: (-1, -1, 3, 1)}
    got = {tid: (t["run_wait_ns"], t["timeslices"], t["voluntary_switches"], t["involuntary_switches"])
           for tid, t in rows.items()}
    check(got == want, f"sched json: {got}")
    check((rep["run_wait_ns"], rep["timeslices"], rep["voluntary_switches"], rep["involuntary_switches"],
           rep["run_wait_unknown_threads"], rep["switches_unknown_threads"]) == (16 * ms, 63, 40, 16, 2, 1),
          f"sched json: the command's sums {rep}")
    check(rep["rusage"]["voluntary_switches"] == 41 and rep["rusage"]["involuntary_switches"] == 16,
          f"sched json: wait4's switches {rep['rusage']}")
    check(rep["cgroup"] == {"available": True, "version": 1, "quota_us": 20_000, "period_us": 100_000, "periods": 50,
                            "throttled_periods": 7, "throttled_ns": 35 * ms}, f"sched json: cgroup {rep['cgroup']}")
    st, out, err = dump(path, "--format", "json", "--group")
    groups = {g["name"]: g for p in json.loads(out)["processes"] for g in p["groups"]}
    check(groups["w#*"]["run_wait_ns"] == 6 * ms and groups["w#*"]["voluntary_switches"] == 6 and
          groups["clone"]["run_wait_ns"] == -1, f"sched json --group: {groups}")
    alls = {g["name"]: g for g in json.loads(out)["groups"]}
    check(alls["w#*"]["run_wait_ns"] == 13 * ms and alls["w#*"]["involuntary_switches"] == 8 and
          alls["w#*"]["threads"] == 3, f"sched json --group over processes: {alls['w#*']}")
    # CSV: the same columns by name, and the command's row.
    st, out, err = dump(path, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out.decode(), newline="")))
    got = {int(r["tid"]): tuple(int(r[k]) for k in ("run_wait_ns", "timeslices", "voluntary_switches",
                                                    "involuntary_switches")) for r in rows if r["tid"]}
    check(got == want, f"sched csv: {got}")
    cmd = [r for r in rows if r["name"] == "(command)"]
    check(len(cmd) == 1 and (cmd[0]["run_wait_ns"], cmd[0]["voluntary_switches"], cmd[0]["involuntary_switches"],
                             cmd[0]["cgroup_throttled_ns"], cmd[0]["total_ns"]) ==
          (str(16 * ms), "41", "16", str(35 * ms), str(22 * ms)) and "2 threads not read" in cmd[0]["how"],
          f"sched csv: the command's row {cmd}")
    st, out, err = dump(path, "--format", "csv", "--group")
    rows = list(csv.DictReader(io.StringIO(out.decode(), newline="")))
    w = [r for r in rows if not r["pid"] and r["name"] == "w#*"]
    check(len(w) == 1 and w[0]["run_wait_ns"] == str(13 * ms), f"sched csv --group: {w}")
    # Text: the columns under their names, and the command's lines.
    st, out, err = dump(path)
    text = out.decode()
    lines = text.split("\n")
    head = [l for l in lines if l.lstrip().startswith("tid ")][0].split()
    for tid, (wait, _, vol, invol) in want.items():
        row = [l for l in lines if l.startswith(f"  {tid:7d}  ")]
        cells = row[0].split() if row else []
        i = len(cells) - (len(head) - head.index("wait_ms"))
        want_cells = ["-" if wait < 0 else f"{wait / ms:.3f}", "-" if vol < 0 else str(vol), "-" if invol < 0 else str(invol)]
        check(len(row) == 1 and cells[i:i + 3] == want_cells,
              f"sched text: {tid}: {row}")
    check("all threads waited 16.000 ms for a CPU (not counting 2 threads whose wait was not read); its cgroup was throttled "
          "35.000 ms over the run (v1, quota 20.000 ms per 100.000 ms: 7 of 50 periods throttled)" in text, f"sched text: {text}")
    check("context switches: 40 voluntary, 16 involuntary (not counting 1 thread not read); the command's own rusage "
          "(wait4): 41 voluntary, 16 involuntary" in text, "sched text: switches")
    # Chrome: in each slice's arguments where known.
    st, out, err = dump(path, "--format", "chrome")
    ev = {e["tid"]: e["args"] for e in json.loads(out)["traceEvents"] if e["ph"] == "X"}
    check(ev[11].get("wait_ms") == 5.0 and ev[11].get("voluntary_switches") == 4 and "wait_ms" not in ev[13],
          f"sched chrome: {ev}")


def test_cgroup_not_available():
    # A cgroup that could not be read (here ENOENT: no CPU controller) is
    # said to be so in every format, never given as 0.
    path = write("nocgroup.ttrunset", sched_set(cgroup=(2, 0, 0, 0, 0, 0, 0)))
    st, out, err = dump(path)
    text = out.decode()
    check("cgroup throttling not available: no CPU controller visible" in text and "throttled by" not in text,
          f"no cgroup: text {text[-400:]}")
    st, out, err = dump(path, "--format", "json")
    cg = json.loads(out)["cgroup"]
    check(cg.get("available") is False and "no CPU controller" in cg.get("why", "") and "throttled_ns" not in cg,
          f"no cgroup: json {cg}")
    for group in ((), ("--group",)):
        st, out, err = dump(path, "--format", "csv", *group)
        cmd = [r for r in csv.DictReader(io.StringIO(out.decode(), newline="")) if r["name"] == "(command)"]
        check(len(cmd) == 1 and cmd[0]["cgroup_throttled_ns"] == "" and
              (group or "cgroup throttling not available" in cmd[0]["how"]), f"no cgroup: csv{group} {cmd}")


def test_version_1():
    # Recordings made before the scheduler's figures (version 1 files in a
    # version 1 recording, and in a version 2 one) still read: their
    # figures as they were, the new ones unknown, never 0.
    ms = 1_000_000
    v1 = proc_file(30, 1, b"old", [thread(30, b"main", kind=2, user=4 * ms, system=ms, version=1),
                                   thread(31, b"w", version=1)],
                   samples=[(1_001_000_000, 31, 1, 100)], version=1)
    for what, data in (("v1 in v1", run_set([v1], rusage=(6 * ms, 0), version=1)),
                       ("v1 in v2", run_set([v1, proc_file(40, 30, b"new", [thread(40, b"n", sched=(ms, 1, 1, 1))])]))):
        path = write(what.replace(" ", "_") + ".ttrunset", data)
        st, out, err = dump(path, "--format", "json")
        check(st == 0, f"{what}: status {st}: {err}")
        if st:
            continue
        rep = json.loads(out)
        rows = {t["tid"]: t for p in rep["processes"] for t in p["threads"]}
        check(rows[30]["total_ns"] == 5 * ms and rows[30]["run_wait_ns"] == -1 and rows[31]["voluntary_switches"] == -1,
              f"{what}: rows {rows}")
        check(rep["processes"][0]["samples"] == [{"t_ns": 1_000_000, "tid": 31, "round": 1, "total_ns": 100}],
              f"{what}: samples {rep['processes'][0]['samples']}")
        if "v1 in v1" == what:
            check(rep["cgroup"]["available"] is False and "not in this recording" in rep["cgroup"]["why"] and
                  rep["rusage"]["voluntary_switches"] == -1, f"{what}: cgroup {rep['cgroup']}")
            # No thread's wait or switches known: the command's sums are
            # unknown too, not 0.
            check(rep["run_wait_ns"] == -1 and rep["voluntary_switches"] == -1 and rep["run_wait_unknown_threads"] == 2,
                  f"{what}: the command's wait {rep['run_wait_ns']}, switches {rep['voluntary_switches']}")
            st, text, err = dump(path)
            check("the wait for a CPU was not read for any thread (2)" in text.decode() and
                  "context switches: not read for any thread (2)" in text.decode(), f"{what}: text {text[-400:]}")
        else:
            check(rows[40]["run_wait_ns"] == ms, f"{what}: the version 2 file's figures {rows[40]}")
        st, out, err = dump(path)
        check(st == 0 and "thread" in out.decode() and "not read" in out.decode(), f"{what}: text {out[-300:]}")


def test_series_csv():
    # The sampler's time series as CSV: each sample as the recording holds
    # it (t_ns from the earliest process's start, as in JSON), the thread's
    # name from its row, and its CPU rate since its previous sample.
    rec = run_set([proc_file(40, 1, b"s", [thread(41, b"w,1")], start=1_000_000_000,
                             samples=[(1_001_000_000, 41, 1, 100), (1_002_000_000, 41, 2, 600_100),
                                      (1_002_000_000, 42, 2, 5)]),
                   proc_file(50, 40, b"t", [thread(50, b"m")], start=1_000_500_000,
                             samples=[(1_004_000_000, 50, 1, 7)])])
    path = write("series.ttrunset", rec)
    st, out, err = dump(path, "--format", "csv-series")
    rows = list(csv.DictReader(io.StringIO(out.decode(), newline=""))) if st == 0 else []
    got = [(r["pid"], r["tid"], r["name"], r["round"], r["t_ns"], r["total_ns"], r["cpu_percent"]) for r in rows]
    check(got == [("40", "41", "w,1", "1", "1000000", "100", ""), ("40", "41", "w,1", "2", "2000000", "600100", "60.0"),
                  ("40", "42", "?", "2", "2000000", "5", ""), ("50", "50", "m", "1", "4000000", "7", "")],
          f"series: status {st}: {got} {err}")
    # A trace file has no time series of a run.
    trace = os.path.join(os.path.dirname(GOLDEN), "..", "fuzz", "seeds", "golden-1.2.trace")
    st, out, err = dump(trace, "--format", "csv-series")
    check(st == 2 and "csv-series is for recordings of threadtime run" in err, f"series of a trace: {st} {err}")


def golden(out, name):
    path = os.path.join(GOLDEN, name)
    if os.environ.get("TT_UPDATE_GOLDEN"):
        with open(path, "wb") as f:
            f.write(out)
        return
    with open(path, "rb") as f:
        want = f.read()
    if out != want:
        keep = os.path.join(TMP, name)
        with open(keep, "wb") as f:
            f.write(out)
        print(f"  output differs from {path}; see {keep}")
    check(out == want, f"golden {name}")


if __name__ == "__main__":
    main(globals(), TMP)
