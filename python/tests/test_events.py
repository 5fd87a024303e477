"""The event log from Python: what event(), interval() and log_thread_name()
record, read back from the dump; errors; threads."""
import concurrent.futures
import errno
import struct
import threading
from pathlib import Path

import pytest

import threadtime

# The trace file as docs/trace-format.md describes it (version 1, little
# endian): a 128-byte header, then per thread a 128-byte section header and
# its 32-byte records. Read here independently of the C reader, so the test
# checks the writer against the documented format.
MAGIC = b"TTRACE\x1a\n"
INSTANT, TEXT, VALUE, BEGIN, END, BEGIN_CPU, END_CPU = range(1, 8)


def read_trace(path: Path) -> dict[int, tuple[str, list[tuple[int, int, bytes]]]]:
    """tid -> (thread name, [(event id, kind, 16 payload bytes), ...])."""
    data = path.read_bytes()
    assert data[:8] == MAGIC
    major, _, header_size, section_size, record_size, _, _, sections = struct.unpack_from("<HHIIIIII", data, 8)
    assert major == 1
    threads = {}
    off = header_size
    for _ in range(sections):
        name = data[off + 32:off + 48].split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        _, _, tid, stored = struct.unpack_from("<4I", data, off + 48)
        off += section_size
        records = []
        for i in range(stored):
            _, w1 = struct.unpack_from("<2Q", data, off + i * record_size)
            payload = data[off + i * record_size + 16:off + (i + 1) * record_size]
            records.append((w1 & 0xFFFFFFFF, (w1 >> 32) & 0xFF, payload))
        off += stored * record_size
        threads[tid] = (name, records)
    return threads


def log_running() -> bool:
    return threadtime.log_info().running


def u64(payload: bytes, word: int = 0) -> int:
    return struct.unpack_from("<Q", payload, 8 * word)[0]


@pytest.fixture
def log(tmp_path):
    """Starts the log; yields a function that stops it and returns the dump."""
    threadtime.start_log(ring_records=1024)

    def finish() -> dict:
        threadtime.stop_log()
        path = tmp_path / "events.trace"
        threadtime.dump(path)
        return read_trace(path)

    yield finish
    if log_running():
        threadtime.stop_log()


def own(trace: dict, tid: int | None = None) -> list[tuple[int, int, bytes]]:
    return trace[tid or threading.get_native_id()][1]


def test_events_text_values_and_intervals(log):
    threadtime.event(100)
    threadtime.event(101, "hello")
    threadtime.event(102, b"raw) bytes")
    threadtime.event(103, 2**64 - 1)
    threadtime.event(104, "x" * 40)
    threadtime.event(105, "é" * 10)
    with threadtime.interval(106):
        threadtime.event(107, 7)
    records = own(log())
    assert [(i, k) for i, k, _ in records] == [
        (100, INSTANT), (101, TEXT), (102, TEXT), (103, VALUE), (104, TEXT), (105, TEXT),
        (106, BEGIN), (107, VALUE), (106, END)]
    texts = {i: p for i, k, p in records if k == TEXT}
    assert texts[101] == b"hello".ljust(16, b"\0")
    assert texts[102] == b"raw) bytes".ljust(16, b"\0")
    assert texts[104] == b"x" * 16
    assert texts[105] == ("é" * 8).encode()
    assert u64(records[3][2]) == 2**64 - 1 and u64(records[7][2]) == 7


def test_interval_ends_on_exception_and_is_reusable(log):
    span = threadtime.interval(200)
    assert span.id == 200
    with pytest.raises(KeyError):
        with span as entered:
            assert entered is span
            raise KeyError("propagates")
    with span:
        with span:
            pass
    kinds = [k for i, k, _ in own(log()) if i == 200]
    assert kinds == [BEGIN, END, BEGIN, BEGIN, END, END]


