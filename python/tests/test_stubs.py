"""The type stubs match the extension: mypy's stubtest compares every name,
signature and field of _core.pyi with the module as built."""
import os
import subprocess
import sys


def test_stubs_match_the_extension(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "threadtime._core"],
        capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "MYPY_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert run.returncode == 0, run.stdout + run.stderr
