#!/bin/sh
# How the two agents load.
# JVMTI agent: an unknown or repeated option stops the JVM with a message; a
# JVM without virtual threads (older than 21) runs on with one line saying the
# agent stays passive; under -XX:-DoJVMTIVirtualThreadTransitions it refuses
# to start, with a message; a good load prints nothing.
# -javaagent (the threadtime JAR), if given: a wrong option is one line and
# stops the JVM; one line on a JVM older than 21; a good load prints nothing
# (on JDK 24+ under the flag, one line that the flag deadlocks there), and
# log=debug adds one line giving the transition path's price.
#   load_test.sh AGENT_SO JDK_21_PLUS_HOME [OLDER_JDK_HOME] [THREADTIME_JAR]
agent=$1 jdk=$2 old=${3:-} jar=${4:-}
failed=0
fail() { echo "FAIL: $*"; failed=1; }
flag="-XX:+UnlockExperimentalVMOptions -XX:-DoJVMTIVirtualThreadTransitions"

for bad in mode=bogus mode=exact,mode=mounted events=off,events=on; do
  if out=$("$jdk/bin/java" "-agentpath:$agent=$bad" -version 2>&1); then
    fail "option $bad did not stop the JVM"
  fi
  echo "$out" | grep -q "threadtime-vthreads: unknown or conflicting option '[a-z=]*' in '$bad'" ||
    fail "no message for option $bad: $out"
done

out=$("$jdk/bin/java" "-agentpath:$agent=mode=mounted,events=on" -version 2>&1) || fail "a good load failed: $out"
echo "$out" | grep -q "threadtime-vthreads" && fail "a good load printed: $out"

# shellcheck disable=SC2086 # $flag is two options
out=$("$jdk/bin/java" $flag "-agentpath:$agent" -version 2>&1) || fail "the JVM did not run on under the flag: $out"
echo "$out" | grep -q "threadtime-vthreads: refusing to start: -XX:-DoJVMTIVirtualThreadTransitions" ||
  fail "no refusal under the flag: $out"

if [ -n "$old" ]; then
  out=$("$old/bin/java" "-agentpath:$agent" -version 2>&1) || fail "JDK $old did not run on with the agent: $out"
  echo "$out" | grep -q "threadtime-vthreads: this JVM has no JVMTI 21 .*staying passive" ||
    fail "no passive message on $old: $out"
else
  echo "no JDK older than 21 given: the passive load is not checked"
fi

if [ -n "$jar" ]; then
  for bad in mode=bogus mode=exact,mode=mounted events=on,events=off; do
    if out=$("$jdk/bin/java" "-javaagent:$jar=$bad" -version 2>&1); then
      fail "-javaagent option $bad did not stop the JVM"
    fi
    # One line (no stack trace), naming the option; exit status 1.
    echo "$out" | grep -q "^threadtime: \(bad\|unknown\|conflicting\) option '[a-z=]*'" &&
      [ "$(echo "$out" | wc -l)" = 1 ] || fail "no single -javaagent line for option $bad: $out"
  done
  # shellcheck disable=SC2086
  out=$("$jdk/bin/java" $flag -Xshare:off --enable-native-access=ALL-UNNAMED "-javaagent:$jar=mode=exact" -version 2>&1) ||
    fail "a good -javaagent load failed: $out"
  # JDK 24+: one line, that the flag deadlocks monitor contention there.
  feature=$("$jdk/bin/java" -XshowSettings:properties -version 2>&1 | awk '$1 == "java.specification.version" {print $3}')
  if [ "${feature:-0}" -ge 24 ]; then
    [ "$(echo "$out" | grep -c "^threadtime: -XX:-DoJVMTIVirtualThreadTransitions on JDK $feature: .*deadlock")" = 1 ] &&
      [ "$(echo "$out" | grep -c "threadtime")" = 1 ] ||
      fail "not one line saying the flag deadlocks on JDK $feature: $out"
  else
    echo "$out" | grep -q "threadtime" && fail "a good -javaagent load under the flag printed: $out"
  fi
  # Quiet by default: the transition path's price only with log=debug.
  out=$("$jdk/bin/java" -Xshare:off --enable-native-access=ALL-UNNAMED "-javaagent:$jar" -version 2>&1) ||
    fail "a -javaagent load without the flag failed: $out"
  echo "$out" | grep -q "threadtime" && fail "a good -javaagent load printed: $out"
  out=$("$jdk/bin/java" -Xshare:off --enable-native-access=ALL-UNNAMED "-javaagent:$jar=log=debug" -version 2>&1) ||
    fail "a -javaagent load with log=debug failed: $out"
  [ "$(echo "$out" | grep -c "^threadtime: HotSpot's JVMTI transition path is on: .* ns")" = 1 ] ||
    fail "no single line giving the transition path's price under log=debug: $out"
  if [ -n "$old" ]; then
    out=$("$old/bin/java" "-javaagent:$jar" -version 2>&1) || fail "JDK $old did not run on with the -javaagent: $out"
    [ "$(echo "$out" | grep -c "^threadtime:")" = 1 ] && echo "$out" | grep -q "^threadtime: JDK .* has no virtual threads" ||
      fail "not one passive line on $old: $out"
  fi
else
  echo "no threadtime JAR given: the -javaagent's loading is not checked"
fi
[ "$failed" = 0 ] && echo "load_test: ok"
exit "$failed"
