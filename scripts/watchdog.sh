#!/usr/bin/env bash
# watchdog.sh SECONDS COMMAND [ARGS...]: runs COMMAND in a process group of
# its own. If it is still running after SECONDS, prints what was running (the
# process tree with each process's kernel wait channel, and every JVM's thread
# stacks), ends the group and exits 124; otherwise exits with COMMAND's status.
# .ci/run uses it so that a hang fails CI with its cause at the end of the log,
# inside CI's time limit, rather than being cut off without one.
set -uo pipefail
if [ $# -lt 2 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 SECONDS COMMAND [ARGS...]" >&2
  exit 2
fi
limit=$1
shift
setsid "$@" &
child=$!
# No timer process: one left behind would hold the caller's output open.
deadline=$((SECONDS + limit))
while kill -0 "$child" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
  sleep 2
done
if ! kill -0 "$child" 2>/dev/null; then
  wait "$child"
  exit
fi
echo
echo "watchdog: '$*' still running after $limit s; what was running:"
ps -eo pid,ppid,pgid,etimes,stat,wchan:28,args --forest | cut -c1-300
for pid in $(pgrep -x java); do
  jcmd=$(dirname "$(readlink "/proc/$pid/exe")")/jcmd
  echo "--- threads of JVM $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" | cut -c1-200)"
  if [ -x "$jcmd" ]; then
    timeout 30 "$jcmd" "$pid" Thread.print 2>&1 | head -n 400
  else
    echo "(no jcmd beside its java)"
  fi
done
kill -TERM -- -"$child" 2>/dev/null
sleep 10
kill -KILL -- -"$child" 2>/dev/null
echo "watchdog: ended '$*' after $limit s"
exit 124
