#!/usr/bin/env bash
# Installs what apexnpu needs to build and test, from Debian's packages, when it is missing:
# the host toolchain and libraries, and for the aarch64 (Kunpeng) wheels Debian's cross compiler,
# qemu-user, and the arm64 multiarch packages of CPython 3.11 (headers to build against, the
# standard library for the qemu tests); clang and its libFuzzer runtime for the fuzzers;
# clang-format (14, which scripts/check-format.sh is pinned to) for the format check. With
# APEXNPU_TEST_ASCEND set, also torch's C++ headers and pybind11, with which the tests build
# Huawei's apex extensions for Debian's torch (torch from PyPI carries its own headers).
set -euo pipefail
packages=(
  g++ cmake ninja-build pkg-config git patch
  g++-aarch64-linux-gnu qemu-user
  clang libclang-rt-14-dev clang-format
  libgit2-dev libcli11-dev nlohmann-json3-dev libfmt-dev zlib1g-dev
  libgtest-dev libbenchmark-dev
  python3 python3-dev python3-venv python3-pytest python3-numpy python3-torch python3-pip
  debootstrap
)
[[ -z ${APEXNPU_TEST_ASCEND:-} ]] || packages+=(libtorch-dev pybind11-dev)
arm64_packages=(libc6:arm64 libstdc++6:arm64 libpython3.11-dev:arm64 libpython3.11-stdlib:arm64)

sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
missing=()
for p in "${packages[@]}" "${arm64_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    "${sudo_cmd[@]}" dpkg --add-architecture arm64
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The commit-msg hook (CONTRIBUTING.md) checks each commit's message, in a git work tree whose
# hooks path nobody has set.
root=$(cd "$(dirname "$0")/.." && pwd)
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
   [[ -z $(git -C "$root" config core.hooksPath || true) ]]; then
  git -C "$root" config core.hooksPath .githooks
fi
