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

.PHONY: test-java java-toolchains java-install bench-java bench-java-build

java-toolchains:
	$(JAVA_DIR)/jdks.sh toolchains $(JAVA_TOOLCHAINS)

# clean: failsafe merges new results into an existing summary file. A Java
# 21 runtime, if jdks.sh finds one (.ci/deps.d/jdk21.sh installs it), runs
# the tests a third time.
test-java: java-toolchains
	@jdk21=$$($(JAVA_DIR)/jdks.sh runtime 21 2>/dev/null) || echo "test-java: no Java 21 here; testing on $(JDK_OLD) and $(JDK_NEW) only"; \
	set -x; $(JAVA_MVN) clean verify $${jdk21:+-Djdk21.skip=false -Djdk21.java=$$jdk21/bin/java}

# The JAR into the local Maven repository, for jvmti/java's tests (no tests here).
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