def test_cpu_interval_records_cpu_times(log):
    with threadtime.interval(300, cpu=True):
        end = threadtime.total_ns() + 3_000_000
        while threadtime.total_ns() < end:
            pass
    (begin_id, begin_kind, begin), (end_id, end_kind, after) = own(log())
    assert (begin_id, begin_kind, end_id, end_kind) == (300, BEGIN_CPU, 300, END_CPU)
    # user + system, each never decreasing, grew by the work done inside.
    assert u64(after, 0) >= u64(begin, 0) and u64(after, 1) >= u64(begin, 1)
    assert u64(after, 0) + u64(after, 1) >= u64(begin, 0) + u64(begin, 1) + 2_000_000


def test_thread_names_and_threads(log):
    threadtime.log_thread_name("py) main (1")
    threadtime.event(400)

    def work(n: int) -> int:
        threadtime.event(401, n)
        return threading.get_native_id()

    t = threading.Thread(target=work, args=(0xFFFF,))
    t.start()
    t.join()
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        workers = set(pool.map(work, range(30)))
    trace = log()
    assert trace[threading.get_native_id()][0] == "py) main (1"
    assert own(trace) == [(400, INSTANT, bytes(16))]
    assert [u64(p) for _, _, p in own(trace, t.native_id)] == [0xFFFF]
    pooled = sorted(u64(p) for nid in workers for i, _, p in own(trace, nid) if i == 401)
    assert pooled == list(range(30))


def test_nothing_is_recorded_while_stopped(log, tmp_path):
    threadtime.event(500)
    log()
    threadtime.event(501)
    threadtime.dump(tmp_path / "after.trace")
    ids = [i for i, _, _ in own(read_trace(tmp_path / "after.trace"))]
    assert ids == [500]


def test_log_info_and_crash_file(tmp_path):
    crash = tmp_path / "crash.trace"
    threadtime.start_log(crash_file=crash, ring_records=100, max_threads=8, clock="monotonic")
    try:
        info = threadtime.log_info()
        assert info.running and info.crash_safe
        assert info.clock == "monotonic" and info.counter_hz == 0.0
        assert info.ring_records == 128 and info.max_threads == 8
        threadtime.event(600, "crash-safe")
        assert crash.read_bytes()[:8] == MAGIC
    finally:
        threadtime.stop_log()
    assert not log_running()


def test_log_errors(log, tmp_path):
    with pytest.raises(threadtime.LogRunningError, match="already running") as info:
        threadtime.start_log()
    assert info.value.errno == errno.EALREADY
    with pytest.raises(FileNotFoundError) as info:
        threadtime.dump(tmp_path / "missing" / "x.trace")
    assert info.value.filename == tmp_path / "missing" / "x.trace"
    log()
    threadtime.stop_log()  # a second stop does nothing
    with pytest.raises(ProcessLookupError, match="event log is not running"):
        threadtime.log_thread_name("x")


@pytest.mark.parametrize(
    "kwargs, error, text",
    [({"clock": "tsc"}, ValueError, "unknown clock"),
     ({"ring_records": 1 << 30}, ValueError, r"ring_records must be 0 \(the default\) or 1 to 8388608, not 1073741824"),
     ({"ring_records": -1}, ValueError, r"ring_records must be 0 \(the default\) or 1 to 8388608, not -1"),
     ({"max_threads": 10**6}, ValueError, r"max_threads must be 0 \(the default\) or 1 to 65536, not 1000000"),
     ({"max_threads": 2**70}, ValueError, "max_threads must be"),
     ({"ring_records": 1.5}, TypeError, "ring_records must be an int"),
     ({"crash_file": ""}, ValueError, "crash_file is empty"),
     ({"bogus": 1}, TypeError, "bogus"), ({"crash_file": 5}, TypeError, "int")],
)
def test_start_log_rejects_bad_options(kwargs, error, text):
    with pytest.raises(error, match=text):
        threadtime.start_log(**kwargs)
    assert not log_running()


