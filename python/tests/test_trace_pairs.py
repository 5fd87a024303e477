"""One trace model: `threadtime dump --format chrome` and read_trace() must
find the same begin/end pairs with the same CPU on every trace (mount
markers and intervals that cross carriers, nested intervals, ends without a
begin, wrapped rings, crash-safe files), since both call the core's
tt__trace_walk. Also: a flipped byte inside a record is reported, never
silently dropped."""
import json
import os
import subprocess
import sys
import textwrap
import warnings
from collections import Counter
from pathlib import Path

import pytest

import threadtime

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
SEEDS = ROOT / "fuzz" / "seeds"
CLI = os.environ.get("THREADTIME_CLI")
EVENT_DEMO = os.environ.get("THREADTIME_EVENT_DEMO")
needs_cli = pytest.mark.skipif(not CLI, reason="THREADTIME_CLI is not set (make test-python sets it)")
# The installed wheel's run (test_wheel.py) has a copy of the tests, not the checkout's seeds.
needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason="fuzz/seeds is not beside this copy of the tests")


def chrome_pairs(path: Path) -> Counter:
    """The CLI's complete ("X") slices of events (not of a carrier's mounted
    stretches): (tid, id, start ns, duration ns, user, system, thrown)."""
    out = subprocess.run([CLI, "dump", "--format", "chrome", str(path)], capture_output=True)
    assert out.returncode in (0, 1), out.stderr
    pairs = Counter()
    for e in json.loads(out.stdout)["traceEvents"]:
        if e["ph"] != "X" or "id" not in e["args"]:
            continue
        a = e["args"]
        pairs[(round(e["ts"] * 1000), round(e["dur"] * 1000), a["id"], a.get("cpu_user_ns"),
               a.get("cpu_system_ns"), a.get("thrown", False), a.get("cpu_total_ns") if "cpu_user_ns" not in a else None,
               a.get("mounted_ns"))] += 1
    return pairs


def python_pairs(trace: threadtime.Trace) -> Counter:
    return Counter((i.start_ns, i.wall_ns, i.id, i.cpu_user_ns, i.cpu_system_ns, i.thrown, i.cpu_total_ns,
                    i.mounted_ns) for i in trace.intervals())


def read(path: Path) -> threadtime.Trace:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", threadtime.TraceDamagedWarning)
        return threadtime.read_trace(path)


def demo_traces(tmp: Path) -> list[Path]:
    """The C demo's dump and, with small rings that wrap, its crash-safe file."""
    if not EVENT_DEMO:
        return []
    dump, crash = tmp / "demo.trace", tmp / "crash.trace"
    env = dict(os.environ, THREADTIME_RING="16", THREADTIME_FILE=str(crash))
    subprocess.run([EVENT_DEMO, str(dump)], check=True, capture_output=True, env=env)
    return [dump, crash]


