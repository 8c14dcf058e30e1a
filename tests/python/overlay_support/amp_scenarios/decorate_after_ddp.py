"""amp_decorate on a model already wrapped in DistributedDataParallel: a clear error that says
to call it first. Prints the error's message."""

import os

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401

import apex  # noqa: F401 - puts amp_decorate on torch.npu.amp

os.environ.update(
    MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("PORT", "29533"), LOCAL_WORLD_SIZE="1"
)
dist.init_process_group("hccl", rank=0, world_size=1)
model = torch.nn.Linear(4, 2).npu()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
ddp = torch.nn.parallel.DistributedDataParallel(model)
try:
    torch.npu.amp.amp_decorate(ddp, opt)
except RuntimeError as e:
    print(str(e))
dist.destroy_process_group()
