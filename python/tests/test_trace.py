"""read_trace(): files written by C, Java and Python read back through the
core's reader, checked event by event against `threadtime dump --format
csv` on the same file; damaged, cut and live crash-safe files; to_pandas()."""
import collections.abc
import csv
import errno
import io
import os
import struct
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from conftest import wait_gone

import threadtime

DATA = Path(__file__).parent / "data"
# Set by `make test-python` (python/python.mk): the C build's tools.
CLI = os.environ.get("THREADTIME_CLI")
EVENT_DEMO = os.environ.get("THREADTIME_EVENT_DEMO")
needs_cli = pytest.mark.skipif(not CLI, reason="THREADTIME_CLI is not set (make test-python sets it)")


def dump_csv(path: Path) -> tuple[int, list[list[str]], str]:
    """`threadtime dump --format csv`: exit status, rows, standard error."""
    out = subprocess.run([CLI, "dump", "--format", "csv", str(path)], capture_output=True)
    text = out.stdout.decode("utf-8", "surrogateescape")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    return out.returncode, rows[1:], out.stderr.decode()


def escaped(text: str) -> str:
    """A string as the CLI writes it in CSV, text and --summary output:
    control characters (C0, DEL, C1) and the backslash as \\xNN of their
    UTF-8 bytes."""
    return "".join("".join(f"\\x{b:02x}" for b in c.encode()) if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f
                   or c == "\\" else c for c in text)


def as_csv_rows(trace: threadtime.Trace) -> list[list[str]]:
    """What the CLI's CSV holds, rebuilt from read_trace()'s answer."""
    rows = []
    for th in trace:
        prev = None
        for ev in th.events:
            rows.append([str(th.tid), escaped(th.name), "" if ev.vthread is None else str(ev.vthread), str(ev.seq),
                         str(ev.t_ns), str(ev.t_ns - prev if prev is not None else 0), ev.kind, str(ev.id),
                         escaped(ev.name or ""), "" if ev.value is None else str(ev.value), escaped(ev.text or ""),
                         "" if ev.cpu_user_ns is None else str(ev.cpu_user_ns),
                         "" if ev.cpu_system_ns is None else str(ev.cpu_system_ns), "1" if ev.thrown else "",
                         escaped(trace.vthread_names.get(ev.vthread, "")) if ev.vthread is not None else ""])
            prev = ev.t_ns
    return rows


def assert_same_as_cli(path: Path, trace: threadtime.Trace) -> None:
    status, rows, _ = dump_csv(path)
    assert status == (1 if trace.damaged else 0)
    assert rows == as_csv_rows(trace)


@pytest.fixture
def python_trace(tmp_path) -> Path:
    """A dump written by this process: every kind of event, two threads."""
    threadtime.start_log(ring_records=256)
    try:
        threadtime.log_thread_name("py-main")
        threadtime.event(1)
        threadtime.event(2, "héllo, \"world\"")
        threadtime.event(3, 2**64 - 1)
        with threadtime.interval(4, cpu=True):
            with threadtime.interval(5):
                threadtime.event(6, b"a,b\nc")

        def work():
            threadtime.log_thread_name("py-worker")
            threadtime.event(7, 7)

        t = threading.Thread(target=work)
        t.start()
        wait_gone(t)  # its ring is marked exited as the OS thread ends, after join()
    finally:
        threadtime.stop_log()
    path = tmp_path / "python.trace"
    threadtime.dump(path)
    return path


