# What run.sh and where.sh share (bash, sourced): their arguments, a work
# directory, and HelidonBench built against THREADTIME_AGENT_JAR.
#   default_runs=N; . common.sh JAR [RUNS] [SECONDS] [WARMUP] [CLIENTS] [JDKS]
# Sets jar, runs, seconds, warmup, clients, jdks (an array), here, root,
# work (removed at exit until the caller sets a trap of its own, which must
# remove it too), cp (the classpath to run with) and flag (JDK 21's
# -XX:-DoJVMTIVirtualThreadTransitions).
jar=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
runs=${2:-$default_runs} seconds=${3:-10} warmup=${4:-5} clients=${5:-8}
read -r -a jdks <<<"${6:-21 25}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
. "$root/scripts/bench-lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tools=$("$root/java/jdks.sh" home 25)
(cd "$here" && JAVA_HOME=$tools ${MVN:-mvn} -B -q -DbuildDirectory="$work/target" \
  -Dproject.build.directory="$work/target" dependency:copy-dependencies -DoutputDirectory="$work/libs" \
  -DincludeScope=runtime >"$work/mvn.log" 2>&1) || { cat "$work/mvn.log" >&2; exit 1; }
cp="$work/libs/*:$jar"
"$tools/bin/javac" --release 21 -d "$work/classes" -cp "$cp" "$here/src/main/java/HelidonBench.java"
cp="$work/classes:$cp"
flag="-XX:+UnlockExperimentalVMOptions -XX:-DoJVMTIVirtualThreadTransitions"
