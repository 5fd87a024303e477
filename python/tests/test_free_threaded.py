"""The free-threaded (Py_GIL_DISABLED) build of the extension.

Where a free-threaded CPython is installed, the package is built for it
from source and must import without turning the GIL back on, then pass the
suite. None could be installed from the registries this project may use
(Debian 12 has no python3.13-nogil, PyPI ships no interpreters); then the
extension's sources are at least compiled in that configuration, against
the headers of a CPython 3.13+ if there is one: the same headers a
free-threaded build uses, with Py_GIL_DISABLED defined as its pyconfig.h
would. That proves the non-limited code path and the critical sections
compile; it cannot run them.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import interpreters

PYTHON_DIR = Path(__file__).resolve().parents[1]
ROOT = PYTHON_DIR.parent
pytestmark = pytest.mark.skipif(not (PYTHON_DIR / "setup.py").is_file(),
                                reason="no source tree (an installed wheel's run)")
SOURCES = sorted((PYTHON_DIR / "ext").glob("*.c"))  # every file of the extension


def include_dir(python: str) -> Path | None:
    out = subprocess.run([python, "-c", "import sys, sysconfig; print(sys.version_info >= (3, 13) and "
                          "sysconfig.get_paths()['include'])"], capture_output=True, text=True, check=True)
    path = Path(out.stdout.strip())
    return path if out.stdout.strip() != "False" and (path / "Python.h").is_file() else None


def compile_ext(include: Path, *defines: str) -> subprocess.CompletedProcess:
    cc = os.environ.get("CC", "cc")
    return subprocess.run(
        [cc, "-fsyntax-only", "-std=c11", "-Wall", "-Werror", "-Wno-unused-parameter", "-D_GNU_SOURCE",
         *defines, f"-I{include}", f"-I{ROOT / 'include'}", f"-I{ROOT / 'src'}", *map(str, SOURCES)],
        capture_output=True, text=True)


FREE = interpreters(free_threaded=True)
HEADERS = [d for d in map(include_dir, interpreters()) if d] if not FREE else []


@pytest.mark.skipif(bool(FREE) or not HEADERS, reason="a free-threaded CPython is here, or no 3.13+ headers")
def test_free_threaded_variant_compiles_against_313_headers():
    include = HEADERS[-1]
    built = compile_ext(include, "-DPy_GIL_DISABLED=1")
    assert built.returncode == 0, built.stderr
    # The define took: these headers refuse the limited API with it.
    limited = compile_ext(include, "-DPy_GIL_DISABLED=1", "-DPy_LIMITED_API=0x030A0000")
    assert limited.returncode != 0 and "limited API" in limited.stderr


@pytest.mark.skipif(not FREE, reason="no free-threaded CPython on this machine")
@pytest.mark.parametrize("python", FREE)
def test_free_threaded_build_keeps_the_gil_off_and_passes_the_suite(python, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    vpy = str(venv / "bin" / "python")
    subprocess.run([vpy, "-m", "pip", "install", "-q", f"{PYTHON_DIR}[test]"], check=True)
    gil = subprocess.run([vpy, "-c", "import sys, threadtime; print(sys._is_gil_enabled())"],
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    assert gil.stdout.strip() == "False", gil.stderr
    run = subprocess.run([vpy, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(PYTHON_DIR / "tests"),
                          "--ignore", str(PYTHON_DIR / "tests" / "test_wheel.py")],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]


def test_this_build_matches_its_interpreter():
    # The running interpreter's own build: abi3 on a GIL build, not on a
    # free-threaded one (whose Python.h has no limited API).
    import threadtime._core as core
    free = bool(__import__("sysconfig").get_config_var("Py_GIL_DISABLED"))
    assert Path(core.__file__).name.endswith(".abi3.so") != free
    if free:
        assert not sys._is_gil_enabled()
