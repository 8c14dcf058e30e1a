#!/usr/bin/env bash
# Times `apexnpu gen` and `apexnpu make-patch` against the shell route they replace, side by
# side on the real Apex repository, and prints the ratios (medians of $RUNS runs).
# The shell route is the one Ascend's build.sh runs: `git clone` (which checks out the default
# branch), `git checkout` of the pinned commit, `patch -p1`, then `cp -r` of the overlay. A
# second, leaner shell route (`git clone --no-checkout`) is timed too and its ratio printed.
#   APEXNPU_TEST_UPSTREAM   an NVIDIA Apex repository (a local path)
#   APEXNPU_BINARY          the apexnpu binary (default: build/release/src/cli/apexnpu)
set -euo pipefail
cd "$(dirname "$0")/.."
up=${APEXNPU_TEST_UPSTREAM:?set APEXNPU_TEST_UPSTREAM to an NVIDIA Apex repository path}
bin=$(realpath "${APEXNPU_BINARY:-build/release/src/cli/apexnpu}")
runs=${RUNS:-5}
ref=$(awk '$1 == "commit" {print $2}' patches/UPSTREAM)  # the pinned upstream commit
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The patch: the bundled one, or (while it is empty) edits of a dozen real files.
git --git-dir="$up" archive "$ref" | (mkdir -p "$work/a" && tar -x -C "$work/a")
if [[ -s patches/npu.patch ]]; then
  patch_file=$(realpath patches/npu.patch)
else
  cp -a "$work/a" "$work/b"
  for f in $(cd "$work/b" && find apex -name '*.py' | sort | head -12); do
    sed -i '1s/^/# npu\n/; 20s/$/  # npu/' "$work/b/$f"
  done
  (cd "$work" && diff -Nur a b > patch.diff || true)
  rm -rf "$work/b"
  patch_file=$work/patch.diff
fi
overlay=$(realpath patches/overlay)

source bench/route_timing.sh

gen_local() { "$bin" gen --upstream "$up" --ref "$ref" --patch "$patch_file" --overlay "$overlay" -o "$out"; }
gen_cached() {
  "$bin" gen --upstream "file://$up" --ref "$ref" --clone-cache "$work/cache" --offline \
    --patch "$patch_file" --overlay "$overlay" -o "$out"
}
# git's pack transport cannot copy this snapshot (old objects are missing), so both shell routes
# clone it as a local path, as `git clone PATH` does by default.
shell_route() {
  git clone -q "$up" "$out" && git -C "$out" checkout -q "$ref" &&
    (cd "$out" && patch -p1 -s < "$patch_file") && cp -r "$overlay/." "$out/"
}
shell_route_no_checkout() {
  git clone -q --no-checkout "$up" "$out" && git -C "$out" checkout -q "$ref" &&
    (cd "$out" && patch -p1 -s < "$patch_file") && cp -r "$overlay/." "$out/"
}
make_patch() {
  "$bin" make-patch --upstream "$up" --ref "$ref" --tree "$work/edited" -o "$out"
}
diff_nur() { mkdir -p "$out" && (cd "$work" && diff -Nur a edited > "$out/d.diff" || [[ $? == 1 ]]); }

"$bin" gen --upstream "file://$up" --ref "$ref" --clone-cache "$work/cache" --patch "$patch_file" \
  --overlay "$overlay" -o "$work/warm" >/dev/null  # warm the cache
out=$work/edited gen_local >/dev/null 2>&1

mkdir -p "$work/runs"
time_routes gen_local gen_cached shell_route shell_route_no_checkout
time_routes make_patch diff_nur
t_local=$(median gen_local)
t_cached=$(median gen_cached)
t_shell=$(median shell_route)
t_lean=$(median shell_route_no_checkout)
t_make=$(median make_patch)
t_diff=$(median diff_nur)

printf '%-56s %8.3f s\n' "apexnpu gen (local path, read in place)" "$t_local" \
  "apexnpu gen (file:// upstream, warm cache)" "$t_cached" \
  "git clone + checkout + patch -p1 + cp overlay (build.sh)" "$t_shell" \
  "the same with git clone --no-checkout" "$t_lean" \
  "apexnpu make-patch" "$t_make" "diff -Nur of the same trees" "$t_diff"
echo "ratios (lower is faster; goal for gen: <= 0.50)"
printf '  gen local / shell route    %.2f\n' "$(echo "$t_local / $t_shell" | bc -l)"
printf '  gen cached / shell route   %.2f\n' "$(echo "$t_cached / $t_shell" | bc -l)"
printf '  gen local / --no-checkout shell route    %.2f\n' "$(echo "$t_local / $t_lean" | bc -l)"
printf '  gen cached / --no-checkout shell route   %.2f\n' "$(echo "$t_cached / $t_lean" | bc -l)"
printf '  make-patch / diff -Nur     %.2f\n' "$(echo "$t_make / $t_diff" | bc -l)"
