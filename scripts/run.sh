#!/usr/bin/env bash
# Builds apexnpu and runs its main job: upstream Apex + npu.patch + overlay -> ./apex (gen),
# then the runtime, binding and wheel for a Python -> ./dist (build).
#   APEXNPU_UPSTREAM   a local repository path or a URL (default: NVIDIA's repository on GitHub)
#   APEXNPU_PYTHON     the target Python, 3.N or a path (default: python3 on PATH)
# Extra arguments go to `apexnpu gen`. `scripts/run.sh --print-packages` lists the Debian packages
# its first step installs (scripts/setup.sh main: the build's needs only; scripts/test.sh installs
# the rest) and does nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
dependencies=(scripts/setup.sh main)
if [[ ${1:-} == --print-packages ]]; then
  exec "${dependencies[@]}" --print
fi
"${dependencies[@]}"
# The main preset builds the tool alone, into build/release: no tests, no benchmarks.
cmake --preset main >/dev/null
cmake --build --preset main -j "$(nproc)"
bin=build/release/src/cli/apexnpu
"$bin" gen --force -o apex "$@"
python_args=()
[[ -n ${APEXNPU_PYTHON:-} ]] && python_args=(--python "$APEXNPU_PYTHON")
"$bin" build "${python_args[@]}" --tree apex -o dist --wheel
