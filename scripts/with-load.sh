#!/usr/bin/env bash
# Runs a command with one busy loop per CPU beside it (`make test-load`).
# The loops end with the command, also when it fails or is interrupted;
# the exit status is the command's.
set -u
pids=()
stop() {
  [ ${#pids[@]} -eq 0 ] || { kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; }
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for _ in $(seq "$(nproc)"); do
  sh -c 'while :; do :; done' &
  pids+=("$!")
done
echo "with-load: ${#pids[@]} busy loops beside: $*"
"$@"
