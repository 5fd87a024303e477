"""The release wheel as a user gets it: `make wheels` output installed into a
fresh venv on every CPython 3.10+ on this machine, and this suite run there
from a copy outside the source tree, so it imports the installed package."""
import os
import platform
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import interpreters

# Set by `make test-python` after `make wheels`; unset inside the nested run.
DIST = os.environ.get("THREADTIME_WHEEL_DIR")
NESTED = "THREADTIME_WHEEL_RUN"
TESTS = Path(__file__).resolve().parent
pytestmark = [
    pytest.mark.skipif(not DIST, reason="THREADTIME_WHEEL_DIR is not set (make test-python sets it)"),
    pytest.mark.skipif(NESTED in os.environ, reason="already the installed wheel's run"),
]


# The wheels `make wheels` ships, and the ELF machine their extension must be
# built for (e_machine: EM_X86_64, EM_AARCH64).
ARCHES = {"x86_64": 62, "aarch64": 183}


def wheel_for(arch: str) -> Path:
    wheels = list(Path(DIST).glob(f"threadtime-*_{arch}.whl"))
    assert len(wheels) == 1, f"expected one {arch} wheel in {DIST}, found {wheels}"
    return wheels[0]


def the_wheel() -> Path:
    """The wheel this machine installs."""
    return wheel_for(platform.machine())


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_wheel_is_manylinux2014_abi3_and_stripped(arch):
    wheel = wheel_for(arch)
    # glibc 2.17 is the floor of every shipped native (docs/platforms.md).
    tags = set(wheel.name.removesuffix(".whl").split("-")[-1].split("."))
    assert wheel.name.split("-")[2:4] == ["cp310", "abi3"], wheel.name
    assert tags == {f"manylinux_2_17_{arch}", f"manylinux2014_{arch}"}, wheel.name
    with zipfile.ZipFile(wheel) as z:
        so = z.read("threadtime/_core.abi3.so")
        assert "threadtime/trace.py" in z.namelist() and "threadtime/_core.pyi" in z.namelist()
    assert so.startswith(b"\x7fELF")
    assert int.from_bytes(so[18:20], "little") == ARCHES[arch], f"{wheel.name}: built for another machine"
    # ELF section names live in .shstrtab: a stripped file has no symbol
    # table and no debug sections left to name.
    assert b".debug_info" not in so and b".symtab" not in so
    assert list(Path(DIST).glob("threadtime-*.tar.gz")), "no sdist beside the wheel"


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_wheel_and_sdist_say_the_license_and_carry_its_text(arch):
    """Apache-2.0 in the metadata, and the repository's LICENSE itself."""
    text = (TESTS.parent.parent / "LICENSE").read_bytes()
    with zipfile.ZipFile(wheel_for(arch)) as z:
        info = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA")).rsplit("/", 1)[0]
        assert "License: Apache-2.0" in z.read(f"{info}/METADATA").decode().splitlines()
        assert z.read(f"{info}/LICENSE") == text
    sdist = next(Path(DIST).glob("threadtime-*.tar.gz"))
    with tarfile.open(sdist) as t:
        top = sdist.name.removesuffix(".tar.gz")
        assert "License: Apache-2.0" in t.extractfile(f"{top}/PKG-INFO").read().decode().splitlines()
        assert t.extractfile(f"{top}/LICENSE").read() == text


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_wheel_carries_the_command_for_its_arch(arch):
    """threadtime/bin/threadtime (executable) and the preload library at
    the path the command looks for it (../lib from it), both for the
    wheel's machine; the console script `threadtime` runs it."""
    with zipfile.ZipFile(wheel_for(arch)) as z:
        cli = z.getinfo("threadtime/bin/threadtime")
        assert (cli.external_attr >> 16) & 0o111 == 0o111, oct(cli.external_attr >> 16)
        for name in ("threadtime/bin/threadtime", "threadtime/lib/libthreadtime_run.so"):
            elf = z.read(name)
            assert elf.startswith(b"\x7fELF") and int.from_bytes(elf[18:20], "little") == ARCHES[arch], name
        entry_points = next(n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt"))
        assert "threadtime = threadtime.__main__:main" in z.read(entry_points).decode()


def test_installed_wheel_gives_the_threadtime_command(tmp_path):
    """`pip install threadtime` and nothing else on PATH: `threadtime run`
    reports the threads of a command (its preload library found in the
    package), `python -m threadtime dump` reads a trace, a wrong command
    exits 2 with the usage."""
    venv = tmp_path / "venv"
    subprocess.run([shutil.which("python3") or "python3", "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
                    str(the_wheel())], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("THREADTIME_")}
    env["PATH"] = f"{venv / 'bin'}:/usr/bin:/bin"

    def run(*args):
        return subprocess.run(list(args), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    ran = run("threadtime", "run", "--", "sh", "-c", "i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done")
    assert ran.returncode == 0, ran.stderr
    assert "all threads:" in ran.stderr + ran.stdout and " sh " in ran.stderr + ran.stdout
    trace = tmp_path / "x.trace"
    run(str(venv / "bin" / "python"), "-c", "import threadtime\nwith threadtime.recording(%r):\n"
        "    threadtime.event('loaded', 42)" % str(trace))
    dumped = run(str(venv / "bin" / "python"), "-m", "threadtime", "dump", "--format", "csv", str(trace))
    assert dumped.returncode == 0, dumped.stderr
    assert "loaded" in dumped.stdout and "42" in dumped.stdout
    wrong = run("threadtime", "no-such-command")
    assert wrong.returncode == 2 and "usage: threadtime" in wrong.stderr


@pytest.mark.parametrize("python", interpreters() if DIST and NESTED not in os.environ else [])
def test_installed_wheel_passes_the_suite(python, tmp_path):
    wheel = the_wheel()
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    vpy = str(venv / "bin" / "python")
    # --no-compile: byte-compiling pandas, matplotlib and mypy would take
    # longer than the install itself; Python compiles what the suite imports.
    subprocess.run([vpy, "-m", "pip", "install", "-q", "--no-compile", f"{wheel}[test]"], check=True)
    # A copy of the tests and of the helpers they import from python/support
    # (pyproject.toml's pythonpath, which the copy has no file to say), away
    # from python/src and the checkout.
    tests = tmp_path / "suite" / "tests"
    shutil.copytree(TESTS, tests, ignore=shutil.ignore_patterns("__pycache__"))
    support = tmp_path / "suite" / "support"
    shutil.copytree(TESTS.parent / "support", support, ignore=shutil.ignore_patterns("__pycache__"))
    where = subprocess.run([vpy, "-c", "import threadtime; print(threadtime.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(str(venv)), where
    # stubtest (test_stubs) runs once, in the main run: mypy from a cold
    # cache costs a minute per interpreter, and the stubs are the same file.
    run = subprocess.run([vpy, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests),
                          "--ignore", str(tests / "test_stubs.py")], cwd=tmp_path,
                         env={**os.environ, NESTED: "1", "PYTHONPATH": str(support)}, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
