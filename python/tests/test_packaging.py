"""The sdist carries the core, so a wheel builds from it far from the
repository; the wheel is abi3 and ships the stubs."""
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parents[1]


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
    for needed in ("core/src/CMakeLists.txt", "core/include/threadtime/threadtime.h", "ext/_core.c",
                   "ext/exports.map", "src/threadtime/_core.pyi", "setup.py"):
        assert f"{top}/{needed}" in names
    assert not any(n.startswith(f"{top}/..") or "/../" in n for n in names)

    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
         str(tmp_path / "unpacked" / top), "-w", str(tmp_path / "wheels")],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )
    (wheel,) = (tmp_path / "wheels").glob("*.whl")
    assert "-cp310-abi3-linux_" in wheel.name
    files = zipfile.ZipFile(wheel).namelist()
    for needed in ("threadtime/_core.abi3.so", "threadtime/_core.pyi", "threadtime/py.typed",
                   "threadtime/__init__.py", "threadtime/chart.py"):
        assert needed in files
