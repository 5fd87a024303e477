#!/usr/bin/env bash
# The C tests that need root, run by a user without it: each passes and
# names what it skipped in one line, as they do for anyone who runs
# `make test` without root.
#   test_unprivileged.sh SOURCE_DIR TEST_EVENT_FILES THREADTIME FAKE_JAVA
# Needs root itself, to take nobody's ids; anyone else gets one SKIP line
# (exit 77). What nobody runs is copied into a directory it can reach
# (tests/reachable_dir.sh), and it gets a TMPDIR of its own there.
set -u
if [ "$(id -u)" != 0 ]; then
  echo "SKIP test_unprivileged: needs root (it runs the root-only tests as another user)"
  exit 77
fi
src=$(realpath "$1")
. "$src/tests/reachable_dir.sh"
user=nobody
reachable_dir test_unprivileged $user
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cp "$2" "$work/test_event_files" && cp "$3" "$work/threadtime" && cp "$4" "$work/fake_java" &&
  cp "$src/tests/attach/test_attach.sh" "$work/test_attach.sh" && mkdir "$work/tmp" && chown "$user:" "$work/tmp" ||
  { echo "FAIL: cannot set up $work"; exit 1; }
# as_user COMMAND...: runs COMMAND as the user, in $work; sets $rc and $out.
as_user() {
  out=$(cd "$work" && setpriv --reuid="$uid" --regid="$gid" --clear-groups env TMPDIR="$work/tmp" "$@" 2>&1)
  rc=$?
}
# has TEST WHAT: $out holds WHAT as a line of its own.
has() {
  grep -qxF -- "$2" <<<"$out" || fail "$1: no line '$2' in: $out"
}

as_user ./test_event_files
[ "$rc" = 0 ] || fail "test_event_files: exit $rc, expected 0: $out"
has test_event_files "skip setuid_program_reads_no_variable: needs root to install a setuid program"
has test_event_files "skip another_users_symlink_at_the_destination_is_refused: needs root to plant a link as another user"
[ "$(grep -c '^skip ' <<<"$out")" = 2 ] || fail "test_event_files: skipped other than the two root-only cases: $out"

as_user bash ./test_attach.sh ./threadtime ./fake_java "$work"
[ "$rc" = 77 ] || fail "test_attach: exit $rc, expected 77 (skipped): $out"
[ "$out" = "SKIP test_attach: needs root (it attaches as root to another user's process)" ] ||
  fail "test_attach: not one SKIP line: $out"

[ "$fails" = 0 ] && echo "test_unprivileged: all passed"
exit $((fails > 0))
