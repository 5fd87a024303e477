# Java binding (java/), included by the top Makefile.
#   make test-java        JUnit tests on JDK $(JDK_OLD), JDK $(JDK_NEW) and a Java 21
#                         runtime if there is one, from a clean build
#   make bench-java-17    JMH on JDK 17 (JNI backend)
#   make bench-java-25    JMH on JDK 25 (FFM and JNI backends side by side)
#   make bench-java       both
# The JDKs are found by java/jdks.sh (no paths here); it writes the Maven
# toolchains file the build reads. JMH=... overrides the JMH arguments.
JAVA_DIR := java
MVN ?= mvn
MVN_FLAGS ?= -B -q
JDK_OLD ?= 17
JDK_NEW ?= 25
JMH ?= -f 1 -wi 3 -i 5
JAVA_TOOLCHAINS := $(JAVA_DIR)/.toolchains.xml
# The newer JDK also provides the jvmti.h the virtual-thread agent is built with.
JAVA_MVN = agent_jdk=$$($(JAVA_DIR)/jdks.sh home $(JDK_NEW)) && cd $(JAVA_DIR) && \
	$(MVN) $(MVN_FLAGS) -t .toolchains.xml -Djdk.old=$(JDK_OLD) -Djdk.new=$(JDK_NEW) -Djdk.agent.home=$$agent_jdk
JMH_JAR := $(JAVA_DIR)/benchmarks/target/benchmarks.jar
# The -javaagent: the agent module's shaded JAR, which carries the API too.
AGENT_JAR := $(JAVA_DIR)/agent/target/threadtime-agent-0.1.0.jar

.PHONY: test-java java-toolchains java-install bench-java bench-java-build

java-toolchains:
	$(JAVA_DIR)/jdks.sh toolchains $(JAVA_TOOLCHAINS)

