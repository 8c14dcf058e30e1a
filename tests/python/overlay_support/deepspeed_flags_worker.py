"""One rank (of 2, run by ranks.launch) reducing the flags DeepSpeed reduces over hccl: uint8
and bool tensors, which torch_npu all-reduces and reduces by way of int32 (a bool sum as an
or). Prints one JSON line of the results by name."""

import json
import os

import torch
import torch.distributed as dist

import torch_npu  # noqa: F401

rank = int(os.environ["RANK"])
torch.npu.set_device(rank)
dist.init_process_group("hccl")
out = {}
for dtype in (torch.uint8, torch.bool):
    name = str(dtype).replace("torch.", "")
    for op in ("SUM", "MAX", "MIN"):
        t = torch.tensor([rank == 0, 1, 0, rank == 1], dtype=dtype, device="npu")
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        out[f"all_reduce_{op}_{name}"] = t.tolist()
    t = torch.tensor([1, 1 - rank], dtype=dtype, device="npu")
    dist.reduce(t, 0)
    out[f"reduce_{name}"] = t.tolist()
big = torch.tensor([200], dtype=torch.uint8, device="npu")
dist.all_reduce(big)  # 400 kept modulo 256, as torch_npu's int32 sum copied back
out["all_reduce_SUM_uint8_wraps"] = big.tolist()
print(json.dumps(out))
dist.destroy_process_group()
