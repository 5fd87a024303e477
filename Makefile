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
	rm -rf $(BUILD) build-asan build-tsan build-fuzz build-zig-* build-qemu-*

# threadtime run on a real program: xz compressing 16 MB with two worker
# threads (-1: 3 MB blocks), the CPU of each thread.
DEMO_TARGETS += demo-run
.PHONY: demo-run
demo-run: build
	head -c 16000000 /dev/urandom > $(BUILD)/demo-run.input
	$(THREADTIME) run -- xz -1 -T2 -k -f $(BUILD)/demo-run.input
	rm -f $(BUILD)/demo-run.input $(BUILD)/demo-run.input.xz

# ---- the event log ----
DEMO_TARGETS += demo-events
TEST_TARGETS += test-fuzz
.PHONY: demo-events test-fuzz bench-event-dump

# Runs the instrumented demo, prints its trace and writes the Chrome trace.
demo-events: build
	$(BUILD)/cli/event_demo $(BUILD)/event_demo.trace
	$(THREADTIME) dump $(BUILD)/event_demo.trace
	$(THREADTIME) dump --format chrome -o $(BUILD)/event_demo.json $(BUILD)/event_demo.trace
	@echo "Chrome trace JSON: $(BUILD)/event_demo.json (open it in https://ui.perfetto.dev)"

# Fuzzes the trace reader for FUZZ_SECONDS, then the run recordings' readers
# (test-fuzz-run) as long (needs clang; .ci/deps.d/fuzz.apt).
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
	$(MAKE) test-fuzz-run

