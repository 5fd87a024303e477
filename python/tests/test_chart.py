"""The charts: of `threadtime bench --json` and of a trace file; files,
structure, errors, and the HTML pages rendered by headless Chromium."""
import copy
import io
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image  # matplotlib depends on Pillow and numpy

import threadtime
from threadtime import chart

SAMPLE = Path(__file__).parent / "data" / "bench_sample.json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def sample() -> dict:
    return json.loads(SAMPLE.read_text())


def _colour_pixels(png: Path, rgb: str, tolerance: int = 40) -> int:
    """How many pixels of png are within tolerance of the colour #rrggbb."""
    want = np.array([int(rgb[i:i + 2], 16) for i in (1, 3, 5)])
    pixels = np.asarray(Image.open(png).convert("RGB"), dtype=int)
    return int((np.abs(pixels - want) <= tolerance).all(axis=2).sum())


def _assert_chart_drawn(png: Path) -> None:
    for _, name, _, colour in chart.MARKS:
        assert _colour_pixels(png, colour) > 20, f"no {name} markers in {png}"
    assert _colour_pixels(png, chart.BASELINE_COLOUR) > 20, "no baseline line"


def test_writes_png_and_html(sample, tmp_path):
    png, page = chart.write(chart.parse(sample), tmp_path, "run")
    assert (png, page) == (tmp_path / "run.png", tmp_path / "run.html")
    assert png.read_bytes().startswith(PNG_MAGIC)
    _assert_chart_drawn(png)
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert text.count("<svg") == 1 and "<?xml" not in text
    assert text.count("<tr>") == len(sample["results"]) + 1
    assert sample["machine"]["cpu"] in text


def test_figure_has_a_panel_per_thread_count_and_a_row_per_method(sample):
    bench = chart.parse(sample)
    # A method measured at one thread count only leaves a gap in the other.
    del bench.results[-1]
    fig = chart.figure(bench)
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["1 thread", "2 threads"]
    # Rows say what each method measures (wrapped), not its internal name.
    labels = [t.get_text().replace("\n", " ") for t in axes[0].get_yticklabels()]
    assert labels == [bench.label(m) for m in bench.methods]
    assert labels[0] == "baseline: open+read+parse /proc/self/task/<tid>/stat"
    assert not set(labels) & set(bench.methods)
    # Shared axes: the panels compare at a glance.
    assert axes[0].get_shared_x_axes().joined(axes[0], axes[1])
    assert axes[0].get_shared_y_axes().joined(axes[0], axes[1])
    assert axes[0].get_xlim() == axes[1].get_xlim()
    per_panel = [len(ax.collections) for ax in axes]
    assert per_panel == [3 * len(bench.methods), 3 * (len(bench.methods) - 1)]
    assert all(ax.get_xscale() == "log" for ax in axes)


def test_rows_without_a_description_keep_the_method_name(sample):
    for r in sample["results"]:
        r.pop("description")
    bench = chart.parse(sample)
    labels = [t.get_text() for t in chart.figure(bench).axes[0].get_yticklabels()]
    assert labels == bench.methods


def test_html_escapes_what_the_json_holds(sample, tmp_path):
    sample["results"][1]["method"] = "<script>x</script>"
    sample["machine"]["cpu"] = "A & B <cpu>"
    _, page = chart.write(chart.parse(sample), tmp_path)
    text = page.read_text()
    assert "<script>" not in text
    assert "&lt;script&gt;x&lt;/script&gt;" in text and "A &amp; B &lt;cpu&gt;" in text


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.pop("results"), "results"),
        (lambda d: d["results"].clear(), "empty"),
        (lambda d: d["results"][0].pop("p99_ns"), "lacks p99_ns"),
        (lambda d: d["results"][0].update(max_ns=0), "positive"),
        (lambda d: [r.update(method="x") for r in d["results"] if r["method"] == "procfs_stat"], "baseline"),
    ],
)
def test_rejects_what_is_not_bench_output(sample, mutate, message):
    data = copy.deepcopy(sample)
    mutate(data)
    with pytest.raises(chart.BenchFormatError, match=message):
        chart.parse(data)


