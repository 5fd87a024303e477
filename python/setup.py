"""Builds threadtime._core: the C extension compiled together with the core.

The core's sources are not copied into python/ in the repository. A build
from the checkout (``pip install ./python``; pip builds in place) reads them
from the repository root. An sdist carries a copy under ``core/`` (see
``SdistWithCore``), so a wheel built from the sdist needs nothing else.

The list of core files is src/sources.txt, which CMake reads too, so a
file added to the core is compiled here as well. The extension's own files
are every ext/*.c.

THREADTIME_ARCH (x86_64, aarch64) picks the core's arch files when the
compiler targets another processor than this machine's (the aarch64 wheel
is built on x86-64 by `make wheels`, python/python.mk).

THREADTIME_CLI_BUILD names a CMake build of the `threadtime` command for
the wheel's arch (`make wheels` passes the zig build of `make natives`):
the command goes into the package as threadtime/bin/threadtime, and the
`threadtime run` preload library at the same path from it as in that build
(threadtime/lib/), so the command finds it as it finds it installed. The
console script `threadtime` (threadtime.__main__) runs it.
"""
import os
import platform
import re
import shutil
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
# The oldest CPython whose limited API has everything the extension uses
# (METH_FASTCALL entered it in 3.10); the wheel is tagged abi3 from there.
LIMITED_API = 0x030A0000
ABI3_TAG = "cp310"
# Core directories an sdist carries, relative to the repository root.
CORE_DIRS = ("src", "include")


def core_root() -> Path:
    """Where src/ and include/ are: the sdist's copy, else the checkout."""
    for root in (HERE / "core", HERE.parent):
        if (root / "src" / "sources.txt").is_file():
            return root
    raise SystemExit(
        "threadtime: the core's sources are missing: expected src/sources.txt "
        f"in {HERE / 'core'} (an sdist) or {HERE.parent} (the repository)"
    )


def target_arch() -> str:
    arch = os.environ.get("THREADTIME_ARCH") or platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)


def core_sources(root: Path, arch: str) -> list[str]:
    """The files src/sources.txt names for arch (its format is described there)."""
    common: list[str] = []
    by_arch: dict[str, list[str]] = {}
    for line in (root / "src" / "sources.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        tag, sep, name = line.partition(":")
        if sep:
            by_arch.setdefault(tag.strip(), []).append(name.strip())
        else:
            common.append(line)
    files = common + by_arch.get(arch, by_arch.get("generic", []))
    missing = [f for f in files if not (root / "src" / f).is_file()]
    if missing:
        raise SystemExit(f"threadtime: src/sources.txt names missing files: {missing}")
    # setuptools wants paths relative to this directory, even outside it.
    return [os.path.relpath(root / "src" / f, HERE) for f in files]


def core_headers(root: Path) -> list[str]:
    return [os.path.relpath(h, HERE) for d in CORE_DIRS for h in sorted((root / d).rglob("*.h"))]


def core_version(root: Path) -> str:
    header = (root / "include" / "threadtime" / "common.h").read_text()
    match = re.search(r'#define TT_VERSION_STRING "([^"]+)"', header)
    if not match:
        raise SystemExit("threadtime: no TT_VERSION_STRING in include/threadtime/common.h")
    return match.group(1)


class SdistWithCore(sdist):
    """Puts a copy of the core's src/ and include/ under core/ in the sdist,
    and the repository's LICENSE at its top, where setuptools finds it for
    the wheels built from the sdist (their .dist-info)."""

    def make_release_tree(self, base_dir, files):
        root = core_root()
        # The core's files outside python/ travel as the copy made below.
        inside = [f for f in files if not f.startswith(os.pardir)]
        super().make_release_tree(base_dir, inside)
        for name in CORE_DIRS:
            shutil.copytree(root / name, Path(base_dir) / "core" / name,
                            ignore=shutil.ignore_patterns("*.o", "__pycache__"))
        if (HERE.parent / "LICENSE").is_file():
            shutil.copy2(HERE.parent / "LICENSE", Path(base_dir) / "LICENSE")


class BuildPyWithCli(build_py):
    """Copies the command and its preload library from THREADTIME_CLI_BUILD
    (see the module's doc) into the package, when it is set."""

    def run(self):
        super().run()
        build = os.environ.get("THREADTIME_CLI_BUILD")
        if not build:
            return
        cli = Path(build) / "cli" / "threadtime"
        libs = sorted(Path(build).glob("**/libthreadtime_run.so"))
        if not cli.is_file() or len(libs) != 1:
            raise SystemExit(f"threadtime: THREADTIME_CLI_BUILD={build} holds no cli/threadtime and one "
                             f"libthreadtime_run.so (found {[str(p) for p in libs]})")
        package = Path(self.build_lib).resolve() / "threadtime"
        lib = Path(os.path.normpath(package / "bin" / os.path.relpath(libs[0], cli.parent)))
        if package not in lib.parents:
            raise SystemExit(f"threadtime: the command looks for its library outside the package: {lib}")
        for src, dst in ((cli, package / "bin" / "threadtime"), (libs[0], lib)):
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)  # the mode too: the command stays executable


def free_threaded() -> bool:
    """A free-threaded CPython (3.13t+): its Python.h has no limited API."""
    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def debug_info() -> bool:
    """THREADTIME_DEBUG=1 keeps the symbols and debug sections a release build strips."""
    return os.environ.get("THREADTIME_DEBUG", "") not in ("", "0")


ROOT = core_root()
ARCH = target_arch()
LIMITED = not free_threaded()
core = Extension(
    "threadtime._core",
    sources=[*sorted(str(p.relative_to(HERE)) for p in (HERE / "ext").glob("*.c")),
             *core_sources(ROOT, ARCH)],
    include_dirs=[str(ROOT / "include"), str(ROOT / "src")],
    define_macros=[("_GNU_SOURCE", None)] + ([("Py_LIMITED_API", hex(LIMITED_API))] if LIMITED else []),
    extra_compile_args=["-std=c11", "-fvisibility=hidden"],
    # Only PyInit__core leaves the module: the core's tt_ symbols stay
    # private, so they cannot clash with a libthreadtime.so in the same
    # process and calls between them skip the PLT. Symbols and debug info are
    # ~3/4 of the file and useless to an installed package.
    # -z nodelete: a thread's rseq area may point at the fast clock's
    # descriptor in this file, which the kernel reads at the thread's next
    # switch. -ldl: dlsym (the fast clock's rseq lookup) is in libdl before
    # glibc 2.34, the oldest glibc the wheel supports being 2.17.
    extra_link_args=[f"-Wl,--version-script={HERE / 'ext' / 'exports.map'}", "-pthread",
                     "-Wl,-z,nodelete", "-ldl",
                     *([] if debug_info() else ["-Wl,--strip-all"])],
    # Any header change rebuilds everything: setuptools tracks no includes.
    depends=["ext/exports.map", *sorted(str(p.relative_to(HERE)) for p in (HERE / "ext").glob("*.h")),
             *core_headers(ROOT)],
    py_limited_api=LIMITED,
)

setup(
    version=core_version(ROOT),
    ext_modules=[core],
    cmdclass={"sdist": SdistWithCore, "build_py": BuildPyWithCli},
    # One abi3 wheel serves every CPython from 3.10 on; a free-threaded
    # interpreter gets a wheel of its own (cp313t, ...). A cross-built
    # wheel is tagged for the arch it was built for.
    options={"bdist_wheel": {**({"py_limited_api": ABI3_TAG} if LIMITED else {}),
                             **({"plat_name": f"linux_{ARCH}"} if "THREADTIME_ARCH" in os.environ else {})}},
)
