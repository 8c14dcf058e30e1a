"""``accelerate launch`` of a script on 2 emulated NPUs, for the tests of accelerate (with DeepSpeed,
with FSDP, and accelerate's own test scripts): a clean environment for the chosen chip, and each
rank's result, which our training scripts write to ``result-<rank>`` in their working directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Dict, List, Sequence

from . import overlay_env, ranks

# Settings of the calling environment that would change what the launch tests.
_UNSET = (
    "APEXNPU_HCCL_STRICT",
    "APEXNPU_INF_NAN_MODE",
    "ASCEND_HOME_PATH",
    "ACCELERATE_CONFIG_FILE",
    "DS_ACCELERATOR",
)


def run(
    work: str, soc: str, script: str, launch_args: Sequence[str]
) -> "subprocess.CompletedProcess[str]":
    """Run ``script`` under ``accelerate launch`` (``launch_args`` after the 2 processes) as chip
    ``soc``, in directory ``work``; the finished process, its output captured."""
    env = overlay_env()
    for name in _UNSET:
        env.pop(name, None)
    env.update(
        APEXNPU_SOC_VERSION=soc,
        OMP_NUM_THREADS="1",
        HF_HOME=os.path.join(work, "hf"),
        TRANSFORMERS_OFFLINE="1",
    )
    command = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        *launch_args,
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(ranks.free_port()),
        script,
    ]
    return subprocess.run(command, env=env, cwd=work, capture_output=True, text=True, timeout=600)


def launch(work: str, soc: str, script: str, launch_args: Sequence[str]) -> List[Dict]:
    """``run``, which must succeed; the ranks' results, in rank order."""
    proc = run(work, soc, script, launch_args)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    results = []
    for rank in range(2):
        with open(os.path.join(work, f"result-{rank}")) as f:
            results.append(json.load(f))
    return results
