#!/usr/bin/env bash
# Makes (or reuses) a venv of the wheel checkers at the versions pinned in
# scripts/checkers-requirements.txt: auditwheel, abi3audit, check-wheel-contents, twine.
# Usage: scripts/checkers_venv.sh VENV
# Exit 0: VENV/bin has the checkers. Exit 75 with a line "SKIPPED: ..." when PyPI cannot be
# reached (the tests that need the checkers skip then); exit 1 when the install fails otherwise.
# A venv made from the same requirements file is reused; it is rebuilt when the file changes.
set -euo pipefail
venv=${1:?usage: scripts/checkers_venv.sh VENV}
requirements=$(cd "$(dirname "$0")" && pwd)/checkers-requirements.txt
python=${APEXNPU_CHECKERS_PYTHON:-/usr/bin/python3}
stamp=$(sha256sum "$requirements" | cut -d' ' -f1)

# ctest runs the two suites that use the venv side by side: one makes it, the other waits.
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9

if [[ -f "$venv/requirements.sha256" && $(cat "$venv/requirements.sha256") == "$stamp" ]]; then
  exit 0
fi

# Made in place (a venv's scripts name its path); the stamp, written last, marks it complete.
rm -rf "$venv"
"$python" -m venv "$venv"
log="$venv/install.log"
if ! "$venv/bin/python" -m pip install --no-input --disable-pip-version-check \
       -r "$requirements" >"$log" 2>&1; then
  # Was it the network? Ask the index for one small pinned file.
  probe=$(mktemp -d)
  if ! "$venv/bin/python" -m pip download --no-input --no-deps --no-cache-dir -d "$probe" \
         "$(grep -m1 '^auditwheel==' "$requirements")" >/dev/null 2>&1; then
    rm -rf "$probe" "$venv"
    echo "SKIPPED: the wheel checkers cannot be installed: PyPI is not reachable from here"
    exit 75
  fi
  rm -rf "$probe"
  echo "checkers_venv: pip could not install $requirements:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
echo "$stamp" > "$venv/requirements.sha256"
