"""threadtime.chart_tasks: the chart of CPU per asyncio task draws the
figures it is given, and writes them as PNG and HTML."""
import pytest

pytest.importorskip("matplotlib")

from threadtime.chart_tasks import BARS, TaskRow, tasks_figure, write_tasks  # noqa: E402

ROWS = [TaskRow("parse", 60_000_000, 73_000_000, 340_000_000), TaskRow("fetch", 200_000, 63_000_000, 350_000_000)]


def test_each_bar_is_its_figure_in_ms():
    ax = tasks_figure(ROWS).axes[0]
    widths = [round(p.get_width(), 6) for p in ax.patches]
    assert widths == [round(getattr(r, f) / 1e6, 6) for r in ROWS for f, _, _ in BARS]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["fetch", "parse"]  # first row on top
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [label for _, label, _ in BARS]


def test_write_tasks_gives_a_png_and_a_page_with_the_numbers(tmp_path):
    png, page = write_tasks(ROWS, tmp_path)
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    text = page.read_text()
    assert "<svg" in text and "<td>parse</td><td>60.00</td><td>73.00</td><td>340.00</td>" in text


def test_no_rows_is_an_error():
    with pytest.raises(ValueError, match="no tasks"):
        tasks_figure([])