def test_command_line(tmp_path, capsys, monkeypatch):
    assert chart.main([str(SAMPLE), "-o", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.split() == [str(tmp_path / "out" / "bench.png"),
                                               str(tmp_path / "out" / "bench.html")]
    monkeypatch.setattr(sys, "stdin", io.StringIO(SAMPLE.read_text()))
    assert chart.main(["-", "-o", str(tmp_path), "--stem", "piped"]) == 0
    assert (tmp_path / "piped.html").is_file()


def test_command_line_errors(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert chart.main([str(bad), "-o", str(tmp_path)]) == 1
    assert "not JSON" in capsys.readouterr().err
    assert chart.main([str(tmp_path / "missing.json")]) == 1
    assert "No such file" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.png"))


def test_module_entry_point(tmp_path):
    out = subprocess.run([sys.executable, "-m", "threadtime.chart", str(SAMPLE), "-o", str(tmp_path)],
                         capture_output=True, text=True, check=True)
    assert out.stdout.split()[1].endswith("bench.html")


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None,
                                    reason="chromium is not installed (CI installs it from .ci/deps.d/python.apt)")


def _screenshot(page: Path, tmp_path: Path) -> Path:
    shot = tmp_path / "shot.png"
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,1000",
         f"--screenshot={shot}", page.as_uri()],
        capture_output=True, check=True, timeout=120,
    )
    return shot


@needs_chromium
def test_html_renders_in_headless_chromium(sample, tmp_path):
    _, page = chart.write(chart.parse(sample), tmp_path / "chart")
    # The page's only colours are the chart's: finding each marker colour and
    # the baseline's green proves the inline SVG was laid out and painted.
    _assert_chart_drawn(_screenshot(page, tmp_path))


# ---- the chart of a trace ----

@pytest.fixture(scope="module")
def trace_file(tmp_path_factory) -> Path:
    """Two threads, each with CPU intervals (ids 10 and 11, nested) and events."""
    path = tmp_path_factory.mktemp("trace") / "run.trace"
    threadtime.start_log(ring_records=256)
    try:
        def work(name: str) -> None:
            threadtime.log_thread_name(name)
            for i in range(3):
                with threadtime.interval(10, cpu=True):
                    threadtime.event(1, i)
                    with threadtime.interval(11, cpu=True):
                        end = threadtime.total_ns() + 1_000_000
                        while threadtime.total_ns() < end:
                            pass
                    threadtime.event(2, "step")

        t = threading.Thread(target=work, args=("worker",))
        t.start()
        work("main")
        t.join()
    finally:
        threadtime.stop_log()
    threadtime.dump(path)
    return path


def _assert_trace_drawn(png: Path, threads: int) -> None:
    for colour in chart.PALETTE[:2]:  # intervals 10 and 11
        assert _colour_pixels(png, colour, 20) > 200, f"no interval bars of {colour}"
    assert _colour_pixels(png, chart.EVENT_COLOUR, 10) > 20, "no event ticks"


def test_trace_chart_files(trace_file, tmp_path):
    png, page = chart.write_trace(threadtime.read_trace(trace_file), tmp_path)
    assert (png, page) == (tmp_path / "trace.png", tmp_path / "trace.html")
    _assert_trace_drawn(png, 2)
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.count("<svg") == 1
    assert "<script" not in text and "http" not in text.split("<svg", 1)[0]  # nothing loaded from elsewhere
    assert text.count("<tr>") == 3 and "worker" in text


