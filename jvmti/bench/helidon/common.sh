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

# After the caller started the server in the background, writing
# its port to $work/port: waits for the port and runs the clients with JDK
# $java against it, printing their line (the caller stops the server, its
# child).
run_clients() {
  for _ in $(seq 600); do [ -f "$work/port" ] && break; sleep 0.1; done
  [ -f "$work/port" ] || { cat "$work/server.log" >&2; return 1; }
  "$java" -cp "$cp" HelidonBench client "$(cat "$work/port")" "$seconds" "$warmup" "$clients"
}

# Files each KEY=value of the line $out under res[JDK,CONFIG,KEY].
#   file_figures JDK CONFIG KEY...
file_figures() {
  local v=$1 c=$2 k
  shift 2
  for k in "$@"; do
    res[$v,$c,$k]+="$(echo "$out" | tr ' ' '\n' | sed -n "s/^$k=//p") "
  done
}
