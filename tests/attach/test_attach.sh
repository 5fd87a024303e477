#!/usr/bin/env bash
# `threadtime attach` never runs a program of the target's, and as root it acts
# as the target's user.
#   test_attach.sh THREADTIME FAKE_JAVA SOURCE_DIR RECYCLE_PID
# FAKE_JAVA is tests/attach/fake_java.c built; it is installed as `java` and run
# as an unprivileged user (nobody). Real JVMs of that user (Java 17, 21 and 25,
# those java/jdks.sh finds) are attached to too when the checkout's JAR is
# built (make test-java or java-install). Needs root, to run a process as
# another user; anyone else gets one SKIP line (exit 77). Files go in one
# directory that user can reach (tests/reachable_dir.sh: under $TMPDIR, else
# /var/tmp), never under /tmp: the fakes that listen and the JVMs get a
# private tmpfs /tmp in their own mount namespace, which the attacher enters.
set -u
if [ "$(id -u)" != 0 ]; then
  echo "SKIP test_attach: needs root (it attaches as root to another user's process)"
  exit 77
fi
cli=$(realpath "$1") fake=$(realpath "$2") src=$(realpath "$3") recycle=$(realpath "$4")
. "$src/tests/reachable_dir.sh"
user=nobody
reachable_dir test_attach $user
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# A readable stand-in for the agent JAR: the fakes never open it.
jar=$work/agent.jar
: >"$jar"
chmod 644 "$jar"

# run_as NAME [--private-tmp] COMMAND...: runs COMMAND as the user in
# $work/NAME (a copy of the fake there as `java`); sets $pid.
run_as() {
  local dir=$work/$1 private=
  shift
  [ "$1" = --private-tmp ] && { private=1; shift; }
  mkdir "$dir" && cp "$fake" "$dir/java" && chown -R "$user:" "$dir"
  local drop="cd '$dir' && exec setpriv --reuid=$uid --regid=$gid --clear-groups $*"
  if [ -n "$private" ]; then
    unshare -m --propagation private sh -c "mount -t tmpfs -o mode=1777 tmpfs /tmp && $drop" &
  else
    sh -c "$drop" &
  fi
  pid=$!
  pids+=("$pid")
}

# ready PID EXE [quit]: waits (bounded) until PID runs EXE and, with quit, has
# its SIGQUIT handler in. A wait for readiness, not a timing check.
ready() {
  local i
  for i in $(seq 200); do
    if [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$2" ]; then
      [ -z "${3:-}" ] && return 0
      local cgt
      cgt=$(sed -n 's/^SigCgt:\s*//p' "/proc/$1/status")
      (((0x$cgt >> 2) & 1)) && return 0
    fi
    sleep 0.05
  done
  fail "process $1 never became ready ($2)"
  return 1
}

# attach PID OPTIONS [ARGS...]: runs threadtime attach as root from $work;
# sets $rc and $out (stdout and stderr). One that hangs is ended after 120 s
# (rc 124): the attacher's own waits are bounded far below that.
attach() {
  local p=$1 o=$2
  shift 2
  out=$(cd "$work" && timeout -k 5 120 "$cli" attach --jar "$jar" "$@" "$p" "$o" 2>&1)
  rc=$?
}

expect() { # expect WHAT: $out must contain WHAT
  case "$out" in *"$1"*) ;; *) fail "expected '$1' in: $out" ;; esac
}

never_ran_as_root() {
  [ -e "$work/$1/ran-as-root" ] && fail "$1: threadtime attach ran the target's program as root"
}

# 1. The issue's case: a user's program named java, no JVM. Today's attach
#    executes it as root; it must not be run, signalled or left dead.
run_as plain ./java plain
if ready "$pid" "$work/plain/java"; then
  attach "$pid" probe=off
  [ "$rc" = 1 ] || fail "plain: exit $rc, expected 1: $out"
  expect "is not a JVM that can be attached"
  expect "no SIGQUIT handler"
  kill -0 "$pid" 2>/dev/null || fail "plain: the process was killed"
