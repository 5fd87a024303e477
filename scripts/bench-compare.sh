#!/bin/bash
# Compares two builds of the CPU clocks side by side in one run: the two
# `threadtime bench` binaries take turns (ROUNDS each, default 5), and the
# table gives each method's median of the per-round p50s and their ratio.
# Interleaving spreads a busy machine's noise over both columns alike.
#
#   scripts/bench-compare.sh OLD/cli/threadtime NEW/cli/threadtime [METHODS]
#
# To compare against main: git worktree add /tmp/tt-main main, build it
# with cmake, then pass its cli/threadtime as OLD.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,10p' "$0" >&2
    exit 2
fi
old=$1 new=$2
methods=${3:-clock_thread_cputime_id,clock_gettime_virt,getrusage_thread,sched_self,virt_self,prof_self,sched_tid,consistent_self,consistent_tid,process_cputime}
rounds=${ROUNDS:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for i in $(seq "$rounds"); do
    "$old" bench --methods "$methods" --threads 1 --warmup 0.1 --time 0.4 --json > "$out/old.$i.json"
    "$new" bench --methods "$methods" --threads 1 --warmup 0.1 --time 0.4 --json > "$out/new.$i.json"
done
python3 - "$out" "$rounds" <<'EOF'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
rows = {}
for tree in ("old", "new"):
    for i in range(1, rounds + 1):
        with open(f"{out}/{tree}.{i}.json") as f:
            for r in json.load(f)["results"]:
                rows.setdefault(r["method"], {}).setdefault(tree, []).append(r["p50_ns"])
print(f"{'method':26} {'old p50 ns':>11} {'new p50 ns':>11} {'new/old':>8}")
for m, v in rows.items():
    o, n = statistics.median(v["old"]), statistics.median(v["new"])
    print(f"{m:26} {o:11.1f} {n:11.1f} {n / o:8.3f}")
EOF
