# CPU time of virtual threads: the JVMTI agent and its Java API.
# Included by the root Makefile (-include jvmti/jvmti.mk).
#   make test-jvmti    build the agent, run its C test, install the threadtime
#                      JAR (java/, which carries the Java API and a copy of
#                      the agent) into the local Maven repository, then run
#                      the Java tests (five JVMs: exact, mounted, events off,
#                      events empty, no agent) on every Java 21+ that
#                      java/jdks.sh finds
#   make bench-jvmti   on Java 21 and the newest JDK (never part of the tests):
#                      the yield loop, ns per mount+unmount for no agent, each
#                      agent and mode, with and without HotSpot's transition
#                      flag (JVMTI_YIELD_RUNS=5); then a million virtual
#                      threads, the same configurations, interleaved
#                      (JVMTI_BENCH_RUNS=7 JVMTI_BENCH_THREADS=1000000)
#   make bench-jvmti-http  on Java 21 and the newest JDK (never part of the
#                      tests): an HTTP service on loopback, one virtual thread
#                      per request, under a fixed concurrency of Java
#                      HttpClient clients (java/otel's LoadBench, vthreads
#                      suite): throughput, p99, service CPU per request and
#                      CPU charged per request against CPU burned, for no
#                      agent and each agent and mode, with and without the
#                      flag (JVMTI_HTTP_BENCH="rounds seconds warmup
#                      concurrency burn_us calls wait_ms")
JVMTI_BUILD ?= jvmti/build
JVMTI_AGENT = $(abspath $(JVMTI_BUILD))/libthreadtime_vthreads.so
# The -javaagent's JAR, which also carries the Java API (VirtualThreadCpu,
# TaskCpu) and a copy of the JVMTI agent.
JVMTI_JAR = java/agent/target/threadtime-agent-0.1.0.jar
# Feature versions looked for; those not installed are skipped.
JVMTI_FEATURES ?= 21 22 23 24 25 26 27
JVMTI_MVN = mvn -B -q -f java/agent/vthreads-tests/pom.xml
JVMTI_BENCH_RUNS ?= 7
JVMTI_YIELD_RUNS ?= 5
JVMTI_BENCH_THREADS ?= 1000000
JVMTI_HTTP_BENCH ?= 5 10 5 16 300 1 1

TEST_TARGETS += test-jvmti
LOAD_TARGETS += test-jvmti

.PHONY: jvmti-agent test-jvmti bench-jvmti bench-jvmti-http

# Shell prefix of a recipe: sets $newest to the home of the newest JDK 21+,
# or stops with a message.
JVMTI_NEWEST = newest=$$(for v in $(JVMTI_FEATURES); do java/jdks.sh home $$v 2>/dev/null || true; done | tail -n 1); \
	if [ -z "$$newest" ]; then \
	  echo "jvmti: no JDK 21+ found (java/jdks.sh searches \$$JAVA_HOME, \$$TT_JDK_DIRS, /usr/lib/jvm, /opt/java)" >&2; \
	  exit 1; \
	fi

# Built against the newest JDK's jvmti.h; it asks the JVM for JVMTI 21, so
# the same library runs on every JDK 21+. A JDK 17, if there is one, checks
# that the agent stays passive on a JVM without virtual threads.
jvmti-agent:
	@$(JVMTI_NEWEST); \
	old=$$(java/jdks.sh home 17 2>/dev/null || true); \
	cmake -S jvmti -B $(JVMTI_BUILD) -G Ninja -DTT_JDK_HOME=$$newest -DTT_OLD_JDK_HOME=$$old \
	  -DTT_THREADTIME_JAR=$(abspath $(JVMTI_JAR)) >/dev/null && \
	cmake --build $(JVMTI_BUILD)

# The newest JDK compiles the tests; each Java 21+ found (a runtime without
# javac is enough) runs them.
test-jvmti: jvmti-agent java-install
	ctest --test-dir $(JVMTI_BUILD) --output-on-failure
	@set -e; $(JVMTI_NEWEST); \
	for v in $(JVMTI_FEATURES); do \
	  home=$$(java/jdks.sh runtime $$v 2>/dev/null) || continue; \
	  echo "test-jvmti: Java $$v ($$home)"; \
	  JAVA_HOME=$$newest $(JVMTI_MVN) clean verify -Dagent.path=$(JVMTI_AGENT) -Djvm=$$home/bin/java; \
	done; \
	java/jdks.sh runtime 21 >/dev/null 2>&1 || echo "test-jvmti: no Java 21 here; not tested on it"

# On Java 21 and the newest JDK: the yield loop (yield.sh: ns per mount+unmount,
# with `threadtime bench` sched_self in the same run), then the million threads.
bench-jvmti: jvmti-agent java-install build
	@$(JVMTI_NEWEST); \
	for home in $$(java/jdks.sh runtime 21 2>/dev/null) $$newest; do \
	  TOOLS_HOME=$$newest jvmti/bench/yield.sh $$home $(JVMTI_AGENT) $(abspath $(JVMTI_JAR)) $(THREADTIME) $(JVMTI_YIELD_RUNS); \
	  TOOLS_HOME=$$newest jvmti/bench/run.sh $$home $(JVMTI_AGENT) $(JVMTI_JAR) $(JVMTI_BENCH_RUNS) $(JVMTI_BENCH_THREADS); \
	done

# The service and the load generator run on the same Java; the results of
# each go under java/otel/target/bench-runs/vthreads-jdkN.
bench-jvmti-http: otel-bench-build
	@set -e; $(JVMTI_NEWEST); \
	for home in $$(java/jdks.sh runtime 21 2>/dev/null) $$newest; do \
	  v=$$("$$home/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'); \
	  $(call otel_load_bench,$$home/bin/java,vthreads $(JVMTI_HTTP_BENCH) $(OTEL_DIR)/target/bench-runs/vthreads-jdk$$v); \
	done

# A real server on virtual threads: Helidon 4 SE, exact against
# mounted mode against no agent, with each piece's carrier clock as the
# truth (jvmti/bench/helidon/run.sh; HELIDON_BENCH="runs seconds warmup clients").
HELIDON_BENCH ?= 5 10 5 8
.PHONY: bench-jvmti-helidon
bench-jvmti-helidon: java-install
	jvmti/bench/helidon/run.sh $(abspath $(JVMTI_JAR)) $(HELIDON_BENCH) "21 25"

# Where a real server's time went: the same Helidon service in mode=exact,
# idle, beside a busy loop per CPU, and in a cgroup held to half a CPU;
# each request's CPU, carrier wait, parked, pinned and mounted-off-CPU time
# against the carriers' own schedstat (jvmti/bench/helidon/where.sh;
# WHERE_BENCH="runs seconds warmup clients").
WHERE_BENCH ?= 3 10 5 8
.PHONY: bench-where-helidon
bench-where-helidon: java-install
	jvmti/bench/helidon/where.sh $(abspath $(JVMTI_JAR)) $(WHERE_BENCH) "21 25"
