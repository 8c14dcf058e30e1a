#!/usr/bin/env bash
# Makes (or reuses) a Debian 11 "bullseye" root from Debian's packages: glibc 2.31 and CPython 3.9
# with bullseye's own pip, the oldest system reachable here on which tests load our manylinux
# wheels for real (tests/python/test_manylinux_floor.py).
# Usage: scripts/bullseye_root.sh ROOT
# Exit 0: ROOT is complete. Exit 75 with a line "SKIPPED: ..." when it cannot be made here (not
# root, no debootstrap, Debian's mirror unreachable); exit 1 when debootstrap fails otherwise.
# The mirror is the one apt uses on this machine ($APEXNPU_DEBIAN_MIRROR overrides it).
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"  # debootstrap and chroot live there
root=${1:?usage: scripts/bullseye_root.sh ROOT}
suite=bullseye
include=python3,python3-pip
stamp="$root/.apexnpu-root"
wanted="debootstrap --variant=minbase --include=$include $suite"

if [[ -f "$stamp" && $(cat "$stamp") == "$wanted" ]]; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "SKIPPED: making and entering a Debian root needs root (debootstrap, chroot)"
  exit 75
fi
if ! command -v debootstrap >/dev/null; then
  echo "SKIPPED: no debootstrap (apt-get install debootstrap)"
  exit 75
fi

# The Debian archive apt reads here: the first URI of a "deb" source ending in /debian.
mirror=${APEXNPU_DEBIAN_MIRROR:-}
if [[ -z "$mirror" ]]; then
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {for (i = 2; i <= NF; i++) print $i}' |
             grep -m1 -E '/debian/?$' || true)
fi
if [[ -z "$mirror" ]]; then
  mirror=$(cat /etc/apt/sources.list 2>/dev/null | awk '$1 == "deb" {print ($2 ~ /^\[/) ? $3 : $2}' |
             grep -m1 -E '/debian/?$' || true)
fi
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}
if ! wget -q -T 20 -t 2 -O /dev/null "$mirror/dists/$suite/Release"; then
  echo "SKIPPED: Debian's $suite packages cannot be reached at $mirror"
  exit 75
fi

# Unpack, then configure with dpkg's unsafe I/O (no fsync per file: the root is a test fixture,
# rebuilt if a crash leaves it half made; it halves the time). The stamp, written last, marks
# it complete; a partial root is made beside ROOT and renamed into place.
partial="$root.partial"
log="$root.log"
rm -rf "$partial"
mkdir -p "$(dirname "$root")"
started=$(date +%s)
if ! debootstrap --foreign --variant=minbase --include="$include" "$suite" "$partial" "$mirror" \
       >"$log" 2>&1; then
  echo "bullseye_root: debootstrap (unpacking) failed; the end of $log:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
mkdir -p "$partial/etc/dpkg/dpkg.cfg.d"
echo force-unsafe-io > "$partial/etc/dpkg/dpkg.cfg.d/apexnpu-unsafe-io"
if ! chroot "$partial" /debootstrap/debootstrap --second-stage >>"$log" 2>&1; then
  echo "bullseye_root: debootstrap (configuring) failed; the end of $log:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
echo "$wanted" > "$partial/.apexnpu-root"
rm -rf "$root"
mv "$partial" "$root"
echo "bullseye_root: made $root from $mirror in $(( $(date +%s) - started )) s"
