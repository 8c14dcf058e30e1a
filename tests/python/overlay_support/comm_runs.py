"""Runs of overlay_support/comm_worker.py under the APEXNPU_* communication switches, and the
checks the tests make of them."""

from __future__ import annotations

import os
from typing import Dict, List, Optional

import torch

from . import ranks

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "comm_worker.py")
STEPS = 8
PARAMS = 8 * 64 + 64 + 64 * 32 + 32 + 32 * 4 + 4  # comm_worker's model
SWITCHES = (
    "APEXNPU_FP16_COMPRESSION",
    "APEXNPU_POWERSGD_COMPRESSION",
    "APEXNPU_MATRIX_APPROXIMATION_RANK",
    "APEXNPU_START_COMPRESS_ITER",
    "APEXNPU_HIERARCHICAL_ALLREDUCE",
)


def run(
    out,
    parallel: str,
    world: int,
    per_node: int,
    env: Dict[str, str],
    python: Optional[str] = None,
    **switches: str,
) -> List[dict]:
    """Each rank's saved result (per-step parameters, bytes sent across nodes)."""
    out = out / "-".join(
        [parallel, str(world), str(per_node)]
        + [f"{k[8:]}={v}" for k, v in sorted(switches.items())]
    )
    out.mkdir()
    env = {k: v for k, v in env.items() if k not in SWITCHES}
    env.update(switches)
    results = ranks.launch(
        [WORKER, str(out), parallel, str(STEPS)],
        world,
        env,
        per_node=per_node,
        timeout=600,
        python=python,
    )
    for r in results:
        assert r.returncode == 0, r
    return [torch.load(out / f"rank{rank}.pt") for rank in range(world)]


def assert_ranks_identical(results: List[dict]) -> None:
    for rank, result in enumerate(results[1:], 1):
        for step, (a, b) in enumerate(zip(result["trace"], results[0]["trace"])):
            assert torch.equal(a, b), f"rank {rank} differs from rank 0 at step {step}"


def max_difference(got: List[dict], want: List[dict], steps=None) -> float:
    steps = range(STEPS) if steps is None else steps
    return max(float((got[0]["trace"][s] - want[0]["trace"][s]).abs().max()) for s in steps)


def assert_close(got: List[dict], want: List[dict], rtol: float, atol: float) -> None:
    for step, (a, b) in enumerate(zip(got[0]["trace"], want[0]["trace"])):
        torch.testing.assert_close(a, b, rtol=rtol, atol=atol, msg=lambda m: f"step {step}: {m}")
