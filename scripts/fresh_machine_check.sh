#!/usr/bin/env bash
# Runs the README's two commands as a newcomer would on a fresh machine: a Debian bookworm
# minbase root made with debootstrap, with only g++, make, git and ca-certificates installed in
# it, a clone of this repository's committed HEAD and a read-only copy of ../shared beside it.
# Prints how long each command took and its last lines; exits non-zero when either failed.
# Not part of `make check` (it downloads a few hundred MB of Debian packages and runs the whole
# check once more): run it before resolving an issue that changes the project's dependencies.
#
#   sudo scripts/fresh_machine_check.sh [WORK_DIR]
#
# WORK_DIR (default: a new folder under /var/tmp) holds the root and the logs, and is removed
# at the end unless KEEP=1. MIRROR overrides the Debian mirror, which is otherwise the one this
# machine's apt uses. The commands run are the README's: DEMO_CMD and CHECK_CMD override them.
set -euo pipefail

repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
shared=$(dirname "$repo")/shared
demo_cmd=${DEMO_CMD:-make -j2 demo}
check_cmd=${CHECK_CMD:-make -j2 check}

die() { echo "fresh_machine_check: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap and chroot); run it with sudo"
[ -d "$shared" ] || die "no $shared beside the repository (the README's commands read it)"
grep -qF "$demo_cmd" "$repo/README.md" || die "README.md does not name '$demo_cmd': set DEMO_CMD"
grep -qF "$check_cmd" "$repo/README.md" || die "README.md does not name '$check_cmd': set CHECK_CMD"

mirror=${MIRROR:-}
if [ -z "$mirror" ]; then  # the mirror this machine's apt already uses (deb822 or one-line)
  mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
fi
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk '$1 == "deb" && $0 !~ /security/ { print $2; exit }' /etc/apt/sources.list)
fi
[ -n "$mirror" ] || die "cannot tell which Debian mirror apt uses here: set MIRROR"

if ! command -v debootstrap >/dev/null 2>&1; then
  echo "installing debootstrap..."
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

work=${1:-$(mktemp -d /var/tmp/katrace-fresh.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
root=$work/root
mounts=()
cleanup() {
  local m
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -R "${mounts[i]}" 2>/dev/null || umount -lR "${mounts[i]}" || true; done
  # Never remove a tree that still has a file system mounted in it (that would reach the host's).
  if [ "${KEEP:-0}" != 1 ] && ! grep -qF " $root/" /proc/mounts; then
    rm -rf "$work"
  else
    echo "fresh_machine_check: kept $work"
  fi
}
trap cleanup EXIT

step() { echo "== $*"; }
step "debootstrap bookworm (minbase) into $root"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -n 20 "$work/debootstrap.log"; die "debootstrap failed"; }

for m in proc sys dev; do
  mkdir -p "$root/$m"
  case $m in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys" ;;
    dev) mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" ;;
  esac
  mounts+=("$root/$m")
done
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

in_root() {  # in_root COMMAND: run it in the new root with a clean environment, as root
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -c "$1"
}

step "apt-get install g++ make git ca-certificates"
in_root "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ make git ca-certificates" \
  >"$work/install.log" 2>&1 || { tail -n 20 "$work/install.log"; die "installing the four packages failed"; }

step "clone $(git -C "$repo" rev-parse --short HEAD) with shared/ beside it"
mkdir -p "$root/work"
git clone --quiet --no-hardlinks "$repo" "$root/work/katrace"
cp -a "$shared" "$root/work/shared"
chmod -R a-w "$root/work/shared"

status=0
run_timed() {  # run_timed NAME COMMAND
  local name=$1 cmd=$2 start rc=0
  step "$cmd"
  start=$(date +%s)
  in_root "cd /work/katrace && $cmd" >"$work/$name.log" 2>&1 || rc=$?
  local secs=$(($(date +%s) - start))
  echo "-- last lines of '$cmd':"
  tail -n 15 "$work/$name.log"
  # What skipped and why (the test runner prints each skipped test and its reason).
  if grep -qE '^\[  SKIPPED \] [A-Za-z]|: Skipped' "$work/$name.log"; then
    echo "-- skipped in '$cmd':"
    grep -E -A1 '^\[  SKIPPED \] [A-Za-z]|: Skipped' "$work/$name.log" | grep -v '^--$' | head -n 40
  fi
  printf -- '-- %s: exit %d after %d min %02d s\n' "$cmd" "$rc" $((secs / 60)) $((secs % 60))
  [ "$rc" -eq 0 ] || status=1
}
run_timed demo "$demo_cmd"
run_timed check "$check_cmd"
[ "$status" -eq 0 ] && echo "fresh_machine_check: both commands passed" || echo "fresh_machine_check: FAILED"
exit "$status"