def test_python_written_trace_reads_back_as_recorded(python_trace):
    trace = threadtime.read_trace(python_trace)
    assert trace.damaged is None and not trace.crash_safe and trace.pid == os.getpid()
    assert trace.format == "1.2" and trace.end_mono_ns > trace.start_mono_ns
    main = next(th for th in trace if th.tid == threading.get_native_id())
    assert (main.name, main.state, main.overwritten, main.incomplete) == ("py-main", "live", 0, 0)
    kinds = [(e.kind, e.id) for e in main.events]
    assert kinds == [("instant", 1), ("text", 2), ("value", 3), ("begin_cpu", 4), ("begin", 5),
                     ("text", 6), ("end", 5), ("end_cpu", 4)]
    ev = main.events
    assert ev[1].text == "héllo, \"world\"" and ev[2].value == 2**64 - 1 and ev[5].text == "a,b\nc"
    assert ev[0].value is None and ev[0].text is None and ev[0].cpu_user_ns is None
    assert ev[3].cpu_user_ns is not None and ev[-1].cpu_user_ns >= ev[3].cpu_user_ns
    assert [e.seq for e in ev] == list(range(8)) and ev[-1] == ev[7] and ev[2:4] == [ev[2], ev[3]]
    assert all(a.t_ns <= b.t_ns for a, b in zip(ev, ev[1:]))
    (worker,) = [th for th in trace if th.name == "py-worker"]
    assert worker.state == "exited" and [(e.kind, e.value) for e in worker.events] == [("value", 7)]
    spans = main.intervals()
    assert [(s.id, s.cpu_ns is not None) for s in spans] == [(4, True), (5, False)]
    assert spans[0].start_ns <= spans[1].start_ns <= spans[1].end_ns <= spans[0].end_ns
    with pytest.raises(IndexError):
        ev[8]


def test_events_is_a_sequence(python_trace):
    """Events behaves as a collections.abc.Sequence."""
    trace = threadtime.read_trace(python_trace)
    ev = next(th for th in trace if th.tid == threading.get_native_id()).events
    every = [ev[i] for i in range(len(ev))]
    assert isinstance(ev, collections.abc.Sequence) and len(ev) == 8
    assert ev[-1] == every[7] and ev[-8] == every[0]
    with pytest.raises(IndexError):
        ev[-9]
    assert ev[1:3] == every[1:3] and ev[-2:] == every[-2:] and ev[::-3] == every[::-3] and ev[5:2] == []
    assert list(ev) == every and list(reversed(ev)) == every[::-1]
    assert every[3] in ev and "not an event" not in ev and None not in ev
    assert ev.index(every[5]) == 5 and ev.index(every[5], 2, -1) == 5 and ev.index(value=every[5], start=-3) == 5
    with pytest.raises(ValueError):
        ev.index(every[5], 6)
    with pytest.raises(ValueError):
        ev.index("not an event")
    assert ev.count(every[0]) == 1 and ev.count(value=every[0]) == 1 and ev.count(None) == 0


def test_whole_thread_names(tmp_path):
    """A thread's name is kept whole (format 1.2), not cut
    to the kernel's 15 bytes; a name the core refuses raises and changes
    nothing."""
    long_name = "py-main, a name longer than fifteen bytes: \u00e9t\u00e9"
    threadtime.start_log(ring_records=64)
    try:
        threadtime.log_thread_name(long_name)
        threadtime.event(1)
        with pytest.raises(OSError) as e:
            threadtime.log_thread_name("x" * 256)
        assert e.value.errno == errno.EINVAL
        with pytest.raises(OSError):
            threadtime.log_thread_name("")
    finally:
        threadtime.stop_log()
    path = tmp_path / "names.trace"
    threadtime.dump(path)
    trace = threadtime.read_trace(path)
    assert trace.format == "1.2" and trace.vthread_names == {}
    (main,) = [th for th in trace if th.tid == threading.get_native_id()]
    assert main.name == long_name


def test_java_names_trace():
    """Made by data/make_java_names_trace.sh: the -javaagent names main, a
    platform thread, a virtual thread and its carrier with their Java names."""
    trace = threadtime.read_trace(DATA / "java_names.trace")
    assert trace.format == "1.2" and trace.damaged is None
    names = {th.name for th in trace}
    assert {"main", "main-worker-with-a-long-name", "event-log-thread, \u00e9t\u00e9"} <= names
    assert any(n.startswith("ForkJoinPool-1-worker-") for n in names), names
    assert list(trace.vthread_names.values()) == ["worker-v"]
    (vthread,) = trace.vthread_names
    assert any(e.vthread == vthread for th in trace for e in th.events)


@needs_cli
def test_java_names_trace_matches_the_c_tool():
    """The virtual thread's name is in the CLI's CSV on each of its events."""
    path = DATA / "java_names.trace"
    assert_same_as_cli(path, threadtime.read_trace(path))
    _, rows, _ = dump_csv(path)
    assert {r[-1] for r in rows if r[2]} == {"worker-v"}
    assert {r[-1] for r in rows if not r[2]} == {""}