def test_trace_figure_structure(trace_file):
    trace = threadtime.read_trace(trace_file)
    lanes, cpu = chart.trace_figure(trace).axes
    assert [t.get_text() for t in lanes.get_yticklabels()] == [f"{th.name} ({th.tid})" for th in trace]
    # 2 threads x 3 rounds x (outer + inner) bars; 2 x 6 event ticks.
    # Bars of one colour and level are one path: count its rectangles.
    from matplotlib.path import Path as MplPath
    bars = [p.get_path() for p in lanes.patches if type(p).__name__ == "PathPatch"]
    assert sum(int((path.codes == MplPath.CLOSEPOLY).sum()) for path in bars) == 12
    ticks = [c for c in lanes.collections if type(c).__name__ == "PathCollection"]
    assert sum(len(c.get_offsets()) for c in ticks) == 12
    points = sum(len(c.get_offsets()) for c in cpu.collections)
    assert points == 12
    # Every CPU point is at most one CPU: CPU <= wall within the clocks' grain.
    for c in cpu.collections:
        for wall, used in c.get_offsets():
            assert used <= wall * 1.05 + 0.05


def test_trace_chart_of_a_c_program(tmp_path):
    demo = os.environ.get("THREADTIME_EVENT_DEMO")
    if not demo:
        pytest.skip("THREADTIME_EVENT_DEMO is not set (make test-python sets it)")
    path = tmp_path / "demo.trace"
    subprocess.run([demo, str(path)], check=True, capture_output=True)
    trace = threadtime.read_trace(path)
    lanes, cpu = chart.trace_figure(trace).axes
    assert len(lanes.get_yticklabels()) == len(trace.threads)
    cpu_spans = sum(1 for th in trace for s in th.intervals() if s.cpu_ns is not None)
    assert cpu_spans > 0 and sum(len(c.get_offsets()) for c in cpu.collections) == cpu_spans


@needs_chromium
def test_trace_html_renders_in_headless_chromium(trace_file, tmp_path):
    _, page = chart.write_trace(threadtime.read_trace(trace_file), tmp_path / "chart")
    _assert_trace_drawn(_screenshot(page, tmp_path), 2)


def test_trace_command_line(trace_file, tmp_path, capsys):
    assert chart.main([str(trace_file), "-o", str(tmp_path)]) == 0
    assert capsys.readouterr().out.split() == [str(tmp_path / "trace.png"), str(tmp_path / "trace.html")]
    cut = tmp_path / "cut.trace"
    cut.write_bytes(trace_file.read_bytes()[:128 + 128 + 10 * 32])
    assert chart.main([str(cut), "-o", str(tmp_path), "--stem", "cut"]) == 0
    # (the thread-name table, which lies after the sections, is cut off too)
    err = capsys.readouterr().err
    assert "is damaged; charting the intact part: " in err and "truncated: thread section" in err
    assert "Damaged file" in (tmp_path / "cut.html").read_text()
    bad = tmp_path / "bad.trace"
    bad.write_bytes(b"TTRACE\x1a\n" + bytes(20))
    assert chart.main([str(bad), "-o", str(tmp_path), "--stem", "bad"]) == 1
    assert "truncated: the file ends inside its 128-byte header" in capsys.readouterr().err
    assert not (tmp_path / "bad.png").exists()


def test_trace_legend_names_the_named_ids(tmp_path):
    path = tmp_path / "named.trace"
    threadtime.event_name(7301, "parse")  # 7302 stays unnamed
    threadtime.start_log(ring_records=64)
    try:
        with threadtime.interval(7301):
            pass
        with threadtime.interval(7302):
            pass
    finally:
        threadtime.stop_log()
    threadtime.dump(path)
    lanes, _ = chart.trace_figure(threadtime.read_trace(path)).axes
    assert [t.get_text() for t in lanes.get_legend().get_texts()] == ["parse", "interval 7302", "event"]


