#!/usr/bin/env bash
# A real server on virtual threads, exact against mounted mode:
# HelidonBench (a Helidon 4 SE service, one virtual thread per request, each
# burning ~0.8 ms in three pieces around two blocking calls to a second
# endpoint; the truth is each piece's carrier clock, read by the JDK's bean)
# under CLIENTS clients for SECONDS after WARMUP, one server JVM per
# configuration (no agent, -javaagent mode=mounted, mode=exact), RUNS rounds
# interleaved, on each JDK (21 with -XX:-DoJVMTIVirtualThreadTransitions, 22+
# without it). Prints each run's line to stderr and a Markdown table of
# medians: requests/s, requests charged < 0.98 x burned, and
# charged - burned p50/p99/max (us).
#   run.sh THREADTIME_JAR [RUNS=5] [SECONDS=10] [WARMUP=5] [CLIENTS=8] [JDKS="21 25"]
# Needs Maven (Helidon 4.5.0 from Maven Central; MVN overrides the command).
set -euo pipefail
default_runs=5
. "$(dirname "$0")/common.sh"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
configs=(none mounted exact)
declare -A res
for ((r = 1; r <= runs; r++)); do
  for v in "${jdks[@]}"; do
    java=$("$root/java/jdks.sh" runtime "$v")/bin/java
    extra=""
    [ "$v" -ge 22 ] || extra=$flag
    for c in "${configs[@]}"; do
      agent=""
      [ "$c" = none ] || agent="-javaagent:$jar=mode=$c"
      rm -f "$work/port"
      # shellcheck disable=SC2086 # options are words
      "$java" $extra $agent --enable-native-access=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED \
        -cp "$cp" HelidonBench server "$work/port" >"$work/server.log" 2>&1 &
      server=$!
      out=$(run_clients) || exit 1
      kill "$server"; wait "$server" 2>/dev/null || true; server=""
      echo "run $r JDK $v $c: $out" >&2
      file_figures "$v" "$c" rps charged_low requests p50_us p99_us max_us
    done
  done
done
echo "Helidon 4.5.0 SE, /work = 3 x $((${PIECE_NS:-267000} / 1000)) us of burn around 2 blocking calls (1 ms sleep),"
echo "$clients clients, $seconds s after $warmup s warm-up, $runs interleaved rounds, medians; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| JDK | mode | requests/s | requests | charged < 0.98 x burned | charged - burned p50 / p99 / max (us) |"
echo "|---|---|---:|---:|---:|---|"
for v in "${jdks[@]}"; do
  for c in "${configs[@]}"; do
    med() { echo "${res[$v,$c,$1]}" | tr ' ' '\n' | grep -v '^-\?$' | median 2>/dev/null || echo -; }
    if [ "$c" = none ]; then
      printf '| %s | no agent | %s | | | |\n' "$v" "$(med rps)"
    else
      printf '| %s | %s | %s | %s | %s | %s / %s / %s |\n' "$v" "$c" "$(med rps)" "$(med requests)" \
        "$(med charged_low)" "$(med p50_us)" "$(med p99_us)" "$(med max_us)"
    fi
  done
done
