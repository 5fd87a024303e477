"""``python -m threadtime run -- CMD ...``: the threadtime command itself.

The Python package carries the core, not the command; this runs the
``threadtime`` executable found first in: $THREADTIME_CLI, the directory of
this Python's own scripts, then $PATH. Every subcommand passes through
(``run``, ``dump``, ``bench``...), and so do CMD's exit status and streams:
the process is replaced, not wrapped.
"""
import os
import shutil
import sys
import sysconfig


def find_cli() -> str | None:
    env = os.environ.get("THREADTIME_CLI")
    if env:
        return env
    beside = os.path.join(sysconfig.get_path("scripts"), "threadtime")
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which("threadtime")


def main() -> int:
    cli = find_cli()
    if not cli:
        print("threadtime: the threadtime command is not installed (build it with "
              "'make build' or install it; or name it with THREADTIME_CLI)", file=sys.stderr)
        return 127
    os.execv(cli, [cli, *sys.argv[1:]])
    return 127  # not reached: execv replaces this process or raises


if __name__ == "__main__":
    sys.exit(main())
