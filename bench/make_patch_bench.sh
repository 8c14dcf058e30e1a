#!/usr/bin/env bash
# Times `apexnpu make-patch` side by side with `diff -Nur` and `git diff --no-index` of the same
# two trees, on the real Apex tree with an Ascend-size edit, and prints both ratios (medians of
# $RUNS interleaved runs; goal: both <= 1.0).
# The edit is Ascend's own, made as Ascend's gen.sh makes it: upstream at the pinned commit,
# Ascend's master patch/npu.patch applied with patch -p1, its src/ and tests/ copied in.
#   APEXNPU_TEST_UPSTREAM    an NVIDIA Apex repository (a local path, read in place)
#   APEXNPU_TEST_ASCEND      a git directory of Ascend's apex (read in place)
#   APEXNPU_BINARY           the apexnpu binary (default: build/release/src/cli/apexnpu)
#   APEXNPU_BASELINE_BINARY  optional: another apexnpu (an older build) timed in the same rounds
#   RUNS                     rounds (default 15); TMPDIR, where the trees and outputs go
# make-patch creates an inode per overlay file and directory (about 70 here), diff two. On ext4
# without a journal, each new inode first skips every inode of its group deleted in the last
# minutes (ext4's recently_deleted(), which only journal-less ext4 runs), which after a test run
# costs up to about 1 ms of kernel time per inode. So the bench also times `cp -r` of
# make-patch's output in the same rounds, the cost of creating those files alone, and prints the
# file system and whether it has a journal; TMPDIR on tmpfs, or on ext4 with a journal, times the
# programs rather than that.
set -euo pipefail
cd "$(dirname "$0")/.."
up=${APEXNPU_TEST_UPSTREAM:?set APEXNPU_TEST_UPSTREAM to an NVIDIA Apex repository path}
ascend=${APEXNPU_TEST_ASCEND:?set APEXNPU_TEST_ASCEND to a git directory of Ascend apex}
bin=$(realpath "${APEXNPU_BINARY:-build/release/src/cli/apexnpu}")
baseline=${APEXNPU_BASELINE_BINARY:+$(realpath "$APEXNPU_BASELINE_BINARY")}
runs=${RUNS:-15}
ref=$(awk '$1 == "commit" {print $2}' patches/UPSTREAM)  # the pinned upstream commit
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/a" "$work/ascend"
git --git-dir="$up" archive "$ref" | tar -x -C "$work/a"
git --git-dir="$ascend" archive master patch src tests | tar -x -C "$work/ascend"
cp -a "$work/a" "$work/edited"
(cd "$work/edited" && patch -p1 -s --batch < "$work/ascend/patch/npu.patch")
cp -r "$work/ascend/src/." "$work/edited/"
cp -r "$work/ascend/tests/." "$work/edited/tests/"
echo "the edit: $(grep -c '^diff ' "$work/ascend/patch/npu.patch") upstream files patched," \
  "$(find "$work/ascend/src" "$work/ascend/tests" -type f | wc -l) new files;" \
  "$(find "$work/a" -type f | wc -l) upstream files"

source bench/route_timing.sh
make_patch() { "$bin" make-patch --upstream "$up" --ref "$ref" --tree "$work/edited" -o "$out"; }
baseline_make_patch() {
  "$baseline" make-patch --upstream "$up" --ref "$ref" --tree "$work/edited" -o "$out"
}
diff_nur() { mkdir -p "$out" && (cd "$work" && diff -Nur a edited > "$out/d.diff" || [[ $? == 1 ]]); }
git_diff() {
  mkdir -p "$out" && (cd "$work" && git diff --no-index a edited > "$out/g.diff" || [[ $? == 1 ]])
}

# The control: make-patch's files and directories created by coreutils, nothing computed.
copy_output() { cp -r "$work/warm-make_patch" "$out"; }

# "ext4 with a journal", "ext4 without a journal", or the file system's type.
file_system() {
  local type device
  type=$(df --output=fstype "$work" | tail -1 | tr -d ' ')
  [[ $type == ext4 ]] || { echo "$type"; return; }
  device=$(basename "$(findmnt -n -o SOURCE -T "$work")")
  if compgen -G "/proc/fs/jbd2/$device-*" >/dev/null; then echo "ext4 with a journal"
  else echo "ext4 without a journal"; fi
}

routes=(make_patch diff_nur git_diff)
[[ -n $baseline ]] && routes+=(baseline_make_patch)
mkdir -p "$work/runs"
for route in "${routes[@]}"; do out=$work/warm-$route "$route" >/dev/null 2>&1; done  # cold caches
# Checked once: GNU patch and the overlay turn upstream into the edited tree.
cp -a "$work/a" "$work/check"
(cd "$work/check" && patch -p1 -s --batch < "$work/warm-make_patch/npu.patch")
cp -r "$work/warm-make_patch/overlay/." "$work/check/"
diff -r "$work/check" "$work/edited" >/dev/null ||
  { echo "make_patch_bench: make-patch's output does not give the edited tree" >&2; exit 1; }
routes+=(copy_output)
time_routes "${routes[@]}"
t_make=$(median make_patch)
t_diff=$(median diff_nur)
t_git=$(median git_diff)
printf '%-40s %8.4f s\n' "apexnpu make-patch" "$t_make" "diff -Nur of the same trees" "$t_diff" \
  "git diff --no-index of the same trees" "$t_git"
[[ -n $baseline ]] && printf '%-40s %8.4f s\n' "baseline make-patch ($baseline)" "$(median baseline_make_patch)"
t_copy=$(median copy_output)
printf '%-40s %8.4f s\n' "cp -r of make-patch's output (control)" "$t_copy"
fs=$(file_system)
echo "ratios (lower is faster; goal: <= 1.00 each), trees and outputs on $fs"
printf '  make-patch / diff -Nur              %.2f\n' "$(echo "$t_make / $t_diff" | bc -l)"
printf '  make-patch / git diff --no-index    %.2f\n' "$(echo "$t_make / $t_git" | bc -l)"
printf '  control: cp -r of the output / diff -Nur  %.2f\n' "$(echo "$t_copy / $t_diff" | bc -l)"
[[ $fs == "ext4 without a journal" ]] &&
  echo "  (journal-less ext4: soon after mass deletions, creating the output's inodes costs more than" \
       "the diffs; compare the control, or set TMPDIR to tmpfs or a journaled file system)"
if [[ -n $baseline ]]; then
  t_base=$(median baseline_make_patch)
  printf '  baseline / diff -Nur                %.2f\n' "$(echo "$t_base / $t_diff" | bc -l)"
  printf '  baseline / git diff --no-index      %.2f\n' "$(echo "$t_base / $t_git" | bc -l)"
fi