# clean: failsafe merges new results into an existing summary file. The
# probe tests read traces with the CLI, hence `build`. A Java
# 21 runtime, if jdks.sh finds one (.ci/deps.d/jdk21.sh installs it), runs
# the tests a third time.
# Then every native the JAR carries (libraries, the threadtime command) is
# checked to need no glibc newer than $(GLIBC_FLOOR) (docs/platforms.md), and
# java/publish-test.sh deploys every artifact to a file repository and builds
# a project from it alone.
JAR_NATIVES = $(JAVA_DIR)/threadtime/target/classes/io/threadtime/native
test-java: java-toolchains build
	@jdk21=$$($(JAVA_DIR)/jdks.sh runtime 21 2>/dev/null) || echo "test-java: no Java 21 here; testing on $(JDK_OLD) and $(JDK_NEW) only"; \
	set -x; $(JAVA_MVN) clean verify -Dthreadtime.cli=$(abspath $(THREADTIME)) $${jdk21:+-Djdk21.skip=false -Djdk21.java=$$jdk21/bin/java}
	scripts/check-glibc.sh $(GLIBC_FLOOR) $(JAR_NATIVES)/linux-*/*
	agent_jdk=$$($(JAVA_DIR)/jdks.sh home $(JDK_NEW)) && $(JAVA_DIR)/publish-test.sh $(MVN_FLAGS) -t .toolchains.xml \
		-Djdk.old=$(JDK_OLD) -Djdk.new=$(JDK_NEW) -Djdk.agent.home=$$agent_jdk

# The JARs into the local Maven repository, for java/agent/vthreads-tests (no tests here).
java-install: java-toolchains
	$(JAVA_MVN) -DskipITs install

bench-java-build: java-toolchains
	$(JAVA_MVN) -Pbench -DskipITs package

# bench-java-N: every benchmark on JDK N (before JDK 22 only the JNI backend exists).
bench-java-%: bench-java-build
	"$$($(JAVA_DIR)/jdks.sh home $*)/bin/java" -jar $(JMH_JAR) $(JMH) $$([ $* -ge 22 ] || echo -p backend=jni)

bench-java: bench-java-$(JDK_OLD) bench-java-$(JDK_NEW)

TEST_TARGETS += test-java
LOAD_TARGETS += test-java

# ---- OpenTelemetry and Micrometer (java/otel, java/micrometer) ----
# Both modules are in the reactor, so test-java runs their tests too;
# test-otel runs only theirs (the core is built, its tests skipped here).
#   make test-otel        the extension under the real OpenTelemetry agent,
#                         the library form and the Micrometer binder, on
#                         JDK $(JDK_OLD), a Java 21 runtime if any, and JDK $(JDK_NEW)
#   make bench-otel       throughput, p99 and CPU per request of a service on
#                         virtual threads (LoadBench's otel suite): no agent,
#                         the OpenTelemetry agent alone, + extension, + extension
#                         and accounting, each with HotSpot's transition flag
#                         too (OTEL_BENCH="rounds seconds warmup concurrency
#                         burn_us calls wait_ms"); then the span processor's
#                         own cost per span
#   make otel-screenshot  docs/cpu-per-request.png from test-otel's JDK 25 trace
OTEL_BENCH ?= 5 10 10 8 2000 1 5
OTEL_DIR := $(JAVA_DIR)/otel
.PHONY: test-otel bench-otel otel-bench-build

test-otel: java-toolchains
	@jdk21=$$($(JAVA_DIR)/jdks.sh runtime 21 2>/dev/null) || echo "test-otel: no Java 21 here"; \
	set -x; ($(JAVA_MVN) -pl threadtime,agent -DskipITs clean install) && \
	($(JAVA_MVN) -pl otel,micrometer clean verify $${jdk21:+-Djdk21.skip=false -Djdk21.java=$$jdk21/bin/java})

# What LoadBench and SpanCostBench run from: the otel module's test classes
# and their classpath (also used by bench-jvmti-http in jvmti/jvmti.mk).
OTEL_BENCH_CP = $(OTEL_DIR)/target/test-classes:$(OTEL_DIR)/target/classes:$$(cat $(OTEL_DIR)/target/bench.classpath)
otel-bench-build: java-toolchains
	$(JAVA_MVN) -pl otel -am -DskipITs package dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath

# $(call otel_load_bench,JAVA,ARGUMENTS): LoadBench (arguments: suite rounds
# seconds warmup concurrency burn_us calls wait_ms output_dir) on that java,
# with the paths of the agents it loads into the service.
otel_load_bench = "$(1)" -Dotel.agent.jar=$(OTEL_DIR)/target/otel/opentelemetry-javaagent.jar \
	-Dextension.jar=$$(ls $(OTEL_DIR)/target/threadtime-otel-*-extension.jar) \
	-Dthreadtime.jar=$(abspath $(AGENT_JAR)) \
	-cp $(OTEL_BENCH_CP) io.threadtime.otel.LoadBench $(2)

bench-otel: otel-bench-build
	$(call otel_load_bench,$$($(JAVA_DIR)/jdks.sh home $(JDK_NEW))/bin/java,otel $(OTEL_BENCH) $(OTEL_DIR)/target/bench-runs/otel)
	@java25="$$($(JAVA_DIR)/jdks.sh home $(JDK_NEW))/bin/java"; \
	cp=$(OTEL_BENCH_CP); \
	agent=$$($$java25 -cp $$cp io.threadtime.VirtualThreadCpu) && for t in virtual platform; do \
		$$java25 -agentpath:$$agent=mode=exact --enable-native-access=ALL-UNNAMED -cp $$cp io.threadtime.otel.SpanCostBench 5 200000 $$t || exit 1; done

# What a span's run-queue wait costs (docs/where-time-went.md): SpanCostBench on a
# platform thread, JDK $(JDK_NEW), the processor with and without the wait beside one
# pread of schedstat from Java, with the fast clock (the wait kept under its anchor)
# and without it (THREADTIME_FAST_CLOCK=0: a pread at every read). SPAN_BENCH="rounds spans".
SPAN_BENCH ?= 9 200000
.PHONY: bench-otel-spans
bench-otel-spans: otel-bench-build
	@java25="$$($(JAVA_DIR)/jdks.sh home $(JDK_NEW))/bin/java"; cp=$(OTEL_BENCH_CP); \
	for fast in 1 0; do THREADTIME_FAST_CLOCK=$$fast $$java25 --enable-native-access=ALL-UNNAMED -cp $$cp \
		io.threadtime.otel.SpanCostBench $(SPAN_BENCH) platform || exit 1; done

# The screenshot in docs/cpu-per-request.md: a trace from test-otel's JDK 25
# run (the extension with the JVMTI agent), as an HTML page, in headless Chromium.
OTEL_TRACE_RUN := $(OTEL_DIR)/target/service-runs/jdk$(JDK_NEW)/vthreads-jvmti.stderr
otel-screenshot:
	@test -f $(OTEL_TRACE_RUN) || { echo "otel-screenshot: run make test-otel first ($(OTEL_TRACE_RUN) is missing)"; exit 1; }
	python3 $(OTEL_DIR)/docs/span_page.py $(OTEL_TRACE_RUN) $(OTEL_DIR)/target/span.html
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1100,330 \
		--screenshot=$(CURDIR)/docs/cpu-per-request.png file://$(CURDIR)/$(OTEL_DIR)/target/span.html
.PHONY: otel-screenshot

# ---- probes ----
#   make bench-probes     what a probe adds per call to a small method on JDK
#                         $(JDK_OLD) and $(JDK_NEW), beside JFR's jdk.MethodTiming
#                         (JDK 25+) and `threadtime bench` virt_self, in one run
#                         (PROBE_BENCH_RUNS interleaved JVMs per row, medians)
PROBE_BENCH_RUNS ?= 5
.PHONY: bench-probes
bench-probes: java-toolchains build
	$(JAVA_MVN) -pl threadtime,agent -DskipITs package
	bench/probes/run.sh $(abspath $(AGENT_JAR)) $(abspath $(THREADTIME)) \
		$(PROBE_BENCH_RUNS) $(JDK_OLD) $(JDK_NEW)

# ---- the fast clock in Java ----
#   make bench-java-fastclock  ThreadTime.currentThreadCpuTime() beside the JDK's
#                         getCurrentThreadCpuTime() and a bare counter read, on
#                         JDK $(JDK_OLD) and $(JDK_NEW), FASTCLOCK_BENCH_RUNS runs
#                         interleaved, medians (java/benchmarks/fastclock.sh)
FASTCLOCK_BENCH_RUNS ?= 5
.PHONY: bench-java-fastclock
bench-java-fastclock: bench-java-build
	java/benchmarks/fastclock.sh $(FASTCLOCK_BENCH_RUNS) $(JDK_OLD) $(JDK_NEW)

# ---- the first call ----
#   make bench-java-first-call  ThreadTime.currentThreadCpuTime()'s first call
#                         in a fresh JVM beside the JDK bean's first
#                         getCurrentThreadCpuTime() and a first System.nanoTime(),
#                         on JDK $(JDK_OLD), a Java 21 runtime if there is one, and
#                         JDK $(JDK_NEW), FIRST_CALL_RUNS JVMs each
#                         (java/benchmarks/first-call.sh)
FIRST_CALL_RUNS ?= 9
.PHONY: bench-java-first-call
bench-java-first-call: java-toolchains
	$(JAVA_MVN) -pl threadtime -DskipITs package
	java/benchmarks/first-call.sh $(JAVA_DIR)/threadtime/target/threadtime-0.1.0.jar $(FIRST_CALL_RUNS) \
		$(JDK_OLD) $$($(JAVA_DIR)/jdks.sh runtime 21 >/dev/null 2>&1 && echo 21) $(JDK_NEW)
