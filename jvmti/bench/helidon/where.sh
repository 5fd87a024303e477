#!/usr/bin/env bash
# Where a real server's time went: HelidonBench (see run.sh and the class's
# comment) with the -javaagent in mode=exact, under three conditions, one
# server JVM each, RUNS rounds interleaved, on each JDK (21 with
# -XX:-DoJVMTIVirtualThreadTransitions, 22+ without it):
#   idle   nothing else asked for the CPUs (beyond this shared host's own load);
#   busy   one busy loop per CPU beside the server, as `make test-load` runs;
#   quota  the server alone in a cgroup held to half a CPU (cpu.max 50000
#          100000, or cgroup v1 cpu.cfs_quota_us), where this host lets the
#          script make one (root, a writable cpu controller); skipped otherwise.
# Each request's wall time splits into CPU, carrier wait, parked, pinned and
# the rest (mounted, off a CPU: its carriers' run-queue wait); the truth
# beside the sums is the carriers' own schedstat over the same window.
# Prints each run's line to stderr and a Markdown table of medians.
#   where.sh THREADTIME_AGENT_JAR [RUNS=3] [SECONDS=10] [WARMUP=5] [CLIENTS=8] [JDKS="21 25"]
set -euo pipefail
default_runs=3
. "$(dirname "$0")/common.sh"
server="" group="" loops=()
stop_loops() {
  if [ ${#loops[@]} -gt 0 ]; then kill "${loops[@]}" 2>/dev/null || true; wait "${loops[@]}" 2>/dev/null || true; loops=(); fi
}
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  stop_loops
  if [ -n "$group" ]; then rmdir "$group" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
# A cgroup of the script's own with half a CPU; its path, or nothing.
make_group() {
  local g
  if [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    g=/sys/fs/cgroup/threadtime-where-$$
    mkdir "$g" 2>/dev/null && echo "50000 100000" >"$g/cpu.max" 2>/dev/null && { echo "$g"; return; }
  elif [ -w /sys/fs/cgroup/cpu ]; then
    g=/sys/fs/cgroup/cpu/threadtime-where-$$
    mkdir "$g" 2>/dev/null && echo 100000 >"$g/cpu.cfs_period_us" && echo 50000 >"$g/cpu.cfs_quota_us" 2>/dev/null &&
      { echo "$g"; return; }
  fi
  [ -z "${g:-}" ] || rmdir "$g" 2>/dev/null || true
}
# The group's throttled time so far, ns (v2 cpu.stat throttled_usec, v1 throttled_time).
throttled_ns() {
  awk '$1 == "throttled_usec" {print $2 * 1000} $1 == "throttled_time" {print $2}' "$1/cpu.stat"
}
group=$(make_group || true)
conditions=(idle busy)
if [ -n "$group" ]; then conditions+=(quota); else echo "where.sh: no cgroup could be made here: quota skipped" >&2; fi
keys="rps requests wall_p50_us wall_p99_us"
parts="cpu carrier_wait parked pinned off_cpu"
for p in $parts; do keys+=" ${p}_p50_us ${p}_p99_us ${p}_sum_ms ${p}_tail_pct"; done
keys+=" carriers_cpu_ms carriers_run_wait_ms throttled_ms"
declare -A res
for ((r = 1; r <= runs; r++)); do
  for v in "${jdks[@]}"; do
    java=$("$root/java/jdks.sh" runtime "$v")/bin/java
    extra=""
    [ "$v" -ge 22 ] || extra=$flag
    for c in "${conditions[@]}"; do
      rm -f "$work/port"
      cmd=("$java" $extra "-javaagent:$jar=mode=exact" --enable-native-access=ALL-UNNAMED
        --add-opens java.base/java.lang=ALL-UNNAMED -cp "$cp" HelidonBench server "$work/port")
      t0=0
      case $c in
        idle) "${cmd[@]}" >"$work/server.log" 2>&1 & ;;
        busy)
          for _ in $(seq "$(nproc)"); do sh -c 'while :; do :; done' & loops+=("$!"); done
          "${cmd[@]}" >"$work/server.log" 2>&1 & ;;
        quota)
          t0=$(throttled_ns "$group")
          sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$group" "${cmd[@]}" >"$work/server.log" 2>&1 & ;;
      esac
      server=$!
      out=$(run_clients) || exit 1
      kill "$server"; wait "$server" 2>/dev/null || true; server=""
      thr=-
      [ "$c" != quota ] || thr=$(( ($(throttled_ns "$group") - t0) / 1000000 ))
      stop_loops
      out="$out throttled_ms=$thr"
      echo "run $r JDK $v $c: $out" >&2
      # shellcheck disable=SC2086 # the keys are words
      file_figures "$v" "$c" $keys
    done
  done
done
echo "Helidon 4.5.0 SE, -javaagent mode=exact, /work = 3 x $((${PIECE_NS:-267000} / 1000)) us of burn around 2 blocking calls (1 ms sleep),"
echo "$clients clients, $seconds s after $warmup s warm-up, $runs interleaved rounds, medians; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Per request, us p50 / p99; then each part's share of the slowest 1 %'s wall time; then the sums over requests"
echo "against the carriers' own schedstat (ms; the carriers also run the server's own virtual threads)."
echo
echo "| JDK | condition | requests/s | wall | CPU | carrier wait | parked | pinned | mounted off CPU | p99 shares: CPU / carrier wait / parked / pinned / off CPU | CPU sum / carriers' CPU | off-CPU sum / carriers' run-queue wait | throttled |"
echo "|---|---|---:|---|---|---|---|---|---|---|---|---|---:|"
for v in "${jdks[@]}"; do
  for c in "${conditions[@]}"; do
    med() {
      local vals
      vals=$(echo "${res[$v,$c,$1]}" | tr ' ' '\n' | grep -v '^-\?$' || true)
      if [ -n "$vals" ]; then echo "$vals" | median; else echo -; fi
    }
    row="| $v | $c | $(med rps) | $(med wall_p50_us) / $(med wall_p99_us)"
    for p in $parts; do row+=" | $(med ${p}_p50_us) / $(med ${p}_p99_us)"; done
    row+=" | $(med cpu_tail_pct) / $(med carrier_wait_tail_pct) / $(med parked_tail_pct) / $(med pinned_tail_pct) / $(med off_cpu_tail_pct)"
    row+=" | $(med cpu_sum_ms) / $(med carriers_cpu_ms) | $(med off_cpu_sum_ms) / $(med carriers_run_wait_ms) | $(med throttled_ms) |"
    echo "$row"
  done
done
