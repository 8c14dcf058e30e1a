"""A training script written for Ascend, unchanged: torch.npu.set_device, model.npu(),
data.npu(non_blocking=True), apex.amp with NpuFusedAdam and combine_grad."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import apex
from apex import amp

torch.npu.set_device(0)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3)).npu()
optimizer = apex.optimizers.NpuFusedAdam(model.parameters(), lr=1e-2)
model, optimizer = amp.initialize(
    model, optimizer, opt_level="O2", loss_scale=128.0, combine_grad=True, verbosity=0
)
data = torch.randn(128, 8)
target = (data[:, 0] > 0).long() + (data[:, 1] > 0).long()
first = None
for epoch in range(60):
    inputs = data.npu(non_blocking=True)
    labels = target.to("npu:0", non_blocking=True)
    optimizer.zero_grad()
    loss = F.cross_entropy(model(inputs), labels)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
    torch.npu.synchronize()
    first = loss.item() if first is None else first
print(first, loss.item())
