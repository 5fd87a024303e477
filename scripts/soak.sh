#!/usr/bin/env bash
# Runs `make test` N times, each on a fresh clone of this repository's HEAD,
# and counts the passes: the check behind "the suite passes idle, with a busy
# loop per CPU beside it, and pinned to one CPU, every time".
#   scripts/soak.sh N [idle|load|pinned]
# Logs go to a temporary directory the script prints; it writes nowhere else.
set -u
n=${1:?usage: scripts/soak.sh N [idle|load|pinned]}
mode=${2:-idle}
case $mode in
  idle) run=(make test) ;;
  load) run=(scripts/with-load.sh make test) ;;
  pinned) run=(taskset -c 0 make test) ;;
  *) echo "soak: unknown mode '$mode' (idle, load or pinned)" >&2; exit 2 ;;
esac
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
work=$(mktemp -d -t threadtime-soak.XXXXXX)
echo "soak: $n x '${run[*]}' on fresh clones of $(git -C "$repo" rev-parse --short HEAD); logs in $work"
pass=0
for i in $(seq "$n"); do
  rm -rf "$work/clone"
  git clone -q "$repo" "$work/clone"
  start=$(date +%s)
  if (cd "$work/clone" && "${run[@]}") >"$work/run-$i.log" 2>&1; then
    pass=$((pass + 1))
    result=passed
  else
    result="FAILED, see $work/run-$i.log"
  fi
  echo "soak $mode $i/$n: $result in $(( $(date +%s) - start )) s"
done
rm -rf "$work/clone"
echo "soak $mode: $pass passed, $((n - pass)) failed"
[ "$pass" -eq "$n" ]
