"""One rank of amp with combine_ddp: python combine_ddp.py LEVEL RANK WORLD INIT_FILE OUT.

With WORLD 1 and no INIT_FILE ("-") it is the single-process reference: combine_grad alone,
trained on the whole batch. Saves the final parameters, the losses and the loss scale to OUT.
"""

import datetime
import sys
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from apex import amp
from apex.optimizers import NpuFusedSGD

level, rank, world, init, out = (
    sys.argv[1],
    int(sys.argv[2]),
    int(sys.argv[3]),
    sys.argv[4],
    sys.argv[5],
)
ddp = init != "-"
if ddp:
    dist.init_process_group(
        "gloo",
        init_method="file://" + init,
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=120),
    )
torch.manual_seed(10 + rank if ddp else 10)  # replicas differ until amp.initialize broadcasts
model = nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 5)).npu()
opt = NpuFusedSGD(model.parameters(), lr=0.05, momentum=0.9)
model, opt = amp.initialize(
    model,
    opt,
    opt_level=level,
    loss_scale="dynamic",
    combine_grad=True,
    combine_ddp=True if ddp else None,
    verbosity=0,
)
g = torch.Generator().manual_seed(5)
share = 16
losses = []
x = torch.randn(share * 2, 12, generator=g)
y = torch.randint(0, 5, (share * 2,), generator=g)
if ddp:
    x, y = x[rank * share : (rank + 1) * share], y[rank * share : (rank + 1) * share]
for _ in range(30):
    opt.zero_grad()
    loss = F.cross_entropy(model(x.npu()).float(), y.npu())
    with amp.scale_loss(loss, opt) as scaled:
        scaled.backward()
    opt.step()
    losses.append(float(loss))
torch.save(
    {
        "params": [p.detach().float().clone() for p in model.parameters()],
        "losses": losses,
        "scale": amp.state_dict()["loss_scaler0"]["loss_scale"],
    },
    out,
)
if ddp:
    dist.destroy_process_group()
