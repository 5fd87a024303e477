#!/bin/sh
# How the agent loads: an unknown option stops the JVM with a message; a JVM
# without virtual threads (older than 21) runs on with one line saying the
# agent stays passive; a good load prints nothing.
#   load_test.sh AGENT_SO JDK_21_PLUS_HOME [OLDER_JDK_HOME]
agent=$1 jdk=$2 old=${3:-}
failed=0
fail() { echo "FAIL: $*"; failed=1; }

if out=$("$jdk/bin/java" "-agentpath:$agent=mode=bogus" -version 2>&1); then
  fail "a bad option did not stop the JVM"
fi
echo "$out" | grep -q "threadtime-vthreads: unknown option 'mode=bogus'" || fail "no message for a bad option: $out"

out=$("$jdk/bin/java" "-agentpath:$agent=mode=mounted,events=on" -version 2>&1) || fail "a good load failed: $out"
echo "$out" | grep -q "threadtime-vthreads" && fail "a good load printed: $out"

if [ -n "$old" ]; then
  out=$("$old/bin/java" "-agentpath:$agent" -version 2>&1) || fail "JDK $old did not run on with the agent: $out"
  echo "$out" | grep -q "threadtime-vthreads: this JVM has no JVMTI 21 .*staying passive" ||
    fail "no passive message on $old: $out"
else
  echo "no JDK older than 21 given: the passive load is not checked"
fi
[ "$failed" = 0 ] && echo "load_test: ok"
exit "$failed"
