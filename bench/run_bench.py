#!/usr/bin/env python3
"""The floors of `threadtime run`, each beside its baseline in
the same run: make bench-run. Usage: run_bench.py THREADTIME RUN_BENCH
PRELOAD_LIB [XZ_MB] [ROUNDS] [PARTS]; PARTS is any of 1, 2, 3, 4, 5 (default
12345). BASELINE_RUN_LIB=another build's preload: parts 1 and 5 run it too."""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

TT, BENCH, LIB = (os.path.abspath(a) for a in sys.argv[1:4])
XZ_MB = int(sys.argv[4]) if len(sys.argv) > 4 else 40
ROUNDS = int(sys.argv[5]) if len(sys.argv) > 5 else 5
PARTS = sys.argv[6] if len(sys.argv) > 6 else "12345"
tmp = tempfile.mkdtemp(prefix="run_bench.", dir=os.environ.get("TMPDIR"))


def preloaded_env():
    d = tempfile.mkdtemp(dir=tmp)
    return dict(os.environ, LD_PRELOAD=LIB, THREADTIME_RUN_DIR=d, THREADTIME_RUN_INTERVAL_NS="100000000")


# 1. Per thread started and ended: the preload's records (a take, the
#    thread's own split, its tid) against bare create + join, measured as
#    the process's CPU time per create+join: one process alternates batches
#    through libc's pthread_create and the preload's. The control run (no
#    preload: both columns libc) shows what the method itself reads as a
#    difference. BASELINE_RUN_LIB=another build's preload adds its row,
#    interleaved with the others.
#    5. The same for threads that live 2.1 ms, long enough for the preload
#    to read their wait for a CPU (a /proc file) at their end.
def per_thread(args, what, batches):
    rows = {"control": [], "preloaded": []}
    if os.environ.get("BASELINE_RUN_LIB"):
        rows["baseline"] = []
    for _ in range(ROUNDS):
        for kind in rows:
            env = None
            if kind != "control":
                env = dict(preloaded_env(), THREADTIME_RUN_THREADS="32768")
            if kind == "baseline":
                env["LD_PRELOAD"] = os.path.abspath(os.environ["BASELINE_RUN_LIB"])
            rows[kind].append([int(x) for x in subprocess.check_output([BENCH, "create", *args], env=env).split()])
    for kind, r in rows.items():
        b = statistics.median(x[0] for x in r)
        p = statistics.median(x[1] for x in r)
        print(f"{what}, {kind}: libc {b:.0f} ns CPU, through pthread_create as linked {p:.0f} ns, "
              f"added {p - b:.0f} ns (medians over {ROUNDS} runs of the per-run medians of {batches})")


if "1" in PARTS:
    per_thread(["20000"], "thread start+end", "10 batches of 1000 each")
if "5" in PARTS:
    per_thread(["2000", "2100"], "thread of 2.1 ms start+end", "10 batches of 100 each")

# 2. The sampler at 100 ms with 1,000 live threads, from the report.
if "2" in PARTS:
  out = subprocess.run([TT, "run", "--format", "json", "--report", os.path.join(tmp, "idle.json"), "--",
                      BENCH, "idle", "1000", "10"], check=True)
  rep = json.load(open(os.path.join(tmp, "idle.json")))
  proc = rep["processes"][0]
  s = proc["sampler"]
  print(f"sampler, 1000 live threads, 100 ms: {s['cpu_ns'] / 1e6:.1f} ms CPU in {proc['wall_ns'] / 1e9:.1f} s "
      f"= {100 * s['cpu_ns'] / proc['wall_ns']:.3f} % of one CPU ({s['rounds']} rounds, "
      f"{s['cpu_ns'] / max(s['rounds'], 1) / 1e3:.0f} us per round)")

# 3. xz -T2 on a text file of XZ_MB MB, with and without threadtime run:
#    wall time, and the CPU time of the whole tree (wait4 of the children),
#    which a shared host disturbs far less.
def part3():
    src = os.path.join(tmp, "input.txt")
    with open(src, "w") as f:
        i = 0
        while f.tell() < XZ_MB << 20:
            f.write("".join(f"line {j} of some text {j * 7919 % 10007} alpha beta gamma\n" for j in range(i, i + 10000)))
            i += 10000
    walls = {"bare": [], "run": []}
    cpus = {"bare": [], "run": []}
    for _ in range(ROUNDS):
        for kind in ("bare", "run"):
            cmd = ["xz", "-T2", "-c", src]
            if kind == "run":
                cmd = [TT, "run", "--report", os.path.join(tmp, "xz.txt"), "--"] + cmd
            r0 = os.times()
            t0 = time.monotonic()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
            walls[kind].append(time.monotonic() - t0)
            r1 = os.times()
            cpus[kind].append(r1.children_user + r1.children_system - r0.children_user - r0.children_system)
    for what, d in (("wall", walls), ("CPU", cpus)):
        b, r = statistics.median(d["bare"]), statistics.median(d["run"])
        print(f"xz -T2, {XZ_MB} MB, {what}: bare {b:.3f} s, threadtime run {r:.3f} s, ratio {r / b:.4f} "
              f"(medians of {ROUNDS} interleaved runs; all: bare {[round(x, 3) for x in d['bare']]}, "
              f"run {[round(x, 3) for x in d['run']]})")


