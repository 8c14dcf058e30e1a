"""One rank of an Ascend-style data-parallel training run on the emulated NPU.

Written as Ascend scripts are: ``import torch_npu``, ``torch.npu.set_device(f"npu:{rank}")``,
``init_process_group("hccl")`` from the launcher's environment (RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR, MASTER_PORT), the model moved with ``.npu()``, torch DDP with ``device_ids=[rank]``
or apex's combine_ddp, and a checkpoint saved on rank 0 and loaded on every rank with
``map_location=f"npu:{rank}"``.

    python npu_ranks_worker.py OUT PARALLEL OPT_LEVEL OPTIMIZER STEPS RESUME_AT PHASE

PARALLEL is ddp, ddp+combine_grad (torch DDP over amp's combined gradients, the usual Ascend
recipe), combine_ddp or none (one process on the whole batch); OPT_LEVEL is none (no
apex.amp) or O0..O3; PHASE is straight (rank 0 also writes OUT/checkpoint.pt before step
RESUME_AT) or resumed (starts from that checkpoint). Each rank writes OUT/<PHASE>-rank<R>.pt: the
final parameters and optimizer state, and each step's (parameters changed, loss scale after).
"""

import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch_npu  # noqa: F401

GLOBAL_BATCH = 16
# The step at which rank 1 alone overflows (the ranks must still skip it together); -1: none.
OVERFLOW_AT = int(os.environ.get("NPU_RANKS_OVERFLOW_AT", "-1"))


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
    return x[rank * share : (rank + 1) * share], y[rank * share : (rank + 1) * share]


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
            # A dynamic scale that starts low enough not to overflow here, so that every run
            # (two ranks, one process) takes the same steps and they can be compared.
            model, opt = amp.initialize(
                model,
                opt,
                opt_level=opt_level,
                verbosity=0,
                loss_scale="dynamic" if opt_level != "O0" else None,
                dynamic_init_scale=2.0**10,
                combine_grad=parallel in ("combine_ddp", "ddp+combine_grad") or None,
                combine_ddp=parallel == "combine_ddp" or None,
            )
        if state is not None:
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
            if self.amp is not None:
                self.amp.load_state_dict(state["amp"])
        self.model, self.opt = model, opt
        self.net = model
        if parallel in ("ddp", "ddp+combine_grad"):
            self.net = nn.parallel.DistributedDataParallel(
                model, device_ids=[rank], output_device=rank
            )

    def step(self, x, y, overflow_here=False):
        """One training step; returns (whether the parameters changed, the loss scale after)."""
        before = [p.detach().clone() for p in self.model.parameters()]
        self.opt.zero_grad()
        dtype = torch.float16 if self.opt_level in ("O2", "O3") else torch.float32
        out = self.net(x.npu().to(dtype))
        loss = nn.functional.mse_loss(out.float(), y.npu())
        if self.amp is not None:
            with self.amp.scale_loss(loss, self.opt) as scaled:
                scaled.backward()
                if overflow_here:  # an fp16 result saturates on this rank only
                    torch.full((1,), 6e4).half().npu() * 2.0
        else:
            loss.backward()
        self.opt.step()
        stepped = not all(torch.equal(a, p) for a, p in zip(before, self.model.parameters()))
        scale = self.amp.state_dict()["loss_scaler0"]["loss_scale"] if self.amp else 1.0
        return stepped, scale

    def checkpoint(self):
        state = {"model": self.model.state_dict(), "optimizer": self.opt.state_dict()}
        if self.amp is not None:
            state["amp"] = self.amp.state_dict()
        return state


def main(out, parallel, opt_level, optimizer, steps, resume_at, phase):
    """``straight``: train from the start, rank 0 saving a checkpoint before step ``resume_at``;
    ``resumed``: rebuild everything from that checkpoint (``map_location=f"npu:{rank}"``) and
    train the remaining steps. apex.amp is initialised once per process, as it must be."""
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.npu.set_device(f"npu:{local_rank}")
    dist.init_process_group("hccl", init_method="env://")
    path = os.path.join(out, "checkpoint.pt")
    if phase == "straight":
        run, first = Run(parallel, opt_level, optimizer, local_rank), 0
    else:
        state = torch.load(path, map_location=f"npu:{local_rank}")
        assert all(t.device == torch.device(f"npu:{local_rank}") for t in state["model"].values())
        run, first = Run(parallel, opt_level, optimizer, local_rank, state), resume_at
    history = []  # (stepped, loss scale after) of each step
    for step in range(first, steps):
        if phase == "straight" and step == resume_at and rank == 0:
            torch.save(run.checkpoint(), path)
        history.append(
            run.step(*batch(step, rank, world), overflow_here=(step == OVERFLOW_AT and rank == 1))
        )
    assert all(p.device == torch.device(f"npu:{local_rank}") for p in run.model.parameters())
    params = {k: v.detach().cpu() for k, v in run.model.state_dict().items()}
    torch.save(
        {"params": params, "optimizer": run.opt.state_dict(), "history": history},
        os.path.join(out, f"{phase}-rank{rank}.pt"),
    )
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], a[2], a[3], int(a[4]), int(a[5]), a[6])
