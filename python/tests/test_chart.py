"""The chart of `threadtime bench --json`: files, structure, errors, and the
HTML page rendered by headless Chromium."""
import copy
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image  # matplotlib depends on Pillow and numpy

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
    assert [t.get_text() for t in axes[0].get_yticklabels()] == bench.methods
    per_panel = [len(ax.collections) for ax in axes]
    assert per_panel == [3 * len(bench.methods), 3 * (len(bench.methods) - 1)]
    assert all(ax.get_xscale() == "log" for ax in axes)


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


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (CI installs it from .ci/deps.d/python.apt)")
def test_html_renders_in_headless_chromium(sample, tmp_path):
    _, page = chart.write(chart.parse(sample), tmp_path / "chart")
    shot = tmp_path / "shot.png"
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,1000",
         f"--screenshot={shot}", page.as_uri()],
        capture_output=True, check=True, timeout=120,
    )
    # The page's only colours are the chart's: finding each marker colour and
    # the baseline's green proves the inline SVG was laid out and painted.
    _assert_chart_drawn(shot)