@pytest.mark.parametrize(
    "args, error, text",
    [((), TypeError, "1 or 2 arguments"), ((2**32,), ValueError, "0 to 4294967295, not 4294967296"),
     ((2**70,), ValueError, "0 to 4294967295"), ((-1,), ValueError, "0 to 4294967295, not -1"),
     ((True,), TypeError, "not a bool"), ((1, -5), ValueError, "0 to 2\\*\\*64-1, not -5"),
     ((1, 2**64), ValueError, "0 to 2\\*\\*64-1"), ((1, 1.5), TypeError, "str, bytes or int"),
     ((1, 2, 3), TypeError, "1 or 2 arguments"), ((1.0,), TypeError, "float"), (("",), ValueError, "1 to 255 bytes"),
     ((1, "a\0b"), ValueError, "NUL"), ((1, b"\0\xffbytes"), ValueError, "NUL")],
)
def test_event_rejects_bad_arguments(args, error, text):
    with pytest.raises(error, match=text):
        threadtime.event(*args)


def test_event_accepts_the_ends_of_its_ranges():
    threadtime.event(0, 0)
    threadtime.event(2**32 - 1, 2**64 - 1)


@pytest.mark.parametrize("args, error", [((), TypeError), ((2**32,), ValueError), ((-1,), ValueError),
                                         ((True,), TypeError), ((1.0,), TypeError)])
def test_interval_rejects_bad_ids(args, error):
    with pytest.raises(error):
        threadtime.interval(*args)


@pytest.mark.parametrize("make", [threadtime.interval, threadtime.event])
@pytest.mark.parametrize("bad, shown", [(1.5, "1.5 (<class 'float'>)"), (None, "None (<class 'NoneType'>)")])
def test_an_id_that_is_no_int_says_what_an_id_is(make, bad, shown):
    """Not Python's "'float' object cannot be interpreted as an integer":
    what an id may be, and what was given."""
    with pytest.raises(TypeError) as e:
        make(bad)
    assert str(e.value) == f"an event id must be an int (0 to 4294967295) or a str name, not {shown}"


def name_table(path: Path) -> dict[int, str]:
    """The name table of a 1.1 trace, read from the documented layout: the
    header's names_offset and names_size (bytes 128..143), then entries of
    a u64 word (id, length) and the UTF-8 bytes padded to 8."""
    data = path.read_bytes()
    minor, header_size = struct.unpack_from("<HI", data, 10)
    assert minor >= 1 and header_size >= 192
    offset, size = struct.unpack_from("<QQ", data, 128)
    names, off = {}, offset
    while off + 8 <= offset + size:
        (word,) = struct.unpack_from("<Q", data, off)
        if word == 0:
            break
        length = word >> 32
        names[word & 0xFFFFFFFF] = data[off + 8:off + 8 + length].decode("utf-8")
        off += 8 + (length + 7) // 8 * 8
    return names


def test_event_name_reaches_the_trace(tmp_path):
    threadtime.event_name(900, "before the start")
    threadtime.start_log(ring_records=64)
    try:
        threadtime.event_name(901, "caf\u00e9 \U0001F600")
        threadtime.event_name(900, "renamed")
        threadtime.event(900)
    finally:
        threadtime.stop_log()
    path = tmp_path / "names.trace"
    threadtime.dump(path)
    names = name_table(path)
    assert names[900] == "renamed"
    assert names[901] == "caf\u00e9 \U0001F600"


@pytest.mark.parametrize(
    "args, error",
    [((1,), TypeError), ((1, b"bytes"), TypeError), ((2**32, "x"), ValueError), (("x", "x"), TypeError), ((1, ""), ValueError),
     ((1, "x" * 256), ValueError), ((1, "a\0b"), ValueError), ((1, "\udc80"), UnicodeEncodeError)],
)
def test_event_name_rejects_bad_arguments(args, error):
    with pytest.raises(error):
        threadtime.event_name(*args)
