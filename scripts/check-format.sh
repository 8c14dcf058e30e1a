#!/usr/bin/env bash
# Checks that every C++ source (src/ but src/torch_npu, tests/ but tests/python, fuzz/, bench/) is
# formatted as .clang-format says; exits non-zero naming each file clang-format would change (or
# each line that aliases std::filesystem as fs).
# The binary is pinned to Debian 12's clang-format (version 14): another version formats some
# constructs differently. scripts/setup.sh installs it. Fix a file with `clang-format -i FILE`.
# Usage: scripts/check-format.sh [clang-format binary]   ($CLANG_FORMAT is used when set)
set -euo pipefail
cd "$(dirname "$0")/.."
required_major=14
clang_format=${1:-${CLANG_FORMAT:-}}
if [[ -z $clang_format ]]; then
  for candidate in clang-format-$required_major clang-format; do
    if command -v "$candidate" >/dev/null; then
      clang_format=$candidate
      break
    fi
  done
fi
if [[ -z $clang_format ]] || ! command -v "$clang_format" >/dev/null; then
  echo "check-format: clang-format $required_major is not installed (Debian: apt-get install" \
       "clang-format, or run scripts/setup.sh)" >&2
  exit 2
fi
version=$("$clang_format" --version)
major=$(sed -nE 's/.*clang-format version ([0-9]+)\..*/\1/p' <<<"$version")
if [[ $major != "$required_major" ]]; then
  echo "check-format: $clang_format is version ${major:-unknown} ($version); the format is" \
       "pinned to clang-format $required_major (Debian 12's)" >&2
  exit 2
fi

mapfile -t files < <(git ls-files -- 'src/*.cpp' 'src/*.h' 'src/*.c' 'tests/*.cpp' 'tests/*.h' \
                       'tests/*.c' 'fuzz/*.cpp' 'fuzz/*.h' 'bench/*.cpp' 'bench/*.h' |
                     grep -v -e '^src/torch_npu/' -e '^tests/python/')
# std::filesystem is spelled out or aliased stdfs: `fs` is our own layer (src/toolchain/fs).
if aliased=$(grep -nE 'namespace[[:space:]]+fs[[:space:]]*=[[:space:]]*(::)?std::filesystem' \
               "${files[@]}"); then
  echo "check-format: std::filesystem aliased as fs (alias it stdfs; fs is apexnpu's layer):" >&2
  echo "$aliased" | sed 's/^/  /' >&2
  exit 1
fi

unformatted=()
for file in "${files[@]}"; do
  [[ -f $file ]] || continue
  if ! "$clang_format" --dry-run --Werror "$file" >/dev/null 2>&1; then
    unformatted+=("$file")
  fi
done
if ((${#unformatted[@]})); then
  echo "check-format: clang-format would change ${#unformatted[@]} file(s):" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  echo "run: $clang_format -i FILE..." >&2
  exit 1
fi
echo "check-format: ${#files[@]} C++ files formatted as .clang-format says"
