"""AIAK-Training's example as its manual writes it: a CUDA script that imports torch and never
apex, migrated by transfer_to_npu, one rank of DDP over "nccl", the AIAK_* variables set by the
test. The AIAK names come from apex's wheel, which imports apex at `import torch` when an AIAK_*
variable is set (its start-up hook), as AIAK's image has them in torch.

    python aiak_seed004.py

Prints one JSON document: the first and last loss, the optimizer's class (AIAK_FUSED_OPTIMIZER=1
makes optim.SGD apex's fused one), DDP's communication hook, and the loss of a model stepped
by ``optim.LAMB`` with the options of the manual's table (also its loss on one batch before and
after those steps)."""

import json
import os
import tempfile

import torch
import torch_npu  # noqa: F401
from torch_npu.contrib import transfer_to_npu  # noqa: F401
import torch.distributed as dist
import torch.nn as nn
import torch.optim as optim
from torch.cuda.amp import GradScaler, autocast
from torch.nn.parallel import DistributedDataParallel as DDP

init = os.path.join(tempfile.mkdtemp(), "init")
dist.init_process_group("nccl", init_method="file://" + init, rank=0, world_size=1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 4))

    def forward(self, x):
        return self.net(x)


torch.manual_seed(0)
g = torch.Generator().manual_seed(1)
data = [
    (torch.randn(32, 16, generator=g).cuda(), torch.randint(0, 4, (32,), generator=g).cuda())
    for _ in range(8)
]
loss_fn = nn.CrossEntropyLoss()
max_norm = 1.0

# Definitions of the model and optimizer
model = Model().cuda()
optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
# aiak_amp_decorate: Apex AMP O2
model, optimizer = torch.cuda.amp.aiak_amp_decorate(model, optimizer)
# DDP built after O2 is initialised
model = DDP(model)
# torch native amp, unchanged
scaler = GradScaler()
losses = []
for epoch in range(6):
    for input, target in data:
        optimizer.zero_grad()
        with autocast():
            output = model(input)
            loss = loss_fn(output, target)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(torch.cuda.amp.aiak_amp_parameters(optimizer), max_norm)
        scaler.step(optimizer)
        scaler.update()
        losses.append(float(loss))
comm_hook = model._get_ddp_logging_data().get("comm_hook")  # the name DDP logs for its hook

# LAMB as section 3.4 builds it, with the options its table lists.
torch.manual_seed(0)
lamb_model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).cuda()
lamb = optim.LAMB(
    lamb_model.parameters(),
    lr=1e-2,
    weight_decay=1e-2,
    eps=1e-8,
    betas=(0.9, 0.999),
    adam_w_mode=True,
    grad_averaging=True,
    set_grad_none=True,
    max_grad_norm=1.0,
)
probe_input, probe_target = data[0]  # one batch, measured before and after LAMB's steps
with torch.no_grad():
    probe = [float(loss_fn(lamb_model(probe_input), probe_target))]
lamb_losses = []
for step in range(30):
    input, target = data[step % len(data)]
    lamb.zero_grad()
    loss = loss_fn(lamb_model(input), target)
    loss.backward()
    lamb.step()
    lamb_losses.append(float(loss))
with torch.no_grad():
    probe.append(float(loss_fn(lamb_model(probe_input), probe_target)))
dist.destroy_process_group()
print(
    json.dumps(
        {
            "losses": [losses[0], losses[-1]],
            "optimizer": type(optimizer).__mro__[1].__name__,
            "lamb": type(lamb).__module__ + "." + type(lamb).__name__,
            "lamb_losses": [lamb_losses[0], lamb_losses[-1]],
            "lamb_probe": probe,
            "comm_hook": comm_hook,
            "param_dtype": str(next(model.parameters()).dtype),
        }
    )
)
