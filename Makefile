# Thin wrapper over CMake (and the Java and Python builds, included below).
#   make demo   build, then show the tool at work on this machine
#   make test   every test: C (plain, ASan+UBSan, TSan), Java, Python
BUILD ?= build
CMAKE_FLAGS ?= -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
THREADTIME := $(BUILD)/cli/threadtime

# Components append their own targets to these (java/java.mk, python/python.mk).
# LOAD_TARGETS: the timing-sensitive suites `make test-load` runs under load.
TEST_TARGETS := test-c test-asan test-tsan
DEMO_TARGETS := demo-bench
LOAD_TARGETS := test-c

.PHONY: all deps build demo demo-bench test test-load test-c test-asan test-tsan loop bench install clean

all: build

# Installs missing Debian packages and each component's dependencies.
deps:
	scripts/deps.sh

build:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD)

demo-bench: build
	$(THREADTIME) bench --quick

bench: build
	$(THREADTIME) bench

test-c: build
	ctest --test-dir $(BUILD) --output-on-failure

test-asan:
	cmake -S . -B build-asan $(CMAKE_FLAGS) -DTT_SANITIZE=address,undefined
	cmake --build build-asan
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --test-dir build-asan --output-on-failure

# TSan runs the tests labelled "concurrent" (the parts with threads racing).
test-tsan:
	cmake -S . -B build-tsan $(CMAKE_FLAGS) -DTT_SANITIZE=thread
	cmake --build build-tsan
	TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan -L concurrent --output-on-failure

# Reruns the C suite to shake out races: make loop N=50
N ?= 20
loop: build
	ctest --test-dir $(BUILD) --repeat until-fail:$(N) --output-on-failure

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz

# ---- the event log (issue 3) ----
DEMO_TARGETS += demo-events
TEST_TARGETS += test-fuzz
.PHONY: demo-events test-fuzz bench-event-dump

# Runs the instrumented demo, prints its trace and writes the Chrome trace.
demo-events: build
	$(BUILD)/cli/event_demo $(BUILD)/event_demo.trace
	$(THREADTIME) dump $(BUILD)/event_demo.trace
	$(THREADTIME) dump --format chrome -o $(BUILD)/event_demo.json $(BUILD)/event_demo.trace
	@echo "Chrome trace JSON: $(BUILD)/event_demo.json (open it in https://ui.perfetto.dev)"

# Fuzzes the trace reader for FUZZ_SECONDS (needs clang; .ci/deps.d/fuzz.apt).
# Seeds: a dump and a crash-safe file from the demo, with small rings (names,
# a probe summary, virtual-thread markers), and the golden 1.0 and 1.1 traces.
FUZZ_SECONDS ?= 60
test-fuzz: build
	cmake -S fuzz -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang
	cmake --build build-fuzz
	mkdir -p build-fuzz/corpus
	THREADTIME_RING=16 THREADTIME_FILE=build-fuzz/corpus/seed-crash.trace \
		$(BUILD)/cli/event_demo build-fuzz/corpus/seed-dump.trace >/dev/null
	cp fuzz/seeds/*.trace build-fuzz/corpus/
	build-fuzz/fuzz_trace_read -max_total_time=$(FUZZ_SECONDS) -max_len=16384 \
		-artifact_prefix=build-fuzz/ build-fuzz/corpus

# Dump speed: 10 million events to a binary trace, then to Chrome JSON.
bench-event-dump: build
	$(BUILD)/cli/event_dump_bench $(BUILD)/event_dump_bench.trace
	bash -c 'time $(THREADTIME) dump --format chrome -o $(BUILD)/event_dump_bench.json $(BUILD)/event_dump_bench.trace'
	rm -f $(BUILD)/event_dump_bench.trace $(BUILD)/event_dump_bench.json

# How lumpy this host's per-thread CPU clock is, idle and then with a busy
# loop per CPU beside it (CLOCK_STEPS_SECONDS each).
CLOCK_STEPS_SECONDS ?= 30
.PHONY: bench-clock-steps
bench-clock-steps: build
	@echo "idle:"; $(BUILD)/cli/cpu_clock_steps $(CLOCK_STEPS_SECONDS)
	@echo "with a busy loop per CPU:"; scripts/with-load.sh $(BUILD)/cli/cpu_clock_steps $(CLOCK_STEPS_SECONDS)

# threadtime run's floors (issue 26): per-thread cost, the sampler with
# 1,000 threads, xz -T2 on RUN_BENCH_MB MB with and without it.
RUN_BENCH_MB ?= 40
.PHONY: bench-run
bench-run: build
	python3 bench/run_bench.py $(THREADTIME) $(BUILD)/preload/run_bench $(BUILD)/preload/libthreadtime_run.so $(RUN_BENCH_MB)

-include java/java.mk
-include python/python.mk
-include jvmti/jvmti.mk

demo: $(DEMO_TARGETS)
test: deps
	$(MAKE) $(TEST_TARGETS)

# The timing-sensitive suites (C clocks, the Java bean and clocks on every
# JDK, the virtual-thread agent in every mode, the Python clocks) with one
# busy loop per CPU beside them; the loops stop with the target.
test-load: deps
	scripts/with-load.sh $(MAKE) $(LOAD_TARGETS)