@needs_cli
def test_python_written_trace_matches_the_c_tool(python_trace):
    assert_same_as_cli(python_trace, threadtime.read_trace(python_trace))


@needs_cli
@pytest.mark.skipif(not EVENT_DEMO, reason="THREADTIME_EVENT_DEMO is not set (make test-python sets it)")
def test_c_written_trace_matches_the_c_tool(tmp_path):
    path = tmp_path / "demo.trace"
    subprocess.run([EVENT_DEMO, str(path)], check=True, capture_output=True)
    trace = threadtime.read_trace(path)
    assert trace.damaged is None and trace.events > 0
    # The demo records CPU intervals and literals: both decode.
    kinds = {e.kind for th in trace for e in th.events}
    assert {"begin_cpu", "end_cpu", "literal"} <= kinds
    assert any(s.cpu_ns for th in trace for s in th.intervals())
    assert_same_as_cli(path, trace)


def test_java_written_trace():
    # Made by data/make_java_trace.sh (io.threadtime.EventLog on a JVM).
    trace = threadtime.read_trace(DATA / "java_events.trace")
    assert trace.damaged is None
    by_name = {th.name: th for th in trace}
    assert [(e.kind, e.id, e.text, e.value) for e in by_name["java-main"].events] == [
        ("instant", 1, None, None), ("text", 2, "from Java", None), ("value", 3, None, 2**64 - 1)]
    worker = by_name["java-worker"]
    assert worker.state == "exited"
    assert [(e.kind, e.id, e.text) for e in worker.events] == [("begin", 4, None), ("text", 5, "inside"),
                                                               ("end", 4, None)]
    if CLI:
        assert_same_as_cli(DATA / "java_events.trace", trace)


@needs_cli
def test_cut_file_gives_its_intact_part_with_the_c_tools_message(python_trace, tmp_path):
    data = python_trace.read_bytes()
    cut = tmp_path / "cut.trace"
    header_size = struct.unpack_from("<I", data, 12)[0]
    cut.write_bytes(data[:header_size + 128 + 3 * 32 + 5])  # the first section, three records and a bit
    with pytest.warns(threadtime.TraceDamagedWarning, match="intact part was read"):
        trace = threadtime.read_trace(cut)
    assert "truncated: thread section 1 of 2" in trace.damaged
    assert len(trace.threads) == 1 and len(trace.threads[0].events) == 3
    status, rows, err = dump_csv(cut)
    assert status == 1 and trace.damaged in err
    assert rows == as_csv_rows(trace)
    with pytest.raises(threadtime.TraceError) as info:
        threadtime.read_trace(cut, strict=True)
    assert info.value.errno == errno.EINVAL and info.value.strerror == trace.damaged
    assert info.value.filename == str(cut)


@needs_cli
@pytest.mark.parametrize("make, message", [
    (lambda d: b"not a trace at all", "no TTRACE signature"),
    (lambda d: d[:100], "ends inside its 128-byte header"),
    (lambda d: d[:8] + b"\x07" + d[9:], "trace format version 7.2"),
    (lambda d: b"", "no TTRACE signature"),
])
def test_unusable_file_raises_the_c_tools_error(python_trace, tmp_path, make, message):
    bad = tmp_path / "bad.trace"
    bad.write_bytes(make(python_trace.read_bytes()))
    with pytest.raises(threadtime.TraceError, match=message) as info:
        threadtime.read_trace(bad)
    assert isinstance(info.value, OSError) and info.value.errno == errno.EINVAL
    status, _, err = dump_csv(bad)
    assert status == 2 and info.value.strerror in err


def test_damaged_section_signature(python_trace, tmp_path):
    data = bytearray(python_trace.read_bytes())
    data[struct.unpack_from("<I", data, 12)[0] + 48] ^= 0xFF  # the first section's magic
    bad = tmp_path / "bad.trace"
    bad.write_bytes(data)
    with pytest.warns(threadtime.TraceDamagedWarning):
        trace = threadtime.read_trace(bad)
    assert trace.threads == [] and "has no section signature" in trace.damaged