def test_trace_html_counts_nested_cpu_intervals_once(trace_file):
    # Interval 11 runs inside 10 on each thread: the thread's CPU inside CPU
    # intervals is 10's alone (summing both counted 11's CPU twice).
    trace = threadtime.read_trace(trace_file)
    page = chart.trace_html_page(trace, "<svg></svg>")
    for th in trace:
        outer = sum(s.cpu_ns for s in th.intervals() if s.id == 10)
        assert chart.cpu_in_intervals(th.events) == outer
        assert f"<td>{outer / chart.MS:,.3f}</td>" in page
    assert "nested ones counted once" in page


def _ev(kind: str, id: int, cpu: int) -> threadtime.Event:
    return threadtime.Event((0, kind, id, None, None, cpu, 0, 0, None, None, False))


def test_cpu_in_intervals_is_the_union():
    events = [_ev("end_cpu", 9, 5),  # its begin was overwritten: nothing
              _ev("begin_cpu", 1, 10), _ev("begin_cpu", 2, 15), _ev("end_cpu", 1, 20),  # 1 and 2 cross
              _ev("end_cpu", 2, 30), _ev("begin_cpu", 3, 40), _ev("end_cpu", 3, 45),
              _ev("begin_cpu", 4, 50)]  # still open: nothing
    assert chart.cpu_in_intervals(events) == (30 - 10) + (45 - 40)


def test_trace_legend_leaves_the_lanes_free(trace_file):
    fig = chart.trace_figure(threadtime.read_trace(trace_file))
    fig.draw_without_rendering()
    lanes, cpu = fig.axes
    for ax in (lanes, cpu):
        assert not ax.get_legend().get_window_extent().overlaps(ax.get_window_extent())


def test_trace_cpu_points_are_coloured_by_interval(trace_file):
    from matplotlib.colors import to_hex
    trace = threadtime.read_trace(trace_file)
    _, cpu = chart.trace_figure(trace).axes
    colours = [to_hex(c.get_facecolor()[0]) for c in cpu.collections]
    # Two threads x two ids: a colour per id (the bars' colours), not per thread.
    assert len(colours) == 4 and set(colours) == set(chart.PALETTE[:2])
    labels = [t.get_text() for t in cpu.get_legend().get_texts()]
    assert labels[:2] == ["interval 10", "interval 11"]
    assert [f"{th.name} ({th.tid})" for th in trace] == labels[2:4]


