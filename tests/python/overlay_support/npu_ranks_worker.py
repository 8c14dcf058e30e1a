"""One rank of an Ascend-style data-parallel training run on the emulated NPU.

Written as Ascend scripts are: ``import torch_npu``, ``torch.npu.set_device(f"npu:{rank}")``,
``init_process_group("hccl")`` from the launcher's environment (RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR, MASTER_PORT), the model moved with ``.npu()``, torch DDP with ``device_ids=[rank]``
or apex's combine_ddp, and a checkpoint saved on rank 0 and loaded on every rank with
``map_location=f"npu:{rank}"``.

    python npu_ranks_worker.py OUT PARALLEL OPT_LEVEL OPTIMIZER STEPS RESUME_AT

PARALLEL is ddp or combine_ddp; OPT_LEVEL is none (no apex.amp) or O0..O3. Each rank trains
twice: straight through, and with a checkpoint at step RESUME_AT from which every object is
rebuilt; rank 0 also trains the same recipe as one process on the whole batch. Each rank writes
OUT/rank<R>.pt: the final parameters and optimizer state of each run.
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch_npu  # noqa: F401

GLOBAL_BATCH = 16


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh())
        self.norm = nn.LayerNorm(16)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.norm(self.body(x)))


def make_optimizer(name, params):
    from apex.optimizers.npu_fused import NpuFusedAdam, NpuFusedLamb, NpuFusedSGD

    if name == "sgd":
        return NpuFusedSGD(params, lr=0.05, momentum=0.9, weight_decay=1e-4)
    if name == "adam":
        return NpuFusedAdam(params, lr=1e-3, weight_decay=1e-4)
    if name == "lamb":
        return NpuFusedLamb(params, lr=1e-2, weight_decay=1e-2)
    if name == "torch_sgd":
        return torch.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-4)
    raise ValueError(name)


def batch(step, rank, world):
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(GLOBAL_BATCH, 8, generator=g)
    y = torch.randn(GLOBAL_BATCH, 4, generator=g)
    share = GLOBAL_BATCH // world
    return x[rank * share:(rank + 1) * share], y[rank * share:(rank + 1) * share]


class Run:
    def __init__(self, parallel, opt_level, optimizer, rank, state=None):
        self.parallel, self.opt_level, self.rank = parallel, opt_level, rank
        torch.manual_seed(0)
        model = Net().npu()
        opt = make_optimizer(optimizer, model.parameters())
        self.amp = None
        if opt_level != "none":
            from apex import amp

            self.amp = amp
            model, opt = amp.initialize(model, opt, opt_level=opt_level, verbosity=0,
                                        loss_scale="dynamic" if opt_level != "O0" else None,
                                        combine_grad=parallel == "combine_ddp" or None,
                                        combine_ddp=parallel == "combine_ddp" or None)
        if state is not None:
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
            if self.amp is not None:
                self.amp.load_state_dict(state["amp"])
        self.model, self.opt = model, opt
        self.net = model
        if parallel == "ddp":
            self.net = nn.parallel.DistributedDataParallel(model, device_ids=[rank],
                                                           output_device=rank)

    def step(self, x, y):
        self.opt.zero_grad()
        dtype = torch.float16 if self.opt_level in ("O2", "O3") else torch.float32
        out = self.net(x.npu().to(dtype))
        loss = nn.functional.mse_loss(out.float(), y.npu())
        if self.amp is not None:
            with self.amp.scale_loss(loss, self.opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        self.opt.step()

    def checkpoint(self):
        state = {"model": self.model.state_dict(), "optimizer": self.opt.state_dict()}
        if self.amp is not None:
            state["amp"] = self.amp.state_dict()
        return state


def train(parallel, opt_level, optimizer, rank, world, local_rank, steps, resume_at, path):
    """Final (parameters, optimizer state) of a run; at ``resume_at`` it saves on rank 0,
    rebuilds everything from the checkpoint on every rank and goes on."""
    run = Run(parallel, opt_level, optimizer, local_rank)
    for step in range(steps):
        if step == resume_at:
            if rank == 0:
                torch.save(run.checkpoint(), path)
            if parallel != "none":
                dist.barrier()
            state = torch.load(path, map_location=f"npu:{local_rank}")
            assert all(t.device == torch.device(f"npu:{local_rank}")
                       for t in state["model"].values())
            run = Run(parallel, opt_level, optimizer, local_rank, state)
        run.step(*batch(step, rank, world))
    assert all(p.device == torch.device(f"npu:{local_rank}") for p in run.model.parameters())
    params = {k: v.detach().cpu() for k, v in run.model.state_dict().items()}
    return {"params": params, "optimizer": run.opt.state_dict()}


def main(out, parallel, opt_level, optimizer, steps, resume_at):
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.npu.set_device(f"npu:{local_rank}")
    dist.init_process_group("hccl", init_method="env://")
    result = {
        "straight": train(parallel, opt_level, optimizer, rank, world, local_rank, steps, -1,
                          None),
        "resumed": train(parallel, opt_level, optimizer, rank, world, local_rank, steps,
                         resume_at, os.path.join(out, "checkpoint.pt")),
    }
    if rank == 0:  # one process on the whole batch, the same recipe without data parallelism
        result["one_process"] = train("none", opt_level, optimizer, 0, 1, local_rank, steps, -1,
                                      None)
    torch.save(result, os.path.join(out, f"rank{rank}.pt"))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], a[2], a[3], int(a[4]), int(a[5]))
