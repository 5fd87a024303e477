#!/usr/bin/env bash
# The virtual-thread agent's benchmark: RUNS rounds, each running the five
# configurations in turn (interleaved, so drift on a shared machine hits all
# alike), then the median wall time of each and its ratio to no agent:
# no agent; loaded with events off (the capability only); events delivered
# to callbacks that do nothing (HotSpot's cost of posting them); mounted and
# exact mode.
#   run.sh JAVA_HOME AGENT_SO API_JAR [RUNS=5] [THREADS=1000000] [YIELDS=4]
# Prints a Markdown table of wall time and of the JVM's CPU time over the
# timed run; every run's figures go to stderr as they come.
set -euo pipefail
java_home=$1 agent=$2 jar=$3 runs=${4:-5} threads=${5:-1000000} yields=${6:-4}
here=$(cd "$(dirname "$0")" && pwd)
classes=$(mktemp -d)
trap 'rm -rf "$classes"' EXIT
"$java_home/bin/javac" -d "$classes" -cp "$jar" "$here/VThreadBench.java"

configs=(none events-off events-empty mounted exact)
declare -A option=([none]= [events-off]="=events=off" [events-empty]="=events=empty" [mounted]="=mode=mounted"
  [exact]="=mode=exact")
declare -A wall cpu
for ((r = 1; r <= runs; r++)); do
  for c in "${configs[@]}"; do
    agentarg=()
    [ "$c" != none ] && agentarg=("-agentpath:$agent${option[$c]}")
    out=$("$java_home/bin/java" -Xms1g -Xmx1g "${agentarg[@]}" -cp "$jar:$classes" VThreadBench "$threads" "$yields")
    echo "run $r $c: $out" >&2
    wall[$c]+="$(echo "$out" | awk '{print $2}') "
    cpu[$c]+="$(echo "$out" | awk '{print $3}') "
  done
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
wall_base=$(echo "${wall[none]}" | median)
cpu_base=$(echo "${cpu[none]}" | median)
version=$("$java_home/bin/java" -version 2>&1 | head -n 1)
echo "$threads virtual threads x $yields yields, $runs interleaved runs, $version, $(nproc) CPUs"
echo
echo "| configuration | median wall ms | x no agent | median JVM CPU ms | x no agent | wall, each run (ms) |"
echo "|---|---:|---:|---:|---:|---|"
for c in "${configs[@]}"; do
  w=$(echo "${wall[$c]}" | median)
  u=$(echo "${cpu[$c]}" | median)
  printf '| %s | %.0f | %.2f | %.0f | %.2f | %s|\n' "$c" "$w" "$(echo "$w / $wall_base" | bc -l)" \
    "$u" "$(echo "$u / $cpu_base" | bc -l)" "${wall[$c]}"
done
