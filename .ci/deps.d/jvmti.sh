#!/usr/bin/env bash
# Virtual-thread agent (jvmti/): check that a JDK 21+ is installed (found by
# java/jdks.sh), then fetch every Maven plugin and dependency its tests use by
# running the one test that needs no agent, so `make test-jvmti`
# needs no network.
set -euo pipefail
cd "$(dirname "$0")/../.."
home=
for v in 27 26 25 24 23 22 21; do
  home=$(java/jdks.sh home "$v" 2>/dev/null) && break
done
if [ -z "$home" ]; then
  echo "jvmti.sh: a JDK 21+ is needed for make test-jvmti; install one under /usr/lib/jvm" \
       "or list its directory in TT_JDK_DIRS" >&2
  exit 1
fi
JAVA_HOME=$home mvn -B -q -f java/agent/vthreads-tests/pom.xml clean test-compile surefire:test@absent jar:jar -Dtest=AgentAbsentTest
