"""One rank of a data-parallel run whose communication the APEXNPU_* switches choose (the script
itself never mentions them; importing apex switches them on), on the emulated NPU over hccl.

    python comm_worker.py OUT PARALLEL STEPS

PARALLEL is ddp (torch DDP, fp32, torch's SGD with momentum), or combine_ddp_O1 / combine_ddp_O2
(apex.amp's combine_ddp with NpuFusedSGD; needs the wheels). Each rank writes OUT/rank<R>.pt:
the parameters (fp32: the master weights under amp) flattened after every step, and the bytes
this process sent to other nodes through the counted groups.
"""

import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch_npu  # noqa: F401
import apex.npu  # noqa: F401 - what the wheel's `import apex` loads: the switches

from npu_ranks_worker import batch  # each rank's share of the step's batch (8 in, 4 out)


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 4)
    )


def main(out, parallel, steps):
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.npu.set_device(f"npu:{local_rank}")
    dist.init_process_group("hccl", init_method="env://")
    model = make_model().npu()
    amp = None
    if parallel == "ddp":
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        net = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
        dtype = torch.float32
    else:
        from apex import amp
        from apex.optimizers import NpuFusedSGD

        level = parallel.rsplit("_", 1)[1]
        opt = NpuFusedSGD(model.parameters(), lr=0.05, momentum=0.9)
        model, opt = amp.initialize(
            model,
            opt,
            opt_level=level,
            verbosity=0,
            loss_scale="dynamic",
            dynamic_init_scale=2.0**10,
            combine_grad=True,
            combine_ddp=True,
        )
        net = model
        dtype = torch.float16 if level == "O2" else torch.float32
    trace = []
    for step in range(steps):
        x, y = batch(step, rank, world)
        opt.zero_grad()
        loss = nn.functional.mse_loss(net(x.npu().to(dtype)).float(), y.npu())
        if amp is None:
            loss.backward()
        else:
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
        opt.step()
        params = amp.master_params(opt) if amp is not None else model.parameters()
        trace.append(torch.cat([p.detach().float().cpu().reshape(-1) for p in params]))
    from apex.npu.ddp import counted_group

    torch.save(
        {"trace": trace, "internode_bytes": counted_group.internode_bytes()},
        os.path.join(out, f"rank{rank}.pt"),
    )
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
