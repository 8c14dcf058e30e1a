#!/usr/bin/env bash
# Checks the C++ format first (scripts/check-format.sh: a file clang-format would change fails the
# run) and the Python lint and format (scripts/check-python.sh, ruff), then builds apexnpu and runs
# the whole test suite (C++ tests under ctest, Python tests with pytest on Debian's torch 1.13.1
# and on torch 2.13.0 in build/venv-torch2), then each fuzzer briefly (scripts/fuzz.sh;
# $APEXNPU_FUZZ_SECONDS each, 60 by default, 0 skips them).
# Usage: scripts/test.sh [preset]   (release by default; `asan` runs it under ASan+UBSan)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
scripts/setup.sh test
scripts/check-format.sh
scripts/check-python.sh
# The Python suites run on Debian's torch 1.13.1 and, in a venv made here, on torch 2.13.0.
torch2_python=$(scripts/torch2_venv.sh "build/venv-torch2") ||
  echo "test.sh: no torch 2.x venv; the python.torch2.* tests will be skipped" >&2
cmake --preset "$preset" -DAPEXNPU_TORCH2_PYTHON="${torch2_python:-}" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset"
fuzz_seconds=${APEXNPU_FUZZ_SECONDS:-60}
if ((fuzz_seconds > 0)); then
  scripts/fuzz.sh "$fuzz_seconds"
fi
