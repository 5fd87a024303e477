"""The README's Python examples run as written, each block in a fresh
interpreter: a block of statements runs whole (a `# ...` line after a print
is the output it shows, times aside); in a `>>>` block each line runs and
what the README shows under it is what happens: nothing, a value's repr, or
`ExceptionName: text`."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
if not README.is_file():
    pytest.skip("no README here (the suite runs from an installed wheel)", allow_module_level=True)

# What the examples take as given: a function doing some work, a thread
# that has exited (its /proc entry gone, so no read can still succeed).
PRELUDE = """
import os, threading, time
import threadtime

def work():
    sum(range(100_000))

gone = threading.Thread(target=work)
gone.start()
gone.join()
while os.path.exists(f"/proc/self/task/{gone.native_id}"):
    time.sleep(0.001)
"""

# Runs each `>>>` line of the block on stdin; prints one JSON line per line:
# ["ok", repr] or ["raised", "Name: text"].
SESSION = PRELUDE + """
import json, sys
scope = dict(globals())
for line in json.load(sys.stdin):
    try:
        try:
            code = compile(line, "<readme>", "eval")
        except SyntaxError:
            exec(compile(line, "<readme>", "exec"), scope)
            result = None
        else:
            result = eval(code, scope)
        print(json.dumps(["ok", None if result is None else repr(result)]))
    except Exception as e:
        print(json.dumps(["raised", f"{type(e).__name__}: {e}"]))
"""


def python_blocks() -> list[tuple[int, str]]:
    """(line number, text) of every ```python block."""
    blocks, lines = [], README.read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            start = i + 1
            i = start
            while lines[i].strip() != "```":
                i += 1
            blocks.append((start + 1, "\n".join(lines[start:i])))
        i += 1
    return blocks


def run(args, tmp_path, stdin=None):
    done = subprocess.run([sys.executable, *args], input=stdin, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_readme_has_both_kinds_of_block():
    kinds = {">>>" in text for _, text in python_blocks()}
    assert kinds == {True, False}


@pytest.mark.parametrize("line, text", python_blocks(), ids=lambda v: str(v) if isinstance(v, int) else "")
def test_readme_block_runs_as_written(line, text, tmp_path):
    if ">>>" not in text:
        lines = text.splitlines()
        shown = [ln[2:] for prev, ln in zip(lines, lines[1:]) if "print(" in prev and ln.startswith("# ")]
        assert shown or "print(" not in text
        out = run(["-c", PRELUDE + text], tmp_path)
        # The printed lines the block shows, with their times masked and the
        # thread's name (the kernel's: the interpreter's file name) left out.
        mask = lambda s: re.sub(r"\((\d+), '", "(T, '", s.partition(" [")[2])  # noqa: E731
        for expected in shown:
            assert mask(expected) in [mask(o) for o in out.splitlines()], (expected, out)
        return
    steps: list[tuple[str, list[str]]] = []
    for ln in text.splitlines():
        if ln.startswith(">>> "):
            steps.append((ln[4:], []))
        else:
            steps[-1][1].append(ln)
    out = run(["-c", SESSION], tmp_path, stdin=json.dumps([code for code, _ in steps]))
    results = [json.loads(ln) for ln in out.splitlines()]
    assert len(results) == len(steps)
    for (code, shown), (kind, got) in zip(steps, results):
        expected = "\n".join(shown) or None
        if expected is None:
            assert kind == "ok", f"README line {line}: {code} raised {got}"
        elif re.match(r"[A-Za-z]+(Error|Exception): ", expected):
            assert [kind, got] == ["raised", expected], f"README line {line}: {code}"
        else:
            assert [kind, got] == ["ok", expected], f"README line {line}: {code}"
