# Java binding (java/), included by the top Makefile.
#   make test-java        JUnit tests on JDK $(JDK_OLD) and JDK $(JDK_NEW), from a clean build
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
JAVA_MVN = cd $(JAVA_DIR) && $(MVN) $(MVN_FLAGS) -t .toolchains.xml -Djdk.old=$(JDK_OLD) -Djdk.new=$(JDK_NEW)
JMH_JAR := $(JAVA_DIR)/benchmarks/target/benchmarks.jar

.PHONY: test-java java-toolchains bench-java bench-java-build

java-toolchains:
	$(JAVA_DIR)/jdks.sh toolchains $(JAVA_TOOLCHAINS)

# clean: failsafe merges new results into an existing summary file.
test-java: java-toolchains
	$(JAVA_MVN) clean verify

bench-java-build: java-toolchains
	$(JAVA_MVN) -Pbench -DskipITs package

# bench-java-N: every benchmark on JDK N (before JDK 22 only the JNI backend exists).
bench-java-%: bench-java-build
	"$$($(JAVA_DIR)/jdks.sh home $*)/bin/java" -jar $(JMH_JAR) $(JMH) $$([ $* -ge 22 ] || echo -p backend=jni)

bench-java: bench-java-$(JDK_OLD) bench-java-$(JDK_NEW)

TEST_TARGETS += test-java
