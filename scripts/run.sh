#!/usr/bin/env bash
# Builds apexnpu and runs its main job: upstream Apex + npu.patch + overlay -> ./apex (gen).
# Upstream: $APEXNPU_UPSTREAM (a path or URL), else NVIDIA's repository on GitHub.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target apexnpu
bin=build/release/src/cli/apexnpu
"$bin" gen --force -o apex "$@"
