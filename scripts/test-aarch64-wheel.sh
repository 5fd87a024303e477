#!/usr/bin/env bash
# Usage: scripts/test-aarch64-wheel.sh WHEEL DIR
# Runs the Python suite against the aarch64 wheel under qemu-user, with an
# aarch64 CPython from Debian's own arm64 packages. No multiarch: apt works
# on a private state in DIR (under the build tree), so the machine's package
# configuration is untouched; the packages are unpacked into DIR/root and
# qemu-aarch64-static -L DIR/root runs its python3.11. The wheel is unpacked
# onto PYTHONPATH (its dist-info included, so the suite's metadata check
# holds).
#
# Left out, as the emulation cannot run them (not the code):
# - the suites of the source tree and the host (test_packaging: builds an
#   sdist; test_wheel: the host's wheels; test_stubs: mypy; test_chart:
#   matplotlib, which is not installed here; test_otel, test_otel_servers,
#   test_run_wait:
#   the OpenTelemetry SDK and aiohttp, from PyPI, neither installed here;
#   test_asyncio: uvloop and Starlette, from PyPI, not installed here;
#   test_readme: runs the README's examples in fresh interpreters);
# - the tests that start sys.executable as a child: an aarch64 python needs
#   qemu registered with binfmt_misc for that;
# - test_procfs_read_of_this_process_and_thread and
#   test_procfs_read_takes_keywords_as_documented: qemu-user answers the
#   guest's /proc/self/stat itself and gives no thread state.
# - test_delays_are_the_kernels_or_say_off: qemu-user does not pass the
#   taskstats generic-netlink socket through (EOPNOTSUPP);
# - test_cpu_intervals_carry_their_run_queue_wait: starts sys.executable
#   (above).
set -euo pipefail
if [ $# -ne 2 ] || [ ! -f "$1" ]; then
  echo "usage: $0 AARCH64_WHEEL DIR" >&2
  exit 2
fi
wheel=$(realpath "$1")
mkdir -p "$2"
dir=$(realpath "$2")
tests=$(realpath "$(dirname "$0")/../python/tests")
apt_opts=(-q -o APT::Architecture=arm64 -o APT::Architectures::=arm64
          -o Dir::State::Lists="$dir/apt/lists" -o Dir::State::Status="$dir/apt/status"
          -o Dir::Cache="$dir/apt/cache" -o Dir::Cache::archives="$dir/apt/cache/archives")
if [ ! -x "$dir/root/usr/bin/python3.11" ]; then
  mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial"
  touch "$dir/apt/status"
  apt-get "${apt_opts[@]}" update >/dev/null
  apt-get "${apt_opts[@]}" install --download-only -y python3.11 python3-pytest python3-psutil >/dev/null
  rm -rf "$dir/root.tmp"
  mkdir -p "$dir/root.tmp"
  for deb in "$dir"/apt/cache/archives/*.deb; do
    dpkg-deb -x "$deb" "$dir/root.tmp"
  done
  mv "$dir/root.tmp" "$dir/root"
fi
rm -rf "$dir/site"
python3 -m zipfile -e "$wheel" "$dir/site"
cd "$dir"
PYTHONPATH="$dir/site" qemu-aarch64-static -L "$dir/root" "$dir/root/usr/bin/python3.11" \
  -m pytest -p no:cacheprovider "$tests" \
  --ignore="$tests/test_packaging.py" --ignore="$tests/test_wheel.py" \
  --ignore="$tests/test_stubs.py" --ignore="$tests/test_chart.py" \
  --ignore="$tests/test_otel.py" --ignore="$tests/test_otel_servers.py" --ignore="$tests/test_run_wait.py" \
  --ignore="$tests/test_asyncio.py" --ignore="$tests/test_readme.py" \
  -k "not test_another_process and not test_exited_process_is_not_found and not test_pandas_is_needed_only_by_to_pandas and not test_procfs_read_of_this_process_and_thread and not test_procfs_read_takes_keywords_as_documented \
      and not test_log_info_before_any_start_says_not_running and not test_stop_log_without_a_log_does_nothing \
      and not test_a_bad_environment_value_is_named and not test_environment_turns_it_off \
      and not test_a_flipped_byte_inside_a_record_is_reported and not test_a_huge_file_that_is_no_trace_is_refused_on_its_header \
      and not test_delays_are_the_kernels_or_say_off and not test_cpu_intervals_carry_their_run_queue_wait"
