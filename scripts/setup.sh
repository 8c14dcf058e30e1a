#!/usr/bin/env bash
# Installs what apexnpu needs to build and test, from Debian's packages, when it is missing.
set -euo pipefail
packages=(
  g++ cmake ninja-build pkg-config git patch
  g++-aarch64-linux-gnu qemu-user
  libgit2-dev libcli11-dev nlohmann-json3-dev libfmt-dev zlib1g-dev
  libgtest-dev libbenchmark-dev
  python3 python3-dev python3-venv python3-pytest python3-numpy python3-torch python3-pip
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
