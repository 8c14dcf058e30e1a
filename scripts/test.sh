#!/usr/bin/env bash
# Builds apexnpu and runs the whole test suite (C++ tests under ctest, Python tests with pytest),
# then each patch-engine fuzzer briefly (scripts/fuzz.sh; $APEXNPU_FUZZ_SECONDS each, 60 by
# default, 0 skips them).
# Usage: scripts/test.sh [preset]   (release by default; `asan` runs it under ASan+UBSan)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
scripts/setup.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset"
fuzz_seconds=${APEXNPU_FUZZ_SECONDS:-60}
if ((fuzz_seconds > 0)); then
  scripts/fuzz.sh "$fuzz_seconds"
fi