fi
never_ran_as_root plain

# 2. A program that catches SIGQUIT but never listens: a bounded wait, then a
#    clear error, and the trigger file is gone again.
run_as quit ./java quit
if ready "$pid" "$work/quit/java" quit; then
  attach "$pid" probe=off --timeout 1
  [ "$rc" = 1 ] || fail "quit: exit $rc, expected 1: $out"
  expect "no attach listener"
  expect "appeared within 1 s"
  ls -A "$work/quit" | grep -q '^\.attach_pid' && fail "quit: the trigger file was left behind"
fi
never_ran_as_root quit

# 5. A JAR the target's user cannot read is named before anything is sent.
mkdir -m 700 "$work/private" && cp "$jar" "$work/private/agent.jar"
run_as unreadable ./java quit
if ready "$pid" "$work/unreadable/java" quit; then
  out=$(cd "$work" && "$cli" attach --jar "$work/private/agent.jar" --timeout 1 "$pid" probe=off 2>&1)
  rc=$?
  [ "$rc" = 1 ] || fail "unreadable: exit $rc, expected 1: $out"
  expect "uid $uid, the user of process $pid, cannot read the JAR $work/private/agent.jar"
  ls -A "$work/unreadable" | grep -q '^\.attach_pid' && fail "unreadable: a trigger file was made"
fi

# 3. A listener as a JVM has it, in its own mount namespace with its own /tmp:
#    the attacher enters the namespace, makes the trigger and connects as the
#    user (not as root), and sends the load request with absolute paths.
run_as listen --private-tmp ./java listen 0
if ready "$pid" "$work/listen/java" quit; then
  attach "$pid" dump=now.ttrace
  [ "$rc" = 0 ] || fail "listen: exit $rc, expected 0: $out"
  expect "entered the mount namespace of process $pid"
  expect "acting as uid $uid, gid $gid"
  expect "threadtime: JVM $pid took dump=$work/now.ttrace"
  [ "$(cat "$work/listen/trigger-owner" 2>/dev/null)" = "$uid" ] || fail "listen: trigger file not made by uid $uid"
  [ "$(cat "$work/listen/peer" 2>/dev/null)" = "$uid $gid" ] ||
    fail "listen: connected as '$(cat "$work/listen/peer" 2>/dev/null)', not as '$uid $gid'"
  printf '1\0load\0instrument\0false\0%s=dump=%s/now.ttrace\0' "$jar" "$work" >"$work/expected"
  cmp -s "$work/expected" "$work/listen/request" || fail "listen: the request is not the load request: $(tr '\0' '|' <"$work/listen/request")"
  # The agent's warnings (threadtime.attach.warnings), a line each; not its error.
  expect "threadtime: JVM $pid: probe 'a.B::c' matched nothing"
  expect "threadtime: JVM $pid: probe 'd.E::f' matched nothing"
  case "$out" in *"failed:"*) fail "listen: a successful attach printed the error property: $out" ;; esac
fi
never_ran_as_root listen

# 4. The agent's failure (return code 102): the attacher asks for the
#    message the agent left in the system properties and prints it decoded,
#    with the terminal escape sequence and the C1 control in it made harmless.
run_as refuse --private-tmp ./java listen 102
if ready "$pid" "$work/refuse/java" quit; then
  attach "$pid" probe=off
  [ "$rc" = 1 ] || fail "refuse: exit $rc, expected 1: $out"
  expect "the agent in JVM $pid failed: threadtime: probe é\\x1b[31m matched nothing\\xc2\\x85 𝄞"
  case "$out" in *$'\e'*) fail "refuse: an escape character reached the terminal" ;; esac
  [ "$(cat "$work/refuse/peer2" 2>/dev/null)" = "$uid $gid" ] || fail "refuse: the properties were not asked for as '$uid $gid'"
  printf '1\0properties\0\0\0\0' >"$work/expected2"
  cmp -s "$work/expected2" "$work/refuse/request2" || fail "refuse: the second request is not 'properties'"
