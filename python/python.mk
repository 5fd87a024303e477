# The Python binding (included by the top Makefile).
#   make test-python    build the extension into a venv, run pytest
#   make bench-python   the binding against the other ways Python reads CPU time
#   make chart          `threadtime bench --json` drawn as PNG + HTML
# Everything lives in a venv under build-python/; nothing touches the
# system Python. PYTHON3 picks the interpreter the venv is made from.
PYTHON3 ?= python3
PY_VENV ?= build-python/venv
PY := $(PY_VENV)/bin/python
BENCH_JSON ?= $(BUILD)/bench.json
CHART_DIR ?= $(BUILD)/chart

TEST_TARGETS += test-python
LOAD_TARGETS += test-python-clocks
.PHONY: python-install test-python test-python-clocks bench-python chart clean-python

clean: clean-python
clean-python:
	rm -rf build-python python/build python/dist python/src/threadtime.egg-info

$(PY):
	$(PYTHON3) -m venv $(PY_VENV)
	$(PY) -m pip install -q setuptools wheel

# Rebuilds from the current core sources every time (a few seconds); the
# extras bring pytest, psutil and matplotlib from PyPI on the first run.
python-install: $(PY)
	$(PY) -m pip install -q --no-build-isolation './python[test,chart,bench]'

test-python: python-install
	$(PY) -m pytest python/tests

# The clock and thread tests alone (make test-load runs them under load).
test-python-clocks: python-install
	$(PY) -m pytest python/tests/test_clocks.py python/tests/test_threads.py

bench-python: python-install
	$(PY) python/bench/bench.py

# Delete $(BENCH_JSON) to measure again.
$(BENCH_JSON):
	$(MAKE) build
	$(THREADTIME) bench --json > $@.tmp && mv $@.tmp $@

chart: python-install $(BENCH_JSON)
	$(PY) -m threadtime.chart $(BENCH_JSON) -o $(CHART_DIR)
