#!/usr/bin/env bash
# The fast clock's benchmarks (make bench-fast-clock), RUNS rounds
# interleaved, medians at the end:
#   - cost: `threadtime bench` with fast_self beside rdtsc (the floor),
#     sched_self (the system call it replaces) and clock_thread_cputime_id
#     (that call bare: what the JDK's getCurrentThreadCpuTime() makes, JDK
#     26's included), one thread;
#   - accuracy: bench/fast_clock_accuracy.c idle, with one busy loop per
#     CPU (scripts/with-load.sh), and with 1.5 per CPU (that, plus half as
#     many again started here).
# usage: bench/fast-clock.sh BUILD_DIR [RUNS] [INTERVALS]
set -eu
build=$1
runs=${2:-5}
intervals=${3:-10000}
here=$(cd "$(dirname "$0")/.." && pwd)
acc=$build/cli/fast_clock_accuracy
tt=$build/cli/threadtime
out=$(mktemp -d "${TMPDIR:-/tmp}/fast-clock.XXXXXX")
trap 'rm -rf "$out"' EXIT

# With 1.5 busy loops per CPU: with-load.sh's one per CPU, and these.
extra_load() {
  local n=$(( ($(nproc) + 1) / 2 )) pids=() rc=0
  for _ in $(seq "$n"); do sh -c 'while :; do :; done' & pids+=("$!"); done
  "$@" || rc=$?
  kill "${pids[@]}"; wait "${pids[@]}" 2>/dev/null || true
  return $rc
}

for r in $(seq "$runs"); do
  echo "round $r/$runs"
  "$tt" bench --methods fast_self,sched_self,clock_thread_cputime_id,rdtsc --threads 1 --json > "$out/cost.$r.json"
  "$acc" "$intervals" | tee -a "$out/idle"
  "$here/scripts/with-load.sh" "$acc" "$intervals" | grep intervals= | tee -a "$out/load1"
  "$here/scripts/with-load.sh" bash -c "$(declare -f extra_load); extra_load '$acc' '$intervals'" \
    | grep intervals= | tee -a "$out/load15"
done

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p; s/^$1=\([^ ]*\).*/\1/p" "$2"; }

echo
echo "cost, p50 ns (median of $runs runs, one thread):"
for m in rdtsc fast_self sched_self clock_thread_cputime_id; do
  printf '  %-23s %s\n' "$m" "$(for f in "$out"/cost.*.json; do
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(next(r["p50_ns"] for r in d["results"] if r["method"]==sys.argv[2] and r["threads"]==1))' "$f" "$m"
  done | median)"
done
printf '  fast_self / rdtsc: %s\n' "$(for f in "$out"/cost.*.json; do
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p={r["method"]:r["p50_ns"] for r in d["results"] if r["threads"]==1}; print(p["fast_self"]/p["rdtsc"])' "$f"
done | median)"
echo
echo "accuracy over $intervals intervals of 5 us..2 ms (median of $runs runs):"
printf '  %-8s %14s %12s %12s %12s %16s %18s\n' load total_error_% mean_abs_ns p99_abs_ns worst_ns \
  midpoint_error_% one_anchor_error_%
for l in idle load1 load15; do
  printf '  %-8s %14s %12s %12s %12s %16s %18s\n' "$l" "$(field total_error_pct "$out/$l" | median)" \
    "$(field mean_abs_ns "$out/$l" | median)" "$(field p99_abs_ns "$out/$l" | median)" \
    "$(field worst_ns "$out/$l" | sed 's/^-//' | median)" "$(field midpoint_error_pct "$out/$l" | median)" \
    "$(field one_anchor_error_pct "$out/$l" | median)"
done
echo "  (worst_ns: the median of each run's largest |fast - real|)"
