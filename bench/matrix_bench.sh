#!/usr/bin/env bash
# One cold `apexnpu build --python=all` (every CPython 3.7-3.13 found: one runtime compile, one
# binding per Python, one job pool) side by side with one cold single-Python build and with
# seven cold single-Python builds, as a loop of per-Python builds would run them.
#   bench/matrix_bench.sh [path/to/apexnpu]
# Each build starts from an empty object cache. Prints the times and the ratios.
# Goal: all Pythons, cold, <= 1.5x one cold single-Python build.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/release/src/cli/apexnpu}
jobs=${JOBS:-2}
[[ -x $bin ]] || { echo "matrix_bench: no apexnpu binary at $bin (pass its path)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/apexnpu-matrix-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export APEXNPU_DATA_DIR=${APEXNPU_DATA_DIR:-$here} NO_COLOR=1

mkdir -p "$work/tree/apex"
echo '' >"$work/tree/apex/__init__.py"

seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
build() {  # build NAME PYTHONS: a cold build into output and object cache of their own
  "$bin" -q build --python="$2" --tree "$work/tree" -o "$work/dist-$1" --wheel --no-emulator \
    --object-cache "$work/cache-$1" -j "$jobs"
}

# The Pythons --python=all finds, for the single builds.
pythons=$("$bin" --json build --python=all --tree "$work/tree" -o "$work/probe" --no-emulator \
  --object-cache "$work/probe-cache" -j "$jobs" |
  python3 -c 'import json,sys; print(" ".join(w["python"]["version"].rsplit(".", 1)[0] for w in json.load(sys.stdin)["wheels"]))')
count=$(wc -w <<<"$pythons")
echo "Pythons: $pythons ($count)"

all=$(seconds build all all)
one=$(seconds build one "${pythons%% *}")
each=0
for p in $pythons; do each=$(awk -v a="$each" -v b="$(seconds build "single-$p" "$p")" 'BEGIN { print a + b }'); done

printf '%-52s %8.2f s\n' "one build, --python=all ($count wheels), cold" "$all"
printf '%-52s %8.2f s\n' "one single-Python build (${pythons%% *}), cold" "$one"
printf '%-52s %8.2f s\n' "$count single-Python builds, each cold" "$each"
echo "all / one single:     $(ratio "$all" "$one")   (goal <= 1.5)"
echo "all / $count singles:     $(ratio "$all" "$each")"
