#!/usr/bin/env bash
# Builds apexnpu and runs the whole test suite (C++ tests under ctest, Python tests with pytest).
# Usage: scripts/test.sh [preset]   (release by default; `asan` runs it under ASan+UBSan)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
scripts/setup.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset"
