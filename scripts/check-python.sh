#!/usr/bin/env bash
# Checks every Python file in git with ruff, as ruff.toml says: the lint rules, then the format (a
# file `ruff format` would change fails the run). ruff is pinned (another version formats some
# constructs differently) and installed from PyPI into a venv of Debian's Python made here.
# Fix with: build/venv-ruff/bin/ruff format FILE...  and  build/venv-ruff/bin/ruff check --fix FILE...
# Usage: scripts/check-python.sh [venv dir]   (build/venv-ruff by default)
set -euo pipefail
cd "$(dirname "$0")/.."
ruff_version=0.17.6
dir=${1:-build/venv-ruff}
ruff=$dir/bin/ruff
if ! [[ -x $ruff ]] || [[ $("$ruff" --version) != "ruff $ruff_version" ]]; then
  rm -rf "$dir"
  /usr/bin/python3 -m venv "$dir"
  if ! "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
       "ruff==$ruff_version"; then
    echo "check-python: pip could not install ruff==$ruff_version into $dir (is PyPI reachable?)" >&2
    exit 2
  fi
fi
mapfile -t files < <(git ls-files -- '*.py')
"$ruff" check --quiet -- "${files[@]}"
if ! "$ruff" format --check --quiet -- "${files[@]}"; then
  echo "check-python: run $ruff format on the files above" >&2
  exit 1
fi
echo "check-python: ${#files[@]} Python files pass ruff $ruff_version's lint and format"
