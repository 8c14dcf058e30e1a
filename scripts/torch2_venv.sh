#!/usr/bin/env bash
# Makes (or reuses) a venv of Debian's Python with PyTorch 2.13.0's CPU build, numpy and pytest,
# for running the Python suites on torch 2.x beside Debian's torch 1.13.1, and the LLM stack the
# emulator is tried with: transformers, accelerate, peft, deepspeed, sentencepiece (LLaMA's
# slow tokenizer) and torchdata (accelerate's stateful-dataloader tests). Prints the venv's python on stdout. Exits 1 with the reason on stderr when it cannot (no PyPI, no python3-venv).
# Usage: scripts/torch2_venv.sh DIR
# torch is pinned to exactly 2.13.0: any other torch from PyPI is a CUDA build of several GB.
set -euo pipefail
dir=${1:?usage: scripts/torch2_venv.sh DIR}
torch_version=2.13.0
requirements=("torch==$torch_version" "numpy==2.4.6" "pytest==9.2.0" "transformers==4.57.6"
              "accelerate==1.15.0" "peft==0.21.2" "deepspeed==0.19.8" "sentencepiece==0.2.1"
              "torchdata==0.11.0")
python=$dir/bin/python
# Reused only when it holds exactly these pins (read from the installed metadata: no imports).
pins=$(printf '"%s",' "${requirements[@]}")
if [[ -x $python ]] && "$python" -c "import sys; from importlib.metadata import version
want = dict(r.split('==') for r in [$pins])
sys.exit(any(version(n).split('+')[0] != v for n, v in want.items()))" 2>/dev/null; then
  echo "$python"
  exit 0
fi
rm -rf "$dir"
/usr/bin/python3 -m venv "$dir" >&2
if ! "$python" -m pip install --quiet --disable-pip-version-check "${requirements[@]}" >&2; then
  echo "torch2_venv: pip could not install ${requirements[*]} into $dir (is PyPI reachable?)" >&2
  exit 1
fi
echo "$python"