@needs_seeds
def test_measured_ends_pair_with_their_figures():
    """Probes whose end carries the CPU its caller measured on its own
    account (end_cpu_total) or its time mounted (end_mounted): a total with
    no user/system split, the call's own wherever it ran (the golden trace
    of tests/test_dump_golden.c)."""
    assert {"end_cpu_total", "end_mounted"} <= set(threadtime.trace.KINDS)
    assert len(set(threadtime.trace.KINDS)) == len(threadtime.trace.KINDS)
    trace = read(SEEDS / "golden-measured.trace")
    by_name = {}
    for i in trace.intervals():
        by_name.setdefault(trace.names[i.id], []).append(i)
    crossed, here = sorted(by_name["java.util.zip.Deflater::deflate"], key=lambda i: i.start_ns)
    # Begun on carrier-0, ended (thrown) on carrier-1: still its own CPU.
    assert (crossed.vthread, crossed.end_tid, crossed.thrown) == (88, 301, True)
    assert (crossed.cpu_total_ns, crossed.cpu_ns, crossed.cpu_user_ns, crossed.cpu_system_ns) == (2500, 2500, None, None)
    assert (here.cpu_total_ns, here.cpu_ns, here.mounted_ns) == (300, 300, None)
    (mounted,) = by_name["mounted"]
    assert (mounted.mounted_ns, mounted.cpu_total_ns, mounted.cpu_ns) == (800, None, None)
    (unreadable,) = by_name["unreadable"]
    assert (unreadable.cpu_total_ns, unreadable.mounted_ns, unreadable.cpu_ns) == (None, None, None)
    ends = [e for th in trace for e in th.events if e.kind in ("end_cpu_total", "end_mounted")]
    assert sorted((e.kind, -1 if e.value is None else e.value, e.thrown) for e in ends) == [
        ("end_cpu_total", -1, False), ("end_cpu_total", 300, False), ("end_cpu_total", 2500, True),
        ("end_mounted", 800, False)]
    # The same pairing over events picked by hand: the figure travels in the value.
    main = next(th for th in trace if th.tid == 302)
    picked = threadtime.trace.pair_intervals(main.events)
    assert [(i.cpu_total_ns, i.mounted_ns) for i in picked] == [(None, 800), (None, None), (300, None)]


@needs_seeds
def test_measured_ends_in_pandas():
    pd = pytest.importorskip("pandas")
    df = read(SEEDS / "golden-measured.trace").to_pandas()
    ends = df[df.kind.isin(["end_cpu_total", "end_mounted"])]
    assert len(ends) == 4
    assert sorted(v for v in ends.value if v is not pd.NA) == [300, 800, 2500]


@needs_cli
def test_cli_and_python_find_the_same_pairs(tmp_path):
    paths = [DATA / "java_events.trace", DATA / "java_vthreads.trace", *sorted(SEEDS.glob("*.trace")),
             *demo_traces(tmp_path)]
    crossing = 0
    for path in paths:
        trace = read(path)
        want = chrome_pairs(path)
        assert python_pairs(trace) == want, path
        # The pairs are listed under the thread that recorded the begin.
        assert sum(len(th.intervals()) for th in trace) == sum(want.values()), path
        crossing += sum(1 for th in trace for i in th.intervals() if i.end_tid != th.tid)
    # The corpus holds a virtual thread's interval that begins on one carrier
    # and ends on another: a per-OS-thread pairing misses it.
    assert crossing >= 1


@needs_cli
def test_summary_counts_the_same_pairs(tmp_path):
    """--summary's pair counts per id are the pairs read_trace() finds."""
    for path in [DATA / "java_vthreads.trace", *sorted(SEEDS.glob("golden-1.1*.trace")), *demo_traces(tmp_path)]:
        out = subprocess.run([CLI, "dump", "--summary", "--format", "json", str(path)], capture_output=True)
        rows = json.loads(out.stdout)["rows"]
        cli = Counter()
        for r in rows:
            cli[tuple(sorted(r["ids"]))] += r["percentile_calls"]
        py = Counter()
        by_id = {i: tuple(sorted(r["ids"])) for r in rows for i in r["ids"]}
        for i in read(path).intervals():
            py[by_id[i.id]] += 1
        assert +cli == +py, path


def test_virtual_threads_pairs_across_carriers():
    """A Java agent's trace: 20 virtual threads x 10 probed calls that sleep
    inside. Every call is a pair, also those that ended on another carrier
    (a pairing per OS thread found 193 of the 200 here)."""
    trace = threadtime.read_trace(DATA / "java_vthreads.trace")
    pairs = trace.intervals()
    assert len(pairs) == 200 and sum(len(th.intervals()) for th in trace) == 200
    assert all(i.vthread is not None and trace.names[i.id] == "JavaVthreads::work" for i in pairs)
    assert len({i.vthread for i in pairs}) == 20
    assert any(i.end_tid != th.tid for th in trace for i in th.intervals())
    per_os_thread = sum(len(threadtime.trace.pair_intervals(th.events)) for th in trace)
    assert per_os_thread < 200


