"""One rank of a small data-parallel training run on emulated NPUs (run by ranks.launch):
``bf16_ddp_worker.py MODE`` trains an MLP with torch DDP over hccl, MODE ``bf16`` under
``torch.autocast("npu", dtype=torch.bfloat16)`` (a 910B's) or ``fp32``. Every rank prints one
JSON line: its losses per step and a checksum of its parameters' bits."""

import json
import os
import sys
import zlib

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import torch_npu  # noqa: F401

mode = sys.argv[1]
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.npu.set_device(f"npu:{rank}")
dist.init_process_group("hccl")
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 4)).npu()
ddp = nn.parallel.DistributedDataParallel(model, device_ids=[rank])
opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
g = torch.Generator().manual_seed(100 + rank)  # each rank its own shard
inputs = [torch.randn(16, 32, generator=g) for _ in range(4)]
data = [(x, x[:, :4].argmax(1)) for x in inputs] * 3  # learnable: the largest of 4 features
losses = []
for x, y in data:
    x, y = x.npu(), y.npu()
    opt.zero_grad()
    with torch.autocast("npu", dtype=torch.bfloat16, enabled=mode == "bf16"):
        logits = ddp(x)
    loss = F.cross_entropy(logits.float(), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
# the mean loss over the ranks, each step: what the whole batch saw
mean = torch.tensor(losses, device=f"npu:{rank}")
dist.all_reduce(mean)
bits = b"".join(p.detach().cpu().numpy().tobytes() for p in model.parameters())
print(
    json.dumps(
        {"losses": (mean / world).tolist(), "params": zlib.crc32(bits), "dtype": str(logits.dtype)}
    )
)
dist.destroy_process_group()
