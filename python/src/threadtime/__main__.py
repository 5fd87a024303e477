"""``threadtime run -- CMD ...`` (the console script) and ``python -m
threadtime ...``: the threadtime command itself.

A wheel carries the command (threadtime/bin/threadtime, built with the
wheel for its arch, its preload library beside it); this runs the first
found of: $THREADTIME_CLI, the wheel's own, then a ``threadtime`` executable
on $PATH (an installed or a built one; never this console script itself).
Every subcommand passes through (``run``, ``dump``, ``bench``...), and so do
CMD's exit status and streams: the process is replaced, not wrapped.
"""
import os
import sys
from pathlib import Path

PACKAGED = Path(__file__).resolve().parent / "bin" / "threadtime"


def _is_program(path: str) -> bool:
    """An executable ELF file: the command, not a script that would run this one."""
    try:
        with open(path, "rb") as f:
            return os.access(path, os.X_OK) and f.read(4) == b"\x7fELF"
    except OSError:
        return False


def find_cli() -> str | None:
    env = os.environ.get("THREADTIME_CLI")
    if env:
        return env
    if _is_program(str(PACKAGED)):
        return str(PACKAGED)
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(directory or ".", "threadtime")
        if _is_program(candidate):
            return candidate
    return None


def main() -> int:
    cli = find_cli()
    if not cli:
        print("threadtime: the threadtime command is not installed: this threadtime was installed from "
              "its source, without it (a wheel carries it). Build it with 'make build' and put it on "
              "PATH, or name it with THREADTIME_CLI", file=sys.stderr)
        return 127
    os.execv(cli, [cli, *sys.argv[1:]])
    return 127  # not reached: execv replaces this process or raises


if __name__ == "__main__":
    sys.exit(main())
