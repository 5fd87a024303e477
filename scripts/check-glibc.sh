#!/usr/bin/env bash
# Usage: scripts/check-glibc.sh MAX FILE...
# Fails unless every shared object named, and every one inside a named .jar
# or .whl, needs glibc MAX (e.g. 2.17) or older: the newest GLIBC_x.y
# version among its dynamic symbols, which is what the loader checks. Prints
# one line per object with that version, and the symbols above MAX.
# readelf reads any arch's ELF, so one host checks x86-64 and aarch64 alike.
set -euo pipefail
if [ $# -lt 2 ] || ! [[ $1 =~ ^2\.[0-9]+$ ]]; then
  echo "usage: $0 MAX_GLIBC_VERSION FILE..." >&2
  exit 2
fi
max=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# newer A B: is version A above version B?
newer() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$1" ]; }

bad=0 checked=0
check() { # check FILE LABEL
  local syms newest above
  syms=$(readelf --dyn-syms --wide "$1" | awk '/@GLIBC_[0-9.]+/ { n = $8; sub(/@@?GLIBC_/, " ", n); print n }')
  newest=$(printf '%s\n' "$syms" | awk 'NF == 2 { print $2 }' | sort -uV | tail -n 1)
  checked=$((checked + 1))
  if [ -z "$newest" ]; then
    echo "$2: no GLIBC symbols"
    return
  fi
  above=$(printf '%s\n' "$syms" | while read -r sym ver; do
            if [ -n "$ver" ] && newer "$ver" "$max"; then echo "$sym@GLIBC_$ver"; fi; done | sort -u | tr '\n' ' ')
  if [ -n "$above" ]; then
    echo "$2: needs GLIBC_$newest > $max: $above"
    bad=$((bad + 1))
  else
    echo "$2: GLIBC_$newest (ok, <= $max)"
  fi
}

for f in "$@"; do
  case $f in
    *.jar | *.whl)
      dir="$tmp/$(basename "$f")"
      mkdir -p "$dir"
      python3 -m zipfile -e "$f" "$dir"
      found=0
      while IFS= read -r so; do
        check "$so" "$f!${so#"$dir"/}"
        found=1
      done < <(find "$dir" -name '*.so' | sort)
      [ "$found" = 1 ] || { echo "$f: no shared object inside" >&2; bad=$((bad + 1)); }
      ;;
    *)
      [ -f "$f" ] || { echo "$f: missing" >&2; bad=$((bad + 1)); continue; }
      check "$f" "$f"
      ;;
  esac
done
echo "check-glibc: $checked checked, $bad above GLIBC_$max"
[ "$bad" -eq 0 ]
