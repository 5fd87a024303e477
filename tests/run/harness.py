"""What the run suites share: a scratch directory under the build tree's
TMPDIR, check() that records a failure and goes on, and the loop that runs
every test_* function (or those named in TEST_RUN_ONLY) and exits with the
verdict. The scratch directory is kept when something failed, to look at."""
import os
import shutil
import sys
import tempfile

FAILED = []


def scratch(prefix):
    return tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TMPDIR"))


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print("  FAIL:", what)


def main(tests, tmp):
    """Runs the test_* callables of a module's globals() and exits."""
    only = os.environ.get("TEST_RUN_ONLY", "").split()  # "test_kill test_java": those alone
    for name, fn in sorted(tests.items()):
        if name.startswith("test_") and callable(fn) and (not only or name in only):
            print(name)
            try:
                fn()
            except Exception as e:  # a report that does not parse, say
                check(False, f"{name}: {type(e).__name__}: {e}")
    if not FAILED:
        shutil.rmtree(tmp, ignore_errors=True)
    print("failed:" if FAILED else "all passed", *FAILED, sep="\n  " if FAILED else "")
    sys.exit(1 if FAILED else 0)