fi

# 7. A listener that takes the request and never answers, and one whose
#    queue is full and that never accepts: each wait ends after --timeout
#    with a clear error.
run_as silent --private-tmp ./java listen silent
if ready "$pid" "$work/silent/java" quit; then
  attach "$pid" probe=off --timeout 1
  [ "$rc" = 1 ] || fail "silent: exit $rc, expected 1: $out"
  expect "JVM $pid did not answer 'load' within 1 s (0 bytes came)"
fi
run_as full --private-tmp ./java listen full
if ready "$pid" "$work/full/java" quit; then
  attach "$pid" probe=off --timeout 1
  [ "$rc" = 1 ] || fail "full: exit $rc, expected 1: $out"
  expect "the JVM's listener took no connection within 1 s"
fi

# 8. An answer with raw bytes a terminal may take for controls (0x9b is CSI
#    in 8-bit mode) and a UTF-8 character cut short: each is printed as \xNN.
run_as c1 --private-tmp ./java listen c1
if ready "$pid" "$work/c1/java" quit; then
  attach "$pid" probe=off
  [ "$rc" = 1 ] || fail "c1: exit $rc, expected 1: $out"
  expect "JVM $pid refused the agent (status 1): no \\x9b31mred\\x9b0m here, nor \\xe2\\x82 there"
  LC_ALL=C grep -q $'[\x80-\x9f]' <<<"$out" && fail "c1: a raw byte 0x80-0x9f reached the terminal"
fi

# 9. The properties answer that fills the attacher's 1 MiB buffer and ends in
#    "\u" with no digits: the decoder stops at the end (an ASan build aborts
#    on a read past it).
run_as huge --private-tmp ./java listen huge
if ready "$pid" "$work/huge/java" quit; then
  attach "$pid" probe=off
  [ "$rc" = 1 ] || fail "huge: exit $rc, expected 1: $out"
  expect "the agent in JVM $pid failed: "
  case "$out" in *AddressSanitizer* | *"runtime error"*) fail "huge: a sanitizer stopped the attacher" ;; esac
fi

# 10. The target exits, and its pid names another process (in a mount
#     namespace of its own), just before the attacher opens /proc/PID/cwd
#     (recycle_pid.c, preloaded): the attacher notices, enters nothing and
#     does nothing.
run_as recycled ./java quit
if ready "$pid" "$work/recycled/java" quit; then
  out=$(cd "$work" && TT_RECYCLE_PID=$pid TT_RECYCLE_DONE=$work/recycled.done LD_PRELOAD=$recycle \
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
    timeout -k 5 120 "$cli" attach --jar "$jar" --timeout 1 "$pid" probe=off 2>&1)
  rc=$?
  if [ "$(cat "$work/recycled.done" 2>/dev/null)" != reused ]; then
    echo "test_attach: the pid was not reused ($(cat "$work/recycled.done" 2>/dev/null)); case 10 not tried"
  else
    unset 'pids[-1]' # gone, and its pid another process's: not to be killed again
    [ "$rc" = 1 ] || fail "recycled: exit $rc, expected 1: $out"
    expect "process $pid exited before it could be attached (its pid may now be another process's)"
    case "$out" in *"entered the mount namespace"*) fail "recycled: entered the namespace of the pid's new process: $out" ;; esac
  fi
fi

# 6. Real JVMs of the user (Java 17, 21 and 25, those java/jdks.sh finds):
#    the agent loads as that user and writes as it.
shopt -s nullglob
jars=()
for j in "$src"/java/agent/target/threadtime-agent-[0-9]*.jar; do
  case $j in *-sources.jar|*-javadoc.jar) ;; *) jars+=("$j") ;; esac # the agent JAR, not its companions
