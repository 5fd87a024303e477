# Thin wrapper over CMake (and the Java and Python builds, included below).
#   make demo   build, then show the tool at work on this machine
#   make test   every test: C (plain, ASan+UBSan, TSan), Java, Python
BUILD ?= build
CMAKE_FLAGS ?= -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
THREADTIME := $(BUILD)/cli/threadtime

# Components append their own targets to these (java/java.mk, python/python.mk).
TEST_TARGETS := test-c test-asan test-tsan
DEMO_TARGETS := demo-bench

.PHONY: all deps build demo demo-bench test test-c test-asan test-tsan loop bench install clean

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

-include java/java.mk
-include python/python.mk

demo: $(DEMO_TARGETS)
test: deps
	$(MAKE) $(TEST_TARGETS)