def test_files_that_cannot_be_read(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        threadtime.read_trace(tmp_path / "missing.trace")
    assert info.value.filename == tmp_path / "missing.trace"
    with pytest.raises(IsADirectoryError):
        threadtime.read_trace(tmp_path)
    with pytest.raises(TypeError):
        threadtime.read_trace(5)


# Reads sys.argv[1] with at most 512 MiB more address space than it starts
# with; prints the reader's error, or "read", and how much the peak RSS grew.
BOUNDED_READ = """
import resource, sys
import threadtime
with open("/proc/self/statm") as f:
    vm = int(f.read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20), resource.RLIM_INFINITY))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    threadtime.read_trace(sys.argv[1])
    print("read")
except threadtime.TraceError as e:
    print(e.strerror)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
"""


@pytest.mark.parametrize("kind", ["sparse", "dev-zero"])
def test_a_huge_file_that_is_no_trace_is_refused_on_its_header(tmp_path, kind):
    """A 4 GiB file that is no trace (sparse: no disk used) and /dev/zero,
    which never ends: the header is checked before the rest is read, so
    both get the reader's error and memory stays small (the whole file was
    read first: 4 GiB, and /dev/zero without end)."""
    if kind == "sparse":
        path = tmp_path / "big.bin"
        with open(path, "wb") as f:
            f.write(b"hello, not a trace")
            f.truncate(4 << 30)
    else:
        path = Path("/dev/zero")  # only read
    run = subprocess.run([sys.executable, "-c", BOUNDED_READ, str(path)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    error, grown = run.stdout.splitlines()
    assert error == "not a threadtime trace file (no TTRACE signature at the start)"
    assert int(grown) < 64 << 20


def test_a_trace_through_a_pipe_reads_whole(tmp_path):
    """A stream has no size and cannot be read twice: the header's bytes
    and the rest make one file (a trace larger than the header's read)."""
    threadtime.start_log(ring_records=8192)
    try:
        for i in range(6000):
            threadtime.event(9, i)
    finally:
        threadtime.stop_log()
    path = tmp_path / "big.trace"
    threadtime.dump(path)
    assert path.stat().st_size > 65536
    # A pipe whose write end is open before the reader opens the read end
    # again through /proc (a FIFO's writer might come after: an empty read).
    r, w = os.pipe()

    def feed():
        with open(w, "wb") as f:
            f.write(path.read_bytes())

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        piped = threadtime.read_trace(f"/proc/self/fd/{r}")
    finally:
        os.close(r)  # first: a writer left with a full pipe then fails instead of waiting
        writer.join()
    direct = threadtime.read_trace(path)
    assert piped.damaged is None and piped.events == direct.events
    assert [list(th.events) for th in piped] == [list(th.events) for th in direct]


def test_live_crash_safe_file(tmp_path):
    path = tmp_path / "live.trace"
    threadtime.start_log(crash_file=path, ring_records=64, max_threads=4)
    try:
        for i in range(100):  # wraps the 64-record ring
            threadtime.event(9, i)
        trace = threadtime.read_trace(path)
    finally:
        threadtime.stop_log()
    assert trace.crash_safe and trace.end_mono_ns is None and trace.damaged is None
    (me,) = [th for th in trace if th.tid == threading.get_native_id()]
    assert me.state == "live" and me.overwritten == 36
    assert [e.value for e in me.events] == list(range(36, 100))


@needs_cli
def test_crash_safe_file_of_a_dead_process(tmp_path):
    path = tmp_path / "crashed.trace"
    script = textwrap.dedent(f"""
        import os, threadtime
        threadtime.start_log(crash_file={str(path)!r}, ring_records=64)
        threadtime.log_thread_name("doomed")
        threadtime.event(1, "last words")
        os._exit(3)
    """)
    assert subprocess.run([sys.executable, "-c", script]).returncode == 3
    trace = threadtime.read_trace(path)
    assert trace.crash_safe and trace.damaged is None
    (th,) = trace.threads
    assert th.name == "doomed" and [(e.kind, e.text) for e in th.events] == [("text", "last words")]
    assert_same_as_cli(path, trace)


def test_to_pandas(python_trace):
    pd = pytest.importorskip("pandas")
    trace = threadtime.read_trace(python_trace)
    df = trace.to_pandas()
    assert len(df) == trace.events
    assert list(df.columns) == ["tid", "thread", "vthread", "seq", "t_ns", "kind", "id", "name", "value", "text",
                                "cpu_user_ns", "cpu_system_ns", "thrown"]
    rows = [(th.tid, th.name, e.vthread, e.seq, e.t_ns, e.kind, e.id, e.name, e.value, e.text, e.cpu_user_ns,
             e.cpu_system_ns, e.thrown)
            for th in trace for e in th.events]
    got = [tuple(None if v is pd.NA or (isinstance(v, float) and v != v) else v for v in r)
           for r in df.itertuples(index=False)]
    assert got == rows
    assert str(df["value"].dtype) == "UInt64" and df["value"].max() == 2**64 - 1


def test_pandas_is_needed_only_by_to_pandas(python_trace):
    script = textwrap.dedent(f"""
        import sys
        sys.modules["pandas"] = None  # as if pandas were not installed
        import threadtime
        trace = threadtime.read_trace({str(python_trace)!r})
        assert trace.events == 9
        try:
            trace.to_pandas()
        except ImportError as e:
            print(e)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "threadtime[pandas]" in out.stdout


def test_any_damage_gives_an_answer_or_trace_error(python_trace, tmp_path):
    """Seeded random damage (flipped bytes, cuts): never a crash, and every
    event read back from what is left stays decodable, also as columns."""
    import random
    import warnings

    rng = random.Random(13)
    data = python_trace.read_bytes()
    bad = tmp_path / "bad.trace"
    for _ in range(300):
        mutated = bytearray(data[:rng.randrange(len(data) + 1)] if rng.random() < 0.3 else data)
        for _ in range(rng.randrange(1, 8)):
            if mutated:
                mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        bad.write_bytes(mutated)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", threadtime.TraceDamagedWarning)
            try:
                trace = threadtime.read_trace(bad)
            except threadtime.TraceError as e:
                assert e.errno == errno.EINVAL and e.strerror
                continue
        events = [ev for th in trace for ev in th.events]
        assert len(events) == trace.events
        assert all(ev.kind in threadtime.trace.KINDS for ev in events)
        cols = threadtime._core._trace_columns(trace._data)
        assert len(cols["t_ns"]) == 8 * len(events) and len(cols["text"]) == 4 * len(events)


@needs_cli
@pytest.mark.skipif(not EVENT_DEMO, reason="THREADTIME_EVENT_DEMO is not set (make test-python sets it)")
def test_names_virtual_threads_and_thrown_ends(tmp_path):
    """A trace from the C demo: every id named, a virtual thread whose
    request starts on one carrier and ends on another; read_trace and
    to_pandas agree with the CLI's CSV, names and vthread columns included."""
    path = tmp_path / "demo.trace"
    subprocess.run([EVENT_DEMO, str(path)], check=True, capture_output=True)
    trace = threadtime.read_trace(path)
    assert trace.format == "1.2" and trace.names[7] == "request" and trace.names[6] == "checksum()"
    carriers = {th.name: th for th in trace if th.name.startswith("carrier-")}
    assert set(carriers) == {"carrier-0", "carrier-1"}
    for th in carriers.values():
        assert [e.kind for e in th.events][0] == "mount" and [e.kind for e in th.events][-1] == "unmount"
        assert all(e.vthread == 101 for e in th.events)
    begin = [e for e in carriers["carrier-0"].events if e.kind == "begin_cpu"]
    end = [e for e in carriers["carrier-1"].events if e.kind == "end_cpu"]
    assert [(e.id, e.name) for e in begin + end] == [(7, "request"), (7, "request")]
    assert not end[0].thrown
    main = next(th for th in trace if th.name == "main")
    assert all(e.vthread is None for e in main.events)
    assert_same_as_cli(path, trace)
    pd = pytest.importorskip("pandas")
    df = trace.to_pandas()
    assert set(df[df["thread"].isin(["carrier-0", "carrier-1"])]["vthread"]) == {101}
    assert df["vthread"].isna().sum() == len(df) - 8
    assert set(df["name"].dropna()) <= set(trace.names.values())
    assert (df[df["id"] == 6]["name"] == "checksum()").all()
