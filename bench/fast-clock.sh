#!/usr/bin/env bash
# The fast clock's benchmarks (make bench-fast-clock), RUNS rounds
# interleaved, medians at the end:
#   - cost: `threadtime bench` with fast_self beside rdtsc (the floor),
#     sched_self (the system call it replaces) and clock_thread_cputime_id
#     (that call bare: what the JDK's getCurrentThreadCpuTime() makes, JDK
#     26's included), one thread;
#   - accuracy: bench/fast_clock_accuracy.c idle, with one busy loop per
#     CPU (scripts/with-load.sh), and with 1.5 per CPU (that, plus half as
#     many again started here); each at the library's span
#     (TT_FAST_BOUND_NS) and at 1 ms, the span before it, for comparison;
#   - what the span costs: bench/fast_clock_span.c, reads 0 to 1 ms of
#     work apart, at both spans.
# usage: bench/fast-clock.sh BUILD_DIR [RUNS] [INTERVALS]
set -eu
build=$1
runs=${2:-5}
intervals=${3:-10000}
here=$(cd "$(dirname "$0")/.." && pwd)
acc=$build/cli/fast_clock_accuracy
span=$build/cli/fast_clock_span
bound=$(sed -n 's/^#define TT_FAST_BOUND_NS INT64_C(\([0-9]*\))/\1/p' "$(dirname "$0")/../include/threadtime/cpu.h")
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
  "$span" 2000 "$bound" 1000000 | tee -a "$out/span"
  for s in "$bound" 1000000; do
    "$acc" "$intervals" "$s" | tee -a "$out/idle.$s"
    "$here/scripts/with-load.sh" "$acc" "$intervals" "$s" | grep intervals= | tee -a "$out/load1.$s"
    "$here/scripts/with-load.sh" bash -c "$(declare -f extra_load); extra_load '$acc' '$intervals' '$s'" \
      | grep intervals= | tee -a "$out/load15.$s"
  done
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
echo "what the span costs, ns per read, timed with the counter (median of $runs runs):"
printf '  %-8s %8s %14s %10s %10s\n' span_ns gap_ns rearmed_% mean_ns p50_ns
for s in "$bound" 1000000; do
  for g in $(sed -n "s/^span_ns=$s gap_ns=\([0-9]*\).*/\1/p" "$out/span" | sort -nu); do
    sel=$(grep "^span_ns=$s gap_ns=$g " "$out/span")
    printf '  %-8s %8s %14s %10s %10s\n' "$s" "$g" "$(field rearmed_pct <(echo "$sel") | median)" \
      "$(field mean_ns <(echo "$sel") | median)" "$(field p50_ns <(echo "$sel") | median)"
  done
done
printf '  floor (two counter reads): mean %s p50 %s\n' "$(sed -n 's/^floor .*mean_ns=\([^ ]*\).*/\1/p' "$out/span" | median)" \
  "$(sed -n 's/^floor .*p50_ns=\([^ ]*\).*/\1/p' "$out/span" | median)"
echo
echo "accuracy over $intervals intervals of 5 us..2 ms (median of $runs runs):"
printf '  %-8s %-8s %14s %12s %12s %12s %10s %16s %18s %9s\n' load span_ns total_error_% mean_abs_ns p99_abs_ns \
  worst_ns over_50us midpoint_error_% one_anchor_error_% steal_ms
for l in idle load1 load15; do
  for s in "$bound" 1000000; do
    f=$out/$l.$s
    printf '  %-8s %-8s %14s %12s %12s %12s %10s %16s %18s %9s\n' "$l" "$s" "$(field total_error_pct "$f" | median)" \
      "$(field mean_abs_ns "$f" | median)" "$(field p99_abs_ns "$f" | median)" \
      "$(field worst_ns "$f" | sed 's/^-//' | median)" "$(field over_50us "$f" | median)" \
      "$(field midpoint_error_pct "$f" | median)" "$(field one_anchor_error_pct "$f" | median)" \
      "$(field steal_ms "$f" | median)"
  done
done
echo "  (worst_ns: the median of each run's largest |fast - real|; over_50us: intervals off by more;"
echo "   steal_ms: steal of all CPUs in /proc/stat during the run, 10 ms ticks)"
