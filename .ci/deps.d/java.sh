#!/usr/bin/env bash
# The Java binding: check that both test JDKs are installed (java/jdks.sh
# finds them), then fetch every Maven plugin and dependency by running the
# build once with a test filter that matches nothing (dependency:go-offline
# misses the test providers and cannot see the reactor's own module), so
# `make test-java` and `make bench-java` need no network. JDK 25 also gives
# the jvmti.h the JAR's virtual-thread agent is built with.
set -euo pipefail
cd "$(dirname "$0")/../.."
for v in 17 25; do
  java/jdks.sh home "$v" >/dev/null || {
    echo "java.sh: JDK $v is needed for make test-java; install it under /usr/lib/jvm" \
         "or list its directory in TT_JDK_DIRS" >&2
    exit 1
  }
done
java/jdks.sh toolchains java/.toolchains.xml
agent_jdk=$(java/jdks.sh home 25)
cd java
# install: java/agent/vthreads-tests (jvmti.sh, next) depend on the threadtime-agent JAR.
mvn -B -q -t .toolchains.xml -Pbench clean install -Dit.test=FetchOnly -Dfailsafe.failIfNoSpecifiedTests=false \
  -Djdk.agent.home="$agent_jdk"