# Fuzzes the readers of threadtime run's recordings and every report for
# FUZZ_SECONDS. Seeds: a recording of sh and its child with small files
# (THREADTIME_RUN_*), one process's file cut out of it (the reporter reads
# those from its run directory), a run's log (lone processes and an exec
# chain), and test_run_report's hand-made ones
# (hostile names, exe[] without its NUL, a cut header).
.PHONY: test-fuzz-run
test-fuzz-run: build
	cmake -S fuzz -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang
	cmake --build build-fuzz
	mkdir -p build-fuzz/run-corpus
	THREADTIME_RUN_THREADS=4 THREADTIME_RUN_SAMPLES=8 $(THREADTIME) run --interval 1 \
		-o build-fuzz/run-corpus/seed-run.ttrunset --report build-fuzz/seed-run.txt -- sh -c 'sleep 0.01 & wait'
	python3 -c 'import struct,sys; b=open(sys.argv[1],"rb").read(); \
		o=(48 if struct.unpack_from("<I",b,8)[0]==1 else 112)+struct.unpack_from("<I",b,20)[0]; \
		n=struct.unpack_from("<Q",b,o)[0]; open(sys.argv[2],"wb").write(b[o+8:o+8+n])' \
		build-fuzz/run-corpus/seed-run.ttrunset build-fuzz/run-corpus/seed-proc.ttrun
	$(THREADTIME) run --report build-fuzz/seed-log.txt -- sh -c \
		'/bin/true; sh -c "exec /bin/true"; cp "$$THREADTIME_RUN_DIR/run.ttlog" build-fuzz/run-corpus/seed-log.ttlog'
	cp fuzz/seeds/*.ttrunset build-fuzz/run-corpus/
	build-fuzz/fuzz_run_set -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
		-artifact_prefix=build-fuzz/run- build-fuzz/run-corpus

# Dump speed: 10 million events to a binary trace, then to Chrome JSON.
# BASELINE_CLI=path/to/an/older/threadtime times that one on the same file,
# alternating with this build's, BENCH_ROUNDS times each.
BENCH_ROUNDS ?= 3
bench-event-dump: build
	$(BUILD)/cli/event_dump_bench $(BUILD)/event_dump_bench.trace
	for i in $$(seq $(BENCH_ROUNDS)); do for cli in $(abspath $(THREADTIME)) $(BASELINE_CLI); do \
		/usr/bin/time -f "$$cli chrome: %e s wall, %U s user" $$cli dump --format chrome \
			-o $(BUILD)/event_dump_bench.json $(BUILD)/event_dump_bench.trace; done; done
	rm -f $(BUILD)/event_dump_bench.trace $(BUILD)/event_dump_bench.json

# Pairing speed on its worst case: PAIR_N begins of one id, then PAIR_N ends
# of another, on one thread; Chrome and --summary output timed on it (and
# with BASELINE_CLI=path, an older threadtime on the same file).
PAIR_N ?= 131072
.PHONY: bench-pairing
bench-pairing: build
	$(BUILD)/cli/pair_bench $(BUILD)/pair_bench.trace $(PAIR_N)
	for cli in $(abspath $(THREADTIME)) $(BASELINE_CLI); do \
		/usr/bin/time -f "$$cli chrome: %e s wall" $$cli dump --format chrome \
			-o $(BUILD)/pair_bench.json $(BUILD)/pair_bench.trace; \
		/usr/bin/time -f "$$cli --summary: %e s wall" $$cli dump --summary \
			-o $(BUILD)/pair_bench.txt $(BUILD)/pair_bench.trace; done
	rm -f $(BUILD)/pair_bench.trace $(BUILD)/pair_bench.json $(BUILD)/pair_bench.txt

# The consistent split's cost against one getrusage(), interleaved rounds.
.PHONY: bench-split
bench-split: build
	$(BUILD)/cli/split_cost

# The run report on recordings of 60,000 and 80,000 thread records, text
# and --group, medians of BENCH_ROUNDS runs; BASELINE_CLI=path/to/an/older/
# threadtime times it alternately on the same files.
.PHONY: bench-run-report
bench-run-report: build
	python3 bench/run_report_bench.py $(THREADTIME) $(BUILD) "$(BASELINE_CLI)" $(BENCH_ROUNDS)

# The memory threadtime run holds to read a run's log of 20,000 and 60,000
# lone processes (20 and 59 MiB), and with none (the floor), medians of
# BENCH_ROUNDS runs; BASELINE_CLI=path/to/an/older/threadtime alternately.
.PHONY: bench-run-log
bench-run-log: build
	python3 bench/run_log_bench.py $(THREADTIME) $(BUILD) "$(BASELINE_CLI)" $(BENCH_ROUNDS) 0 20000 60000

# How lumpy this host's per-thread CPU clock is, idle and then with a busy
# loop per CPU beside it (CLOCK_STEPS_SECONDS each).
CLOCK_STEPS_SECONDS ?= 30
.PHONY: bench-clock-steps
bench-clock-steps: build
	@echo "idle:"; $(BUILD)/cli/cpu_clock_steps $(CLOCK_STEPS_SECONDS)
	@echo "with a busy loop per CPU:"; scripts/with-load.sh $(BUILD)/cli/cpu_clock_steps $(CLOCK_STEPS_SECONDS)

# The fast clock: its cost beside rdtsc and the system call, and
# its accuracy idle, with 1 and with 1.5 busy loops per CPU, FAST_CLOCK_RUNS
# rounds interleaved, medians.
FAST_CLOCK_RUNS ?= 5
.PHONY: bench-fast-clock
bench-fast-clock: build
	bench/fast-clock.sh $(BUILD) $(FAST_CLOCK_RUNS)

# The perf_event page as a second "switched out?" signal for the fast clock:
# whether it moves at every switch, its read cost, its cost per switch.
.PHONY: bench-perf-page
bench-perf-page: build
	$(BUILD)/cli/perf_page_probe 5

# threadtime run's floors: per-thread cost (empty threads, and threads of
# 2.1 ms, whose wait for a CPU is read), the sampler with 1,000 threads, xz
# -T2 on RUN_BENCH_MB MB with and without it. BASELINE_RUN_LIB=another
# build's libthreadtime_run.so adds its per-thread rows.
RUN_BENCH_MB ?= 40
.PHONY: bench-run
RUN_LIB = $(firstword $(wildcard $(BUILD)/lib*/libthreadtime_run.so $(BUILD)/lib*/*/libthreadtime_run.so))
bench-run: build
	python3 bench/run_bench.py $(THREADTIME) $(BUILD)/preload/run_bench $(RUN_LIB) $(RUN_BENCH_MB)

# The cost per process alone (200 x /bin/true from sh), RUN_PROCS_ROUNDS
# interleaved rounds; BASELINE_CLI=path/to/an/older/threadtime runs that one
# beside it.
RUN_PROCS_ROUNDS ?= 9
.PHONY: bench-run-procs
bench-run-procs: build
	BASELINE_CLI="$(BASELINE_CLI)" python3 bench/run_bench.py $(THREADTIME) $(BUILD)/preload/run_bench $(RUN_LIB) 0 $(RUN_PROCS_ROUNDS) 4

-include java/java.mk
-include python/python.mk
-include jvmti/jvmti.mk

demo: deps
	$(MAKE) $(DEMO_TARGETS)
test: deps
	$(MAKE) $(TEST_TARGETS)

# The timing-sensitive suites (C clocks, the Java bean and clocks on every
# JDK, the virtual-thread agent in every mode, the Python clocks) with one
# busy loop per CPU beside them; the loops stop with the target.
test-load: deps
	scripts/with-load.sh $(MAKE) $(LOAD_TARGETS)

# ---- the shipped natives: glibc 2.17+, x86-64 and aarch64 ----
#   make natives        libthreadtime.so (a release's) and the CLI for each arch
#                       in NATIVE_ARCHES, by zig's clang against glibc 2.17
#                       (cmake/zig-<arch>.cmake), in build-zig-<arch>/
#   make test-natives   every shipped native (those, the JAR's, the wheels')
#                       needs glibc $(GLIBC_FLOOR) or older; the aarch64 build's C
#                       tests and the aarch64 wheel's Python tests run under
#                       qemu-user
#   make bench-natives  `threadtime bench` of the gcc build and the x86-64 zig
#                       build side by side, in one run (scripts/bench-compare.sh)
# docs/platforms.md has the platforms and how each artifact is built.
NATIVE_ARCHES := x86_64 aarch64
GLIBC_FLOOR := 2.17
ZIG_CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTT_BUILD_TESTS=OFF
NATIVES_JAR := $(JAVA_DIR)/threadtime/target/threadtime-0.1.0.jar
# Tests the aarch64 run leaves out, and why: test_install builds a consumer
# with the host's compiler; test_attach attaches the CLI to the host's JVMs;
# test_dump_golden, test_event_files, test_run_report and test_unprivileged
# start aarch64 programs as children or from the host's Python and shell (the
# CLI; a setuid probe; the suites run as nobody), which needs qemu registered
# with binfmt_misc (they run when it is); test_fallback's seccomp filter would judge qemu's own
# x86-64 system calls; test_event_calib holds the counter to 10 ppm of the
# wall clock, which qemu's emulated counter does not keep; test_run starts
# the aarch64 CLI from the host's Python and preloads its library into the
# host's xz, java and make.
QEMU_SKIP := test_install|test_attach|test_fallback|test_event_calib|test_run$(if $(wildcard /proc/sys/fs/binfmt_misc/qemu-aarch64),,|test_dump_golden|test_event_files|test_run_report|test_unprivileged)
.PHONY: natives test-natives test-natives-qemu bench-natives

natives:
	set -e; for arch in $(NATIVE_ARCHES); do \
		cmake -S . -B build-zig-$$arch $(ZIG_CMAKE_FLAGS) -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/zig-$$arch.cmake \
			-DTT_ZIG_GLIBC=$(GLIBC_FLOOR); \
		cmake --build build-zig-$$arch; \
	done

# The JAR as test-java left it, else packaged here (no tests).
$(NATIVES_JAR): | java-toolchains
	$(JAVA_MVN) -pl threadtime -DskipITs package

# The aarch64 wheel's Python suite runs under qemu-user too, with an aarch64
# CPython from Debian's arm64 packages (scripts/test-aarch64-wheel.sh).
test-natives: natives wheels $(NATIVES_JAR) test-natives-qemu
	scripts/check-glibc.sh $(GLIBC_FLOOR) $(foreach a,$(NATIVE_ARCHES),build-zig-$(a)/src/libthreadtime.so) \
		$(NATIVES_JAR) $(PY_DIST)/*.whl
	scripts/test-aarch64-wheel.sh $(PY_DIST)/*_aarch64.whl build-qemu-aarch64/python

# The aarch64 C tests, built by zig's clang and run by ctest through
# qemu-aarch64-static (cmake/zig.cmake). The test programs call gettid(),
# which glibc has had since 2.30: they are linked against that version, as
# the test build's library is; the aarch64 glibc qemu runs them with is
# Debian's libc6-arm64-cross.
test-natives-qemu:
	cmake -S . -B build-qemu-aarch64 -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/zig-aarch64.cmake -DTT_ZIG_GLIBC=2.30
	cmake --build build-qemu-aarch64
	ctest --test-dir build-qemu-aarch64 --output-on-failure -E '^($(QEMU_SKIP))$$'

bench-natives: build natives
	scripts/bench-compare.sh $(THREADTIME) build-zig-x86_64/cli/threadtime
TEST_TARGETS += test-natives
