"""Checkpoint resume in bfloat16 (an emulated 910B), as checkpoint.py does in fp16:
``bf16_checkpoint.py MODE PATH LEVEL COMBINE_GRAD`` (LEVEL O4 or O5, dynamic loss scaling).
``straight`` trains 40 steps and saves the model's state_dict; ``first`` trains 20 and saves
model, optimizer and amp state, and prints the dtypes it saved; ``resume`` (a new process) calls
amp.initialize, loads the three, trains 20 more and saves the model's state_dict."""

import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp
from apex.optimizers import NpuFusedAdam

mode, path = sys.argv[1], sys.argv[2]
level, cg = sys.argv[3], sys.argv[4] == "1"


def setup():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 4)).npu()
    opt = NpuFusedAdam(model.parameters(), lr=1e-2)
    model, opt = amp.initialize(
        model,
        opt,
        opt_level=level,
        loss_scale="dynamic",
        combine_grad=cg or None,
        verbosity=0,
        scale_window=5,
    )
    return model, opt


def train(model, opt, first, n):
    g = torch.Generator().manual_seed(7)
    data = [
        (torch.randn(16, 6, generator=g), torch.randint(0, 4, (16,), generator=g))
        for _ in range(40)
    ]
    for i in range(first, first + n):
        x, y = data[i]
        opt.zero_grad()
        loss = F.cross_entropy(model(x.npu()), y.npu())
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()


model, opt = setup()
if mode == "straight":
    train(model, opt, 0, 40)
    torch.save(model.state_dict(), path)
elif mode == "first":
    train(model, opt, 0, 20)
    checkpoint = {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "amp": amp.state_dict(),
    }
    torch.save(checkpoint, path)
    masters = checkpoint["optimizer"].get("amp_master_params")
    print(
        json.dumps(
            {
                "model": sorted(
                    {str(v.dtype) for v in checkpoint["model"].values() if v.is_floating_point()}
                ),
                "params": sorted({str(p.dtype) for p in model.parameters()}),
                "masters": None if masters is None else sorted({str(m.dtype) for m in masters}),
                "state": sorted(
                    {
                        str(v.dtype)
                        for s in checkpoint["optimizer"]["state"].values()
                        for v in s.values()
                        if torch.is_tensor(v) and v.is_floating_point()
                    }
                ),
                "amp": checkpoint["amp"],
            }
        )
    )
else:
    ck = torch.load(path)
    model.load_state_dict(ck["model"])
    opt.load_state_dict(ck["optimizer"])
    amp.load_state_dict(ck["amp"])
    train(model, opt, 20, 20)
    torch.save(model.state_dict(), path + ".resumed")