# 4. Many short processes: sh running /bin/true 200 times, bare and under
#    threadtime run, interleaved; wall time and the CPU of the tree. Each
#    process of one thread appends its start and exit to the run's log (a
#    process with threads gets a file of its own): with the run directory on
#    tmpfs (the default, /dev/shm: made here, so this writes only what it
#    made) and on the disk of TMPDIR. Between the two, where the cost per
#    process goes:
#    a library with one empty function preloaded (the loader's floor for
#    any preload), the preload loaded but inert (no THREADTIME_RUN_DIR: the
#    loader's share for this library, and its constructors), and recording
#    into tmpfs without the command (the preload's own work: each process's
#    records in the log; the command's reading and report are the rest).
#    With BASELINE_CLI set (an older threadtime, its own preload beside it),
#    that one runs too, on tmpfs.
def run_dir_with_log(parent):
    """A run directory under parent and its log, made as threadtime run makes
    them: the variables that name them to the preload."""
    d = tempfile.mkdtemp(dir=parent)
    fd = os.open(os.path.join(d, "run.ttlog"), os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    os.fchmod(fd, 0o600)  # whatever the umask: the preload takes only this mode
    st = os.fstat(fd)
    os.close(fd)
    return {"THREADTIME_RUN_DIR": d, "THREADTIME_RUN_LOG_DEV": str(st.st_dev), "THREADTIME_RUN_LOG_INO": str(st.st_ino),
            "THREADTIME_RUN_LOG_UID": str(st.st_uid)}


def part4():
    shm = tempfile.mkdtemp(prefix="run_bench.", dir="/dev/shm") if os.path.isdir("/dev/shm") else tmp
    loop = "i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done"
    base = os.environ.get("BASELINE_CLI")
    empty = os.path.join(os.path.dirname(BENCH), "librun_bench_empty.so")
    kinds = {"bare": None, "empty preload": "empty", "preload inert": "inert", "preload recording": "record",
             "run, tmpfs": (TT, shm), "run, disk": (TT, tmp)}
    if base:
        kinds["baseline run, tmpfs"] = (os.path.abspath(base), shm)
    walls = {k: [] for k in kinds}
    cpus = {k: [] for k in kinds}
    names = list(kinds)
    for r in range(ROUNDS):
        for kind in names[r % len(names):] + names[:r % len(names)]:  # no kind always after the disk
            how = kinds[kind]
            cmd, env = ["sh", "-c", loop], None
            if how == "empty":
                env = dict(os.environ, LD_PRELOAD=empty)
            elif how == "inert":
                env = dict(os.environ, LD_PRELOAD=LIB)
            elif how == "record":
                env = dict(os.environ, LD_PRELOAD=LIB, THREADTIME_RUN_INTERVAL_NS="100000000",
                           **run_dir_with_log(shm))
            elif how:
                # The report beside the run directory: on this guest's ext4
                # (mounted with discard) replacing the last one cost ~5 ms.
                cmd = [how[0], "run", "--report", os.path.join(how[1], "procs.txt"), "--"] + cmd
                env = dict(os.environ, TMPDIR=how[1])
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)  # us, where os.times() has 10 ms ticks
            t0 = time.monotonic()
            subprocess.run(cmd, check=True, env=env)
            walls[kind].append(time.monotonic() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[kind].append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
            if how == "record":
                subprocess.run(["rm", "-rf", env["THREADTIME_RUN_DIR"]])
    # Ratios and differences are taken within each round, then the median
    # over rounds: a shared host drifts between rounds (here by up to 1.5x
    # in the bare loop alone), and a ratio of two medians taken in
    # different rounds mixes that drift in.
    def per_round(d, k, f):
        return statistics.median(f(x, y) for x, y in zip(d[k], d["bare"]))
    print(f"200 x /bin/true from sh, {ROUNDS} interleaved rounds; medians of the times, and of each round's "
          f"ratio to bare and CPU added per process over bare (CPU of the tree from wait4):")
    for k in kinds:
        print(f"  {k:20s} wall {statistics.median(walls[k]):6.3f} s {per_round(walls, k, lambda x, y: x / y):5.2f}x"
              f"   CPU {statistics.median(cpus[k]):6.3f} s {per_round(cpus, k, lambda x, y: x / y):5.2f}x"
              f" {per_round(cpus, k, lambda x, y: (x - y) / 200 * 1e6):+5.0f} us")
    for what, d in (("wall", walls), ("CPU", cpus)):
        print(f"  all {what}: " + "; ".join(f"{k} {[round(x, 3) for x in v]}" for k, v in d.items()))
    if shm != tmp:
        subprocess.run(["rm", "-rf", shm])


if "3" in PARTS:
    part3()
if "4" in PARTS:
    part4()
subprocess.run(["rm", "-rf", tmp])