def test_a_flipped_byte_inside_a_record_is_reported(tmp_path):
    """Turn one record in the middle of a thread into an unknown kind: the
    reader drops it and says so (Trace.damaged, a warning, the count)."""
    path = tmp_path / "flip.trace"
    script = textwrap.dedent(f"""
        import threadtime
        threadtime.start_log(ring_records=64)
        for i in range(5):
            threadtime.event(1, i)
        threadtime.dump({str(path)!r})
    """)
    subprocess.run([sys.executable, "-c", script], check=True)
    intact = threadtime.read_trace(path)
    (th,) = [t for t in intact if len(t.events) == 5]
    assert intact.damaged is None and th.damaged == 0
    data = bytearray(path.read_bytes())
    third = bytes(struct_w1(th.events[2]))
    at = data.find(third)
    assert at > 0
    data[at + 4] ^= 0xFF  # the kind byte of w1
    path.write_bytes(bytes(data))
    with pytest.warns(threadtime.TraceDamagedWarning, match="1 records between intact ones"):
        trace = threadtime.read_trace(path)
    (th,) = [t for t in trace if t.tid == th.tid]
    assert th.damaged == 1 and len(th.events) == 4 and "dropped" in trace.damaged
    if CLI:
        out = subprocess.run([CLI, "dump", str(path)], capture_output=True, text=True)
        assert out.returncode == 1 and "(1 of them dropped between intact ones)" in out.stdout
        assert "were dropped" in out.stderr


def struct_w1(ev) -> bytes:
    """w1 of a value record as the core writes it: id, kind, sequence tag."""
    import struct
    kind = threadtime.trace.KINDS.index(ev.kind) + 1
    return struct.pack("<Q", ev.id | (kind << 32) | ((ev.seq & 0xFFFFFF) << 40))


def test_cpu_intervals_carry_their_run_queue_wait(tmp_path):
    # Recorded with THREADTIME_CPU_WAIT=1 in a process of its own: each CPU
    # interval's wait is the run_wait record before its end minus the one
    # after its begin, and both come from the thread's schedstat, which the
    # recording thread also reads itself here (outside the log) around the
    # interval: the pair's wait lies between 0 and that outside difference.
    import json
    import os
    import subprocess
    import sys
    import textwrap

    path = tmp_path / "wait.trace"
    code = textwrap.dedent(f"""
        import json, threadtime
        threadtime.start_log()
        out = []
        for i in range(3):
            a = threadtime.sched().run_wait_ns
            with threadtime.interval(5, cpu=True):
                sum(range(200_000))
            out.append(threadtime.sched().run_wait_ns - a)
        threadtime.stop_log()
        threadtime.dump({str(path)!r})
        print(json.dumps(out))
    """)
    env = dict(os.environ, THREADTIME_CPU_WAIT="1")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    outside = json.loads(run.stdout)
    trace = threadtime.read_trace(path)
    pairs = [p for th in trace for p in th.intervals() if p.id == 5]
    assert len(pairs) == 3
    for p, bound in zip(pairs, outside):
        assert p.run_wait_ns is not None and 0 <= p.run_wait_ns <= bound
        assert p.cpu_ns is not None
    waits = [e for th in trace for e in th.events if e.kind == "run_wait"]
    assert len(waits) == 6 and all(e.id == 5 and e.value is not None for e in waits)
    # Without the option, no record and no figure.
    plain = tmp_path / "plain.trace"
    run = subprocess.run([sys.executable, "-c", code.replace(str(path), str(plain))],
                         env=dict(os.environ, THREADTIME_CPU_WAIT="0"), capture_output=True, text=True, check=True)
    assert all(p.run_wait_ns is None for th in threadtime.read_trace(plain) for p in th.intervals())
