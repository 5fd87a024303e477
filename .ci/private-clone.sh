#!/usr/bin/env bash
# The C suite (ctest) once more, from a clone in a directory that only its
# owner may enter, as a clone in root's home or in any `mktemp -d` is. There
# the build tree is out of every other user's reach, so this shows that the
# tests which run something as another user (test_event_files' setuid case,
# test_attach, test_unprivileged) put it where that user can reach it.
# Clones the committed HEAD. The agent JAR that `make test` built, if any, is
# copied into the clone's build place, so that test_attach's real JVMs load
# it as nobody from there too.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 700 "$dir"
clone=$dir/threadtime
git clone -q --no-hardlinks . "$clone"
shopt -s nullglob
jars=(java/agent/target/threadtime-agent-[0-9]*.jar)
if [ ${#jars[@]} -gt 0 ]; then
  mkdir -p "$clone/java/agent/target"
  cp "${jars[@]}" "$clone/java/agent/target/"
fi
echo "private-clone: $clone (mode $(stat -c %a "$dir")), $(id -un); agent JARs copied: ${#jars[@]}"
cmake -S "$clone" -B "$clone/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$clone/build" >/dev/null
ctest --test-dir "$clone/build" --output-on-failure
