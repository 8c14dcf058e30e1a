#!/usr/bin/env bash
# Installs what apexnpu needs from Debian's packages, when it is missing. Two lists, so that the
# main job does not wait for what only the tests use:
#   main  what scripts/run.sh needs to build apexnpu and write the wheels: the C++ compiler,
#         CMake, ninja, pkg-config, the libraries the tool links or loads (libgit2, CLI11, fmt,
#         nlohmann-json, zlib), CPython with its headers (the binding is compiled against them)
#         and the CA certificates libgit2 needs to clone the default upstream over https.
#   test  main, plus what scripts/test.sh needs: GoogleTest and Google Benchmark, git and patch,
#         Debian's torch 1.13.1 with pytest, numpy, venv and pip (the Python suites); for the
#         aarch64 (Kunpeng) wheels the cross compiler, qemu-user and the arm64 multiarch
#         packages of CPython 3.11; clang and its libFuzzer runtime (the fuzzers); clang-format
#         14 (scripts/check-format.sh); debootstrap. With APEXNPU_TEST_ASCEND set, also torch's
#         C++ headers and pybind11, to build Huawei's apex extensions for Debian's torch.
# Usage: scripts/setup.sh [main|test] [--print]   (test by default; --print lists the packages,
# one a line, and installs nothing)
set -euo pipefail
job=test print=0
for arg in "$@"; do
  case $arg in
    main | test) job=$arg ;;
    --print) print=1 ;;
    *)
      echo "setup.sh: unknown argument '$arg' (usage: setup.sh [main|test] [--print])" >&2
      exit 2
      ;;
  esac
done

packages=(
  g++ cmake ninja-build pkg-config
  libgit2-dev libcli11-dev nlohmann-json3-dev libfmt-dev zlib1g-dev
  python3 python3-dev ca-certificates
)
arm64_packages=()
if [[ $job == test ]]; then
  packages+=(
    git patch libgtest-dev libbenchmark-dev
    python3-venv python3-pytest python3-numpy python3-torch python3-pip
    g++-aarch64-linux-gnu qemu-user
    clang libclang-rt-14-dev clang-format
    debootstrap
  )
  [[ -z ${APEXNPU_TEST_ASCEND:-} ]] || packages+=(libtorch-dev pybind11-dev)
  arm64_packages=(libc6:arm64 libstdc++6:arm64 libpython3.11-dev:arm64 libpython3.11-stdlib:arm64)
fi

if ((print)); then
  printf '%s\n' "${packages[@]}" "${arm64_packages[@]}"
  exit 0
fi

sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
missing=()
for p in "${packages[@]}" "${arm64_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  if ((${#arm64_packages[@]})) && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    "${sudo_cmd[@]}" dpkg --add-architecture arm64
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The commit-msg hook (CONTRIBUTING.md) checks each commit's message, in a git work tree whose
# hooks path nobody has set (git itself is only in the test list: the main job needs none).
root=$(cd "$(dirname "$0")/.." && pwd)
if command -v git >/dev/null && git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
   [[ -z $(git -C "$root" config core.hooksPath || true) ]]; then
  git -C "$root" config core.hooksPath .githooks
fi