def test_chart_of_garbage_is_one_clear_line(tmp_path):
    garbage = tmp_path / "garbage.trace"
    garbage.write_bytes(bytes(range(256)) * 4)
    run = subprocess.run([sys.executable, "-m", "threadtime.chart", str(garbage), "-o", str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert "neither a trace file" in run.stderr and str(garbage) in run.stderr


def test_chart_without_matplotlib_says_how_to_install_it(tmp_path):
    code = ("import runpy, sys; sys.modules['matplotlib'] = None; "
            f"sys.argv = ['chart', {str(SAMPLE)!r}, '-o', {str(tmp_path)!r}]; "
            "runpy.run_module('threadtime.chart', run_name='__main__')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr == "threadtime.chart needs matplotlib: pip install 'threadtime[chart]'\n"
    code = ("import sys; sys.modules['matplotlib'] = None; from threadtime import chart\n"
            f"try:\n    chart.write(chart.load({str(SAMPLE)!r}), __import__('pathlib').Path({str(tmp_path)!r}))\n"
            "except ImportError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "threadtime.chart needs matplotlib: pip install 'threadtime[chart]'\n"


# ---- the trace chart's output, pinned ----

GOLDEN_TRACE = Path(__file__).parent / "data" / "chart_nested.trace"  # data/make_chart_trace.py
GOLDEN = Path(__file__).parent / "data" / "chart_golden.json"


def _chart_facts(trace: threadtime.Trace) -> dict:
    """What the trace chart shows, as data that does not hang on
    matplotlib's drawing: each axes' bars (colour, corners), marks and
    points (offsets, colours, sizes), lines, labels, limits and legends,
    and the HTML page's table."""
    from matplotlib.colors import to_hex
    from matplotlib.patches import PathPatch

    fig = chart.trace_figure(trace)

    def axes(ax) -> dict:
        legend = ax.get_legend()
        return {
            "title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
            "xlim": list(ax.get_xlim()), "ylim": list(ax.get_ylim()),
            "yticks": [t.get_text() for t in ax.get_yticklabels()],
            "legend": [] if legend is None else [t.get_text() for t in legend.get_texts()],
            "bars": [{"colour": to_hex(p.get_facecolor(), keep_alpha=True), "rasterized": p.get_rasterized(),
                      "vertices": p.get_path().vertices.tolist(), "codes": p.get_path().codes.tolist()}
                     for p in ax.patches if isinstance(p, PathPatch)],
            "marks": [{"colours": [to_hex(c, keep_alpha=True) for c in m.get_facecolor()],
                       "offsets": m.get_offsets().tolist(), "sizes": m.get_sizes().tolist(),
                       "rasterized": m.get_rasterized(), "zorder": m.get_zorder()} for m in ax.collections],
            "lines": [line.get_xydata().tolist() for line in ax.lines],
        }

    page = chart.trace_html_page(trace, "<svg></svg>")
    return {"suptitle": fig._suptitle.get_text(), "lanes": axes(fig.axes[0]), "cpu": axes(fig.axes[1]),
            "table": page[page.index("<table"):]}


def test_trace_chart_shows_what_it_showed():
    # Pinned from the chart before it was made faster (same bars, marks,
    # points, limits, labels and table); regenerate with
    # `python python/tests/test_chart.py --golden` only for a change meant to show something else.
    assert _chart_facts(threadtime.read_trace(GOLDEN_TRACE)) == json.loads(GOLDEN.read_text())


@pytest.fixture(scope="module")
def raster_trace(tmp_path_factory) -> Path:
    """One thread with more bars of one colour than chart.VECTOR_MAX, so
    they are drawn as an image in the SVG."""
    path = tmp_path_factory.mktemp("raster") / "raster.trace"
    threadtime.start_log(ring_records=1 << 14)
    try:
        for _ in range(chart.VECTOR_MAX + 10):
            with threadtime.interval(3):
                pass
    finally:
        threadtime.stop_log()
    threadtime.dump(path)
    return path


@pytest.mark.parametrize("which", ["nested", "raster", "bench"])
def test_svg_is_what_savefig_writes(which, raster_trace):
    # The page's SVG is laid out by the chart itself (so savefig does not
    # fill the rasterized bars once more in its layout pass); it must be
    # the SVG that matplotlib's own savefig writes, after the PNG as in
    # write_trace, and leave the figure as it was.
    import matplotlib

    def make():
        if which == "bench":
            fig = chart.figure(chart.load(str(SAMPLE)))
        else:
            fig = chart.trace_figure(threadtime.read_trace(GOLDEN_TRACE if which == "nested" else raster_trace))
        fig.savefig(io.BytesIO(), format="png", dpi=110)
        return fig

    with matplotlib.rc_context({"svg.hashsalt": "pinned"}):  # element ids, else random
        plain = make()
        want = io.StringIO()
        with matplotlib.rc_context({"svg.fonttype": "none"}):
            plain.savefig(want, format="svg", metadata={"Date": None})
        fig = make()
        engine, canvas = fig.get_layout_engine(), fig.canvas
        rasterized = [a for a in fig.findobj() if a.get_rasterized()]
        got = chart._svg(fig)
    assert (which == "raster") == bool(rasterized)
    assert got == want.getvalue()[want.getvalue().index("<svg"):]
    assert fig.get_layout_engine() is engine and fig.canvas is canvas
    assert [a for a in fig.findobj() if a.get_rasterized()] == rasterized


if __name__ == "__main__":
    if sys.argv[1:] == ["--golden"]:
        GOLDEN.write_text(json.dumps(_chart_facts(threadtime.read_trace(GOLDEN_TRACE)), indent=0) + "\n")
