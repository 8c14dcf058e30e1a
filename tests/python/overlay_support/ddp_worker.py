"""One rank of the combine_ddp tests (gloo on the CPU, the emulated NPU's backend).

    python ddp_worker.py SCENARIO RANK WORLD INIT_FILE OUT

Saves what the test checks to OUT with torch.save; an exception is saved as {"error": text}.
The overlay must be on PYTHONPATH (overlay_support.overlay_env()).
"""

import datetime
import sys
import traceback
from typing import Optional

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from apex.npu.ddp.combined_ddp import broadcast_from_rank0
from apex.npu.ddp.ddp_overlap import OverlappedAverager
from apex.npu.combined.grad_buffers import CombinedGrads

SCALE = 1024.0
STEPS = 5
PER_RANK = 8


def make_model(seed: int, extra_layer: bool = False, width: Optional[int] = None) -> nn.Module:
    """A small MLP, or with ``width`` a wide one whose gradients make several slices."""
    torch.manual_seed(seed)
    if width is None:
        layers = [nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)]
    else:
        layers = [
            nn.Linear(8, width),
            nn.ReLU(),
            nn.Linear(width, width),
            nn.ReLU(),
            nn.Linear(width, 4),
        ]
    if extra_layer:
        layers.append(nn.Linear(4, 4))
    return nn.Sequential(*layers)


def full_batches(world: int):
    """The whole data set; rank r trains on rows [r * PER_RANK, (r + 1) * PER_RANK)."""
    g = torch.Generator().manual_seed(7)
    return [
        (
            torch.randn(PER_RANK * world, 8, generator=g),
            torch.randint(0, 4, (PER_RANK * world,), generator=g),
        )
        for _ in range(STEPS)
    ]


def forward(model: nn.Module, x: torch.Tensor, half: bool) -> torch.Tensor:
    if not half:
        return model(x)
    head = model[-1]  # fp16, or fp32 as amp keeps BatchNorm
    return head(model[:-1](x.half()).to(head.weight.dtype)).float()


def train(
    rank: int,
    world: int,
    half: bool,
    loss_factor: float = 1.0,
    fp32_head: bool = False,
    width: Optional[int] = None,
):
    model = make_model(100 + rank, width=width)  # different on every rank until the broadcast
    if half:
        model.half()  # broadcast in fp16, as amp.initialize does after casting for O2
        if fp32_head:
            model[-1].float()
    broadcast_from_rank0(model)
    if half:
        # fp32 masters for fp16 parameters; fp32 parameters are their own masters.
        masters = [
            p.detach().clone().float().requires_grad_() if p.dtype == torch.float16 else p
            for p in model.parameters()
        ]
        opt = torch.optim.SGD(masters, lr=0.1, momentum=0.9)
        combined = CombinedGrads(
            opt, {id(m): p for m, p in zip(masters, model.parameters()) if m is not p}
        )
    else:
        masters = list(model.parameters())
        opt = torch.optim.SGD(masters, lr=0.1, momentum=0.9)
        combined = CombinedGrads(opt)
    averager = OverlappedAverager(replica_count=4)
    found, first_grads, started = [], None, []
    for x, y in full_batches(world):
        x, y = (
            x[rank * PER_RANK : (rank + 1) * PER_RANK],
            y[rank * PER_RANK : (rank + 1) * PER_RANK],
        )
        opt.zero_grad(set_to_none=False)  # as amp does while fused (torch 2.x defaults to None)
        for p in model.parameters():
            if p.grad is not None:
                p.grad.zero_()
        combined.prepare()
        (F.cross_entropy(forward(model, x, half), y) * SCALE * loss_factor).backward()
        combined.average_across_ranks(averager)
        started.append(averager.started_during_backward)
        found.append(bool(combined.unscale(1.0 / SCALE)))
        if first_grads is None:
            first_grads = [m.grad.clone() for m in masters]
        if not found[-1]:
            opt.step()
        combined.after_step()
        if half:
            with torch.no_grad():
                for p, m in zip(model.parameters(), masters):
                    p.copy_(m)
    return {
        "params": [m.detach().clone() for m in masters],
        "found": found,
        "first_grads": first_grads,
        "started": started,
        "slices": len(averager.slices),
    }


def slices(rank: int, world: int):
    """A buffer averaged in several slices, with an uneven tail, without hooks armed."""
    buf = torch.arange(300_001, dtype=torch.float32) * (rank + 1)
    writers = [torch.zeros(1, requires_grad=True) for _ in range(3)]
    averager = OverlappedAverager(replica_count=4)
    averager.plan(
        [
            (
                buf,
                [
                    (0, 100_000, writers[0], 0),
                    (100_000, 100_000, writers[1], 1),
                    (200_000, 100_001, writers[2], 2),
                ],
            )
        ]
    )
    averager.finish()
    return {"buffer": buf, "slices": len(averager.slices)}


def main() -> None:
    scenario, rank, world, init_file, out = (
        sys.argv[1],
        int(sys.argv[2]),
        int(sys.argv[3]),
        sys.argv[4],
        sys.argv[5],
    )
    dist.init_process_group(
        "gloo",
        init_method="file://" + init_file,
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=60),
    )
    try:
        if scenario == "fp32":
            result = train(rank, world, half=False)
        elif scenario == "fp16":
            result = train(rank, world, half=True)
        elif scenario == "fp16_with_fp32_head":
            result = train(rank, world, half=True, fp32_head=True)
        elif scenario == "overflow_on_one_rank":
            result = train(rank, world, half=False, loss_factor=float("inf") if rank == 1 else 1.0)
        elif scenario == "wide_fp16":  # several slices: 8x512, 512x512 and 512x4 layers
            result = train(rank, world, half=True, fp32_head=True, width=512)
        elif scenario == "slices":
            result = slices(rank, world)
        elif scenario == "different_models":
            broadcast_from_rank0(make_model(0, extra_layer=rank == 1))
            result = {}
        else:
            raise ValueError(f"unknown scenario {scenario}")
    except Exception:  # reported to the test, which checks the message
        result = {"error": traceback.format_exc()}
    torch.save(result, out)
    # Leave together, as the other workers do: a rank that tears the group down while the
    # other still talks to it can abort at exit.
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
