# Shared by the bench scripts (sourced): time_routes ROUTE... runs each route (a shell function)
# $runs times, each writing into a fresh $work/runs/<route>-<k> named $out, and median ROUTE
# prints the median of its times, in seconds.
# Every route runs $runs times, interleaved (round k runs each route once), so that all see the
# same file-system state; each run writes into a fresh directory, $out. Outputs are removed at
# the end, not between runs: on ext4 without a journal, creating files soon after deleting many
# makes every new inode scan past the recently deleted ones (ext4's recently_deleted()), which
# would time the bench's own clean-up rather than either route.
declare -A times
time_routes() {
  for k in $(seq "$runs"); do
    for route in "$@"; do
      out=$work/runs/$route-$k
      # $EPOCHREALTIME is read without a fork, so only the route itself is timed.
      local t0=$EPOCHREALTIME
      "$route" >/dev/null 2>&1 || { echo "$(basename "$0"): $route failed" >&2; exit 1; }
      local t1=$EPOCHREALTIME
      times[$route]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }') "
    done
  done
}
median() { printf '%s\n' ${times[$1]} | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

