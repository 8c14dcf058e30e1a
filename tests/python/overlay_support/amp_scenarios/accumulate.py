"""Gradient accumulation over three scale_loss passes (optionally delay_unscale on the first
two) against fp32 accumulation without amp; prints the largest parameter difference."""

import sys
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp
from apex.optimizers import NpuFusedSGD

level, cg, delay = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3)).npu()
twin = copy.deepcopy(model)
opt = NpuFusedSGD(model.parameters(), lr=0.1, momentum=0.9)
ref = torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
model, opt = amp.initialize(
    model, opt, opt_level=level, loss_scale=1024.0, combine_grad=cg or None, verbosity=0
)
g = torch.Generator().manual_seed(3)
data = [
    (torch.randn(8, 6, generator=g).npu(), torch.randint(0, 3, (8,), generator=g).npu())
    for _ in range(12)
]
for i in range(0, 12, 3):
    opt.zero_grad()
    ref.zero_grad()
    for j in range(3):
        x, y = data[i + j]
        loss = F.cross_entropy(model(x), y)
        with amp.scale_loss(loss, opt, delay_unscale=delay and j < 2) as s:
            s.backward()
        F.cross_entropy(twin(x), y).backward()
    opt.step()
    ref.step()
err = max((p.float() - q).abs().max().item() for p, q in zip(model.parameters(), twin.parameters()))
print(level, cg, delay, err)
