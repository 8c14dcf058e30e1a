"""bf16 training across ranks on emulated Ascend 910Bs: torch DDP over hccl, the forward under
``torch.autocast("npu", dtype=torch.bfloat16)``, 2 and 4 ranks. The losses follow an fp32 run of
the same ranks within bf16's precision (8 significant bits: 2e-2 relative to the loss, over a
dozen steps of a small MLP), and every rank ends with the same parameters, bit for bit (the
gradients are averaged in rank order)."""

import json
import os

import pytest

import overlay_support
from overlay_support import ranks

WORKER = os.path.join(os.path.dirname(overlay_support.__file__), "bf16_ddp_worker.py")


def train(mode, world):
    env = overlay_support.overlay_env()
    for name in ("APEXNPU_HCCL_STRICT", "GLOO_SOCKET_IFNAME", "APEXNPU_INF_NAN_MODE"):
        env.pop(name, None)
    env["APEXNPU_SOC_VERSION"] = "Ascend910B1"
    results = ranks.launch([WORKER, mode], world, env, timeout=600)
    for r in results:
        assert r.returncode == 0 and r.stdout.strip(), r
    return [json.loads(r.stdout.strip().splitlines()[-1]) for r in results]


@pytest.mark.parametrize("world", [2, 4])
def test_bf16_data_parallel_training_follows_fp32(world):
    bf16, fp32 = train("bf16", world), train("fp32", world)
    assert {r["dtype"] for r in bf16} == {"torch.bfloat16"}
    assert {r["dtype"] for r in fp32} == {"torch.float32"}
    for run in (bf16, fp32):
        assert len({r["params"] for r in run}) == 1  # one model on every rank
    got, want = bf16[0]["losses"], fp32[0]["losses"]
    for step, (a, b) in enumerate(zip(got, want)):
        assert abs(a - b) <= 2e-2 * b, (step, a, b)
    assert got[-1] < 0.8 * got[0]  # it trains
