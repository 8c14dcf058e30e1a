"""hccl on an emulated Ascend 910B (APEXNPU_SOC_VERSION=Ascend910B1) carries and reduces bfloat16,
as the Atlas A2 training series' HCCL does (CANN's HCCL API reference: all_reduce, reduce and
reduce_scatter of int8, int16, int32, int64, float16, float32 and bfp16, no product of bfp16;
gathers, broadcast, all_to_all and send/receive move bfp16 too); on a 910 bfloat16 stays
refused. Real processes on gloo (loopback), 2 and 4 ranks.

Every result is compared bit for bit: sums are ((x0 + x1) + x2) + ... in rank order, each
addition rounded to bfloat16 (torch's host bfloat16 add: fp32, rounded once), so every rank gets
the same bits; max, min and the collectives that only move data are exact.
"""

import json
import os

import pytest
import torch

import overlay_support
from overlay_support import ranks
from overlay_support.hccl_worker import bf16_values

WORKER = os.path.join(os.path.dirname(overlay_support.__file__), "hccl_worker.py")


def run(scenario, world, chip):
    env = overlay_support.overlay_env()
    for name in ("APEXNPU_HCCL_STRICT", "GLOO_SOCKET_IFNAME", "APEXNPU_INF_NAN_MODE"):
        env.pop(name, None)
    env["APEXNPU_SOC_VERSION"] = chip
    results = ranks.launch([WORKER, scenario], world, env, timeout=600)
    for r in results:
        assert r.returncode == 0 and r.stdout.strip(), r
    out = [json.loads(r.stdout.strip().splitlines()[-1]) for r in results]
    for got in out:
        assert "error" not in got, got.get("trace", got)
    return out


def bits(t):
    return t.view(torch.int16).tolist()


def in_rank_order(parts, op="SUM"):
    """The bfloat16 reduction a 910B's hccl gives: rank order, each step rounded to bfloat16."""
    acc = parts[0].clone()
    for part in parts[1:]:
        acc = {"SUM": torch.add, "MAX": torch.maximum, "MIN": torch.minimum}[op](acc, part)
    return acc


@pytest.mark.parametrize("world", [2, 4])
def test_bf16_collectives_on_a_910b_reduce_in_rank_order(world):
    out = run("bf16", world, "Ascend910B1")
    for rank, got in enumerate(out):
        for n in (1, 7, 1000):
            for op in ("SUM", "MAX", "MIN"):
                want = in_rank_order([bf16_values(r, n) for r in range(world)], op)
                assert got[f"all_reduce_{op}_{n}"] == bits(want), (rank, op, n)
        rows = [bf16_values(r, 2 * world) for r in range(world)]
        mine = in_rank_order(rows)[2 * rank : 2 * rank + 2]
        assert got["reduce_scatter"] == bits(mine)
        assert got["reduce_scatter_tensor"] == bits(mine)
        assert got["all_gather"] == [bits(bf16_values(r, 3)) for r in range(world)]
        assert got["all_gather_into_tensor"] == bits(
            torch.cat([bf16_values(r, 2) for r in range(world)])
        )
        assert got["broadcast"] == bits(bf16_values(world - 1, 5))
        assert got["all_to_all_single"] == [bits(bf16_values(r, world))[rank] for r in range(world)]
        assert got["send_recv"] == bits(bf16_values((rank - 1) % world, 4))
        assert got["product"].startswith(
            "hccl: all_reduce of a torch.bfloat16 tensor with ReduceOp.PRODUCT: HCCL on "
            "Ascend910B1 reduces bfloat16 by sum, max and min only"
        )
        # DDP's bucket all-reduce: the mean of the ranks' weight gradients (each the column
        # sums of the rank's input), the same bits on every rank.
        grads = [
            bf16_values(r, 8).view(2, 4).float().sum(0).to(torch.bfloat16).expand(3, 4)
            for r in range(world)
        ]
        assert got["ddp_grad"] == bits(in_rank_order(grads) / world)
    assert out[-1]["reduce"] == bits(in_rank_order([bf16_values(r, 7) for r in range(world)]))


def test_bf16_is_refused_on_a_910():
    # Refused before any data moves: one rank shows it.
    for got in run("bf16_refused", 1, "Ascend910A"):
        for call, verb, allowed in (
            ("all_reduce", "reduces", "int8, int32, int64, float16 and float32"),
            ("broadcast", "moves", "int8, uint8, bool, int32, int64, float16, float32 and float64"),
            (
                "all_gather",
                "moves",
                "int8, uint8, bool, int32, int64, float16, float32 and float64",
            ),
        ):
            kind, message = got[call]
            assert kind == "TypeError"
            assert message == (
                f"hccl: {call} of a torch.bfloat16 tensor: HCCL on Ascend910A "
                f"{verb} only {allowed} (Ascend's collective-communication "
                "constraints; bfloat16 is a 910B's: "
                "APEXNPU_SOC_VERSION=Ascend910B1); set APEXNPU_HCCL_STRICT=0 to "
                "allow it on the emulator"
            )
