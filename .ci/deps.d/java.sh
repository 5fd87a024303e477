#!/usr/bin/env bash
# The Java binding: check that both test JDKs are installed (java/jdks.sh
# finds them), then fetch every Maven plugin and dependency by running the
# build once with a test filter that matches nothing (dependency:go-offline
# misses the test providers and cannot see the reactor's own module), so
# `make test-java` and `make bench-java` need no network.
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
cd java
mvn -B -q -t .toolchains.xml -Pbench clean verify -Dit.test=FetchOnly -Dfailsafe.failIfNoSpecifiedTests=false
