#!/usr/bin/env bash
# make-patch on the worst input for a line diff: a 2 MB file replaced by its own lines in another
# order (every line still on both sides, the edit as long as the file), in the real Apex tree.
# Prints make-patch's time and peak memory against its goals (under 10 s and 1 GiB; before the
# linear-memory search, 1 MB took 0.6 GB and 2 MB 4.6 GB) and, beside them, `diff -Nur` of the
# same two trees (the ratio is reported, with no goal on it). Medians of $RUNS runs.
#   APEXNPU_TEST_UPSTREAM    an NVIDIA Apex repository (a local path)
#   APEXNPU_BINARY           the apexnpu binary (default: build/release/src/cli/apexnpu)
#   SIZE                     the file's size in bytes (default 2000000); RUNS (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
up=${APEXNPU_TEST_UPSTREAM:?set APEXNPU_TEST_UPSTREAM to an NVIDIA Apex repository path}
bin=$(realpath "${APEXNPU_BINARY:-build/release/src/cli/apexnpu}")
size=${SIZE:-2000000}
runs=${RUNS:-3}
ref=$(awk '$1 == "commit" {print $2}' patches/UPSTREAM)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Upstream: the pinned tree plus one big file made of its own Python lines (repeats included),
# committed into a repository of its own.
mkdir -p "$work/a"
git --git-dir="$up" archive "$ref" | tar -x -C "$work/a"
while (($(stat -c %s "$work/big.py" 2>/dev/null || echo 0) < size)); do
  find "$work/a" -name '*.py' -print0 | sort -z | xargs -0 cat >> "$work/big.py"
done
head -c "$size" "$work/big.py" | sed '$d' > "$work/a/big.py"
git -C "$work/a" init -q && git -C "$work/a" add -A &&
  git -C "$work/a" -c user.name=bench -c user.email=bench@example.invalid commit -qm upstream
cp -a "$work/a" "$work/edited"
rm -rf "$work/edited/.git"
shuf --random-source=<(yes) "$work/a/big.py" > "$work/edited/big.py"
echo "big.py: $(stat -c %s "$work/a/big.py") bytes, $(wc -l < "$work/a/big.py") lines," \
  "$(sort -u "$work/a/big.py" | wc -l) distinct; permuted in the edited tree"

# One run of a command: "<seconds> <peak resident KiB>" (time says first when it exits 1).
measure() { /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>&1 || [[ $? == 1 ]]; tail -1 "$work/time"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mp_t=() mp_m=() df_t=() df_m=()
for k in $(seq "$runs"); do
  read -r t m < <(measure "$bin" make-patch --upstream "$work/a" --ref HEAD --tree "$work/edited" \
                    -o "$work/out-$k")
  mp_t+=("$t") mp_m+=("$m")
  read -r t m < <(cd "$work" && measure sh -c 'diff -Nur --exclude=.git a edited > d.diff')
  df_t+=("$t") df_m+=("$m")
done
# The patch applies with GNU patch and gives the edited file back.
cp -a "$work/a" "$work/check"
(cd "$work/check" && patch -p1 -s --batch < "$work/out-1/npu.patch")
cmp -s "$work/check/big.py" "$work/edited/big.py" ||
  { echo "$(basename "$0"): make-patch's patch does not give the edited file" >&2; exit 1; }

t_make=$(printf '%s\n' "${mp_t[@]}" | median); m_make=$(printf '%s\n' "${mp_m[@]}" | median)
t_diff=$(printf '%s\n' "${df_t[@]}" | median); m_diff=$(printf '%s\n' "${df_m[@]}" | median)
verdict() { awk -v v="$1" -v goal="$2" 'BEGIN { print (v < goal ? "within" : "OVER") }'; }
printf '%-28s %7.2f s %8.1f MiB\n' "apexnpu make-patch" "$t_make" "$(echo "$m_make / 1024" | bc -l)" \
  "diff -Nur (same trees)" "$t_diff" "$(echo "$m_diff / 1024" | bc -l)"
echo "goals for make-patch: time < 10 s ($(verdict "$t_make" 10)), memory < 1 GiB ($(verdict "$m_make" 1048576))"
printf 'ratio make-patch / diff -Nur: time %.2f, memory %.2f (reported, no goal)\n' \
  "$(echo "$t_make / $t_diff" | bc -l)" "$(echo "$m_make / $m_diff" | bc -l)"
