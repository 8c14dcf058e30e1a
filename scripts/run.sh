#!/usr/bin/env bash
# Builds apexnpu and runs its main job: upstream Apex + npu.patch + overlay -> ./apex (gen),
# then the runtime, binding and wheel for a Python -> ./dist (build).
#   APEXNPU_UPSTREAM   a local repository path or a URL (default: NVIDIA's repository on GitHub)
#   APEXNPU_PYTHON     the target Python, 3.N or a path (default: python3 on PATH)
# Extra arguments go to `apexnpu gen`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target apexnpu
bin=build/release/src/cli/apexnpu
"$bin" gen --force -o apex "$@"
python_args=()
[[ -n ${APEXNPU_PYTHON:-} ]] && python_args=(--python "$APEXNPU_PYTHON")
"$bin" build "${python_args[@]}" --tree apex -o dist --wheel
