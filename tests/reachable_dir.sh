# Sourced by the tests that run something as another user (bash).
#
# reachable_dir TEST USER: sets $uid and $gid to USER's, and $work to a new
# directory, mode 0755, that USER can reach: under $TMPDIR (the build tree)
# when USER can reach that, else under /var/tmp. A clone under a 0700
# directory (root's home, any `mktemp -d`) hides its build tree from every
# other user. Never under /tmp: a target given its own /tmp (as a service
# often is) would not see it. Where there is no such place, prints one SKIP
# line for TEST and exits 77.
reachable_dir() {
  local base
  uid=$(id -u "$2") gid=$(id -g "$2")
  for base in "${TMPDIR:-/tmp}" /var/tmp; do
    case "$(realpath "$base")/" in /tmp/*) continue ;; esac
    work=$(mktemp -d "$base/tt.XXXXXX") || continue
    chmod 755 "$work"
    setpriv --reuid="$uid" --regid="$gid" --clear-groups test -x "$work" && return 0
    rmdir "$work"
  done
  echo "SKIP $1: $2 can reach no new directory under ${TMPDIR:-/tmp} or /var/tmp"
  exit 77
}
