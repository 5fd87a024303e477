"""The sdist carries the core, so a wheel builds from it far from the
repository; the wheel is abi3 and ships the stubs; the `test` extra brings
everything the tests use."""
import ast
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
# Used by the tests through a subprocess, not an import: the sdist build
# (setuptools, and wheel for `pip wheel --no-build-isolation` on older
# setuptools) and stubtest (mypy).
RUN_BY_SUBPROCESS = {"setuptools", "wheel", "mypy"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requires(dist: str, extra: str | None = None) -> set[str]:
    """Names dist requires (with extra: only those of that extra)."""
    names = set()
    for req in metadata.requires(dist) or []:
        name, _, marker = req.partition(";")
        in_extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)", marker)
        if (extra is None and not in_extra) or (in_extra and in_extra.group(1) == extra):
            names.add(_norm(re.match(r"[A-Za-z0-9._-]+", name.strip()).group(0)))
    return names


def test_test_extra_carries_what_the_tests_need():
    """`pip install threadtime[test]` then pytest: every module the tests
    import, or run, comes with the extra (directly or as a dependency)."""
    imported = set()
    for f in TESTS.glob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "importorskip":
                imported.add(node.args[0].value)
    local = {"threadtime", "conftest"} | {f.stem for f in (PYTHON_DIR / "support").glob("*.py")}  # on pythonpath
    third_party = imported - set(sys.stdlib_module_names) - local
    by_module = metadata.packages_distributions()

    def providers(module: str) -> set[str]:
        """The distributions that may bring module. Before 3.11 the map comes
        from top_level.txt only, which wheels built by meson (pandas, numpy)
        and namespace packages (opentelemetry's) lack: then those whose files
        hold the module, else the project named as the module."""
        if module in by_module:
            return {_norm(d) for d in by_module[module]}
        found = {_norm(d.metadata["Name"]) for d in metadata.distributions()
                 if any(f.parts and f.parts[0] in (module, f"{module}.py") for f in d.files or [])}
        return found or {_norm(module)}

    needed = {m: providers(m) for m in third_party} | {name: {name} for name in RUN_BY_SUBPROCESS}
    closure, todo = set(), list(_requires("threadtime", "test"))
    while todo:
        name = todo.pop()
        if name not in closure:
            closure.add(name)
            try:
                todo += _requires(name)
            except metadata.PackageNotFoundError:
                pass  # a marker excluded it here
    missing = sorted(m for m, names in needed.items() if not names & closure)
    assert not missing, f"not brought by threadtime[test]: {missing}"


@pytest.mark.skipif(not (PYTHON_DIR / "setup.py").is_file(), reason="no source tree (an installed wheel's run)")
def test_sdist_is_self_contained_and_builds_an_abi3_wheel(tmp_path):
    sdist = subprocess.run(
        [sys.executable, "-c", "import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))",
         str(tmp_path)],
        cwd=PYTHON_DIR, capture_output=True, text=True, check=True,
    ).stdout.split()[-1]
    with tarfile.open(tmp_path / sdist) as tar:
        names = tar.getnames()
        tar.extractall(tmp_path / "unpacked", filter="data")
    top = sdist.removesuffix(".tar.gz")
    for needed in ("core/src/sources.txt", "core/include/threadtime/threadtime.h", "ext/_core.c",
                   "ext/exports.map", "src/threadtime/_core.pyi", "setup.py"):
        assert f"{top}/{needed}" in names
    assert not any(n.startswith(f"{top}/..") or "/../" in n for n in names)

    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
         str(tmp_path / "unpacked" / top), "-w", str(tmp_path / "wheels")],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )
    (wheel,) = (tmp_path / "wheels").glob("*.whl")
    # A free-threaded CPython has no limited API: its wheel is for that
    # interpreter alone (cp313t), with a version-tagged extension.
    free = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    tag = "-cp{0}{1}-cp{0}{1}t-linux_".format(*sys.version_info[:2]) if free else "-cp310-abi3-linux_"
    assert tag in wheel.name
    files = zipfile.ZipFile(wheel).namelist()
    core = sysconfig.get_config_var("EXT_SUFFIX") if free else ".abi3.so"
    for needed in (f"threadtime/_core{core}", "threadtime/_core.pyi", "threadtime/py.typed",
                   "threadtime/__init__.py", "threadtime/chart.py"):
        assert needed in files


# A program a user writes from the README, with the conveniences; mypy
# --strict must accept it as typed, and reject the misuse below it.
TYPED_PROGRAM = '''
import threading
from collections.abc import Sequence
import threadtime

@threadtime.interval("parse")
def parse(text: str, *, strict: bool = False) -> int:
    return len(text)

def main() -> None:
    t = threading.Thread(target=lambda: None)
    t.start()
    before: threadtime.Times = threadtime.thread_times(t)
    clock = threadtime.ThreadClock(native_id=t)
    used: threadtime.Times = clock.times() - before
    as_dict: dict[str, int] = used._asdict()
    n: int = parse("abc", strict=True)
    with threadtime.recording("run.trace", ring_records=1024):
        threadtime.event("loaded", n)
        threadtime.event(7, b"raw")
        with threadtime.interval("step", cpu=True):
            pass
    running: bool = threadtime.log_info().running
    trace = threadtime.read_trace("run.trace")
    for th in trace:
        events: Sequence[threadtime.Event] = th.events
        tail: list[threadtime.Event] = th.events[-2:]
        where: int = events.index(events[0]) + events.count(events[-1])
        print(th.name, tail, where, list(reversed(events)))
    vnames: dict[int, str] = trace.vthread_names
    try:
        threadtime.start_log()
    except threadtime.LogRunningError as e:
        print(e.errno, as_dict, running, vnames)
    t.join()
'''
MISUSE = '''
import threadtime

@threadtime.interval(3)
def f(x: int) -> int:
    return x

f("not an int")
threadtime.event(1.5)
'''


def test_mypy_strict_accepts_the_conveniences(tmp_path):
    for name, text in (("good.py", TYPED_PROGRAM), ("bad.py", MISUSE)):
        (tmp_path / name).write_text(text)
    env = {**os.environ, "MYPY_CACHE_DIR": str(tmp_path / "cache")}
    good = subprocess.run([sys.executable, "-m", "mypy", "--strict", "good.py"], cwd=tmp_path,
                          capture_output=True, text=True, env=env)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = subprocess.run([sys.executable, "-m", "mypy", "--strict", "bad.py"], cwd=tmp_path,
                         capture_output=True, text=True, env=env)
    assert bad.returncode == 1
    assert 'bad.py:8: error: Argument 1 to "f" has incompatible type "str"' in bad.stdout
    assert 'bad.py:9: error: Argument 1 to "event" has incompatible type "float"' in bad.stdout
