#!/usr/bin/env bash
# Times `apexnpu build` side by side with the original route (setup.py + torch CppExtension) for
# a C++ extension of the same size: the same runtime sources (every kernel file once per ISA
# level), the same binding sources, plus one translation unit that includes
# <torch/extension.h> as the original bindings do.
#   bench/build_bench.sh [path/to/apexnpu]        (needs /usr/bin/python3 with torch + setuptools)
# Prints: cold build (empty object cache), no-change rebuild, setup.py build, and the ratios.
# Goals: cold < 20 s on 2 cores and <= 1/5 of setup.py (the build it replaces); rebuild < 1 s.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/release/src/cli/apexnpu}
jobs=${JOBS:-2}
python=${PYTHON:-/usr/bin/python3}
[[ -x $bin ]] || { echo "build_bench: no apexnpu binary at $bin (pass its path)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/apexnpu-build-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export APEXNPU_DATA_DIR=${APEXNPU_DATA_DIR:-$here} NO_COLOR=1
runtime=$here/src/runtime

# A minimal Apex tree to package.
mkdir -p "$work/tree/apex/sub"
echo 'from . import sub' >"$work/tree/apex/__init__.py"
echo '' >"$work/tree/apex/sub/__init__.py"

seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a / b }'; }

build() {
  "$bin" build --python="$python" --tree "$work/tree" -o "$work/dist" --wheel \
    --object-cache "$work/cache" -j "$jobs"
}
cold=$(seconds build)
warm=$(seconds build)
units=$("$bin" --json build --python="$python" --tree "$work/tree" -o "$work/dist" \
  --object-cache "$work/cache" -j "$jobs" | "$python" -c 'import json,sys; d=json.load(sys.stdin); print(d["total"], d["compiled"])')

printf '%-44s %8.2f s\n' "apexnpu build, cold (empty cache, -j$jobs)" "$cold"
printf '%-44s %8.2f s\n' "apexnpu build, no-change rebuild" "$warm"
echo "  (compilation units, compiled on the last rebuild: $units)"

if ! "$python" -c 'import torch, setuptools' 2>/dev/null; then
  echo "setup.py route: skipped ($python has no torch or setuptools)"
  exit 0
fi

# The same sources for setuptools: kernel files once per ISA level through wrapper files (setup.py
# cannot give one source different flags, so the widest ISA flags apply to every file).
ext=$work/ext
mkdir -p "$ext/gen"
levels=$("$python" -c 'import json,platform,sys; arch={"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine()); print(" ".join(str(l["level"]) for l in json.load(open(sys.argv[1]))["isa_levels"][arch]))' "$runtime/build.json")
version=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["runtime_version"])' "$runtime/build.json")
sources=()
while IFS= read -r f; do sources+=("$f"); done < <(cd "$runtime" && find . -name '*.cpp' ! -name '*.kernels.cpp' ! -path './python/*' | sort)
while IFS= read -r k; do
  for l in $levels; do
    w="$ext/gen/$(echo "$k" | tr '/.' '__')_isa$l.cpp"
    printf '#define APEXNPU_ISA_LEVEL %s\n#include "%s"\n' "$l" "$runtime/$k" >"$w"
    sources+=("$w")
  done
done < <(cd "$runtime" && find . -name '*.kernels.cpp' | sed 's|^\./||' | sort)
while IFS= read -r f; do sources+=("$f"); done < <(cd "$runtime" && ls python/*.cpp | grep -v module_change_data_ptr)
cat >"$ext/torch_binding.cpp" <<'CPP'
#include <torch/extension.h>
#include "version.h"
static std::string version() { return apexnpu::rt::runtime_version(); }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("version", &version); }
CPP
sources+=("$ext/torch_binding.cpp")
{
  echo "from setuptools import setup"
  echo "from torch.utils.cpp_extension import CppExtension, BuildExtension"
  echo "srcs = ["
  for s in "${sources[@]}"; do [[ $s = /* ]] && echo "  '$s'," || echo "  '$runtime/${s#./}',"; done
  echo "]"
  echo "flags = ['-std=c++20', '-O3', '-fPIC', '-fvisibility=hidden', '-fstack-protector-strong',"
  echo "         '-D_FORTIFY_SOURCE=2', '-DAPEXNPU_RUNTIME_VERSION=\"$version\"', '-mavx512f',"
  echo "         '-mavx512bw', '-mavx512vl', '-mavx512dq', '-mavx2', '-mfma', '-mf16c']"
  echo "setup(name='apex_bench', ext_modules=[CppExtension('apex_bench_ext', srcs,"
  echo "      include_dirs=['$runtime'], extra_compile_args={'cxx': flags})],"
  echo "      cmdclass={'build_ext': BuildExtension})"
} >"$ext/setup.py"
export MAX_JOBS=$jobs
setup_time=$(cd "$ext" && seconds "$python" setup.py -q build_ext --inplace)
printf '%-44s %8.2f s   (%d sources, MAX_JOBS=%s)\n' "setup.py + torch CppExtension" "$setup_time" "${#sources[@]}" "$jobs"
printf '%-44s %8s\n' "ratio cold apexnpu / setup.py" "$(ratio "$cold" "$setup_time")"
printf '%-44s %8s\n' "ratio no-change rebuild / setup.py" "$(ratio "$warm" "$setup_time")"
