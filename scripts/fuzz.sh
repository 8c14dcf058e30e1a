#!/usr/bin/env bash
# Builds the patch engine's and the wheel readers' (zip, ELF) libFuzzer harnesses (the `fuzz` preset: clang, ASan, UBSan) and runs
# each for a bounded time, one after the other. CI runs it briefly (scripts/test.sh); for hours:
#   scripts/fuzz.sh 14400                       # four hours per harness
#   nice -n 10 scripts/fuzz.sh 3600 parse_patch # one harness, niced on a shared machine
# Usage: scripts/fuzz.sh [SECONDS_PER_HARNESS] [HARNESS...]
#   harnesses: parse_patch apply_patch write_round_trip zip_reader zip_stream elf_reader (all by
#   default); 60 s each
#   FUZZ_WORK  the growing corpora and findings (default build/fuzz/work/<harness>/)
# Each harness starts from its seeds in fuzz/corpus/<harness>/ (kept in the repository) and its
# work corpus. A finding fails the run: the input is left as $FUZZ_WORK/<harness>/crash-* (or
# leak-*, timeout-*, oom-*); replay it with build/fuzz/fuzz/<harness>_fuzzer FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
harnesses=("$@")
((${#harnesses[@]})) || harnesses=(parse_patch apply_patch write_round_trip zip_reader zip_stream elf_reader)
work=${FUZZ_WORK:-build/fuzz/work}

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)" >/dev/null
passed=0 failed=0
for h in "${harnesses[@]}"; do
  mkdir -p "$work/$h/corpus"
  log=$work/$h/last-run.log
  # The streaming reader promises bounded memory: its cap is what it needs under ASan, not 2 GB.
  rss_mb=2048
  [[ $h == zip_stream ]] && rss_mb=512
  if build/fuzz/fuzz/${h}_fuzzer -max_total_time="$seconds" -timeout=10 -rss_limit_mb="$rss_mb" \
       -print_final_stats=1 -artifact_prefix="$work/$h/" "$work/$h/corpus" "fuzz/corpus/$h" >"$log" 2>&1; then
    passed=$((passed + 1))
    status=ok
  else
    failed=$((failed + 1))
    status=FAILED
    grep -E "ERROR|invariant|runtime error|Test unit written" "$log" | head -20 >&2 || true
  fi
  runs=$(awk '/stat::number_of_executed_units/ {print $NF}' "$log")
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  echo "fuzz $h: $status, ${runs:-?} executions in ${seconds}s, ${cov:-no coverage line} (log: $log)"
done
echo "fuzz: $passed passed, $failed failed"
((failed == 0))