done
jdk=$("$src/java/jdks.sh" home 17 2>/dev/null || "$src/java/jdks.sh" home 25 2>/dev/null)
if [ ${#jars[@]} = 0 ] || [ -z "$jdk" ]; then
  echo "test_attach: no JAR in $src/java/agent/target (make java-install) or no JDK; real JVMs not tried"
else
  cp "${jars[0]}" "$jar"
  mkdir "$work/jvm" && chmod 755 "$work/jvm"
  printf '%s\n' 'public class Wait {' \
    '    public static void main(String[] args) throws Exception {' \
    '        System.out.println("ready");' \
    '        Thread.sleep(600_000);' \
    '    }' \
    '}' >"$work/Wait.java"
  "$jdk/bin/javac" --release 17 -d "$work/jvm" "$work/Wait.java" || fail "javac failed"
  # A JAR whose agentmain leaves its error and warnings in the properties
  # threadtime.attach.error and .warnings has them printed; with an older
  # one the attacher has only the return code.
  agent_says=
  (cd "$work" && "$jdk/bin/jar" xf "$jar" io/threadtime/agent/ThreadTimeAgent.class) &&
    grep -aq threadtime.attach.warnings "$work/io/threadtime/agent/ThreadTimeAgent.class" && agent_says=1
  chown -R "$user:" "$work/jvm"
  for v in 17 21 25; do
    home=$("$src/java/jdks.sh" runtime $v 2>/dev/null) || { echo "test_attach: no Java $v here; not tried"; continue; }
    # Its own /tmp, as the fakes': the socket and hsperfdata stay out of the host's.
    # Each attach waits up to 60 s (--timeout), for the JVM may get little CPU
    # on a loaded host: a wait for it, not a timing check.
    unshare -m --propagation private sh -c "mount -t tmpfs -o mode=1777 tmpfs /tmp && cd '$work/jvm' &&
      exec setpriv --reuid=$uid --regid=$gid --clear-groups '$home/bin/java' -cp . Wait" \
      >"$work/out$v" 2>"$work/err$v" &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 600); do grep -q ready "$work/out$v" 2>/dev/null && break; sleep 0.1; done
    grep -q ready "$work/out$v" || { fail "Java $v: the JVM did not start: $(cat "$work/err$v")"; continue; }
    attach "$pid" "probe=java.lang.Integer::parseInt;java.lang.Integer::parsInt,out=$work/jvm/exit$v.ttrace" --timeout 60
    [ "$rc" = 0 ] || fail "Java $v: probe attach: exit $rc: $out"
    expect "threadtime: JVM $pid took probe=java.lang.Integer::parseInt"
    if [ -n "$agent_says" ]; then
      expect "threadtime: JVM $pid: probe 'java.lang.Integer::parsInt' matched nothing"
    fi
    expect "entered the mount namespace of process $pid"
    expect "acting as uid $uid, gid $gid"
    attach "$pid" "dump=$work/jvm/now$v.ttrace" --timeout 60
    [ "$rc" = 0 ] || fail "Java $v: dump attach: exit $rc: $out"
    [ "$(stat -c %u "$work/jvm/now$v.ttrace" 2>/dev/null)" = "$uid" ] || fail "Java $v: no trace written by uid $uid"
    "$cli" dump "$work/jvm/now$v.ttrace" >/dev/null || fail "Java $v: the dumped trace does not read"
    attach "$pid" "probe=a..b" --timeout 60
    [ "$rc" = 1 ] || fail "Java $v: a bad option: exit $rc: $out"
    if [ -n "$agent_says" ]; then
      expect "the agent in JVM $pid failed: threadtime: bad option 'probe=a..b'"
    else
      expect "the agent failed to start (a wrong option, or agentmain threw) (return code 102)"
    fi
  done
fi

[ "$fails" = 0 ] && echo "test_attach: all passed"
exit $((fails > 0))
