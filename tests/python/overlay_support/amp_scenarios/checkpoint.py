"""Checkpoint resume as NVIDIA's amp documentation shows it: `straight` trains 40 steps; `first`
trains 20 and saves model, optimizer and amp state; `resume` (a new process) calls
amp.initialize, then loads the three, and trains 20 more."""

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
    torch.save(
        {"model": model.state_dict(), "optimizer": opt.state_dict(), "amp": amp.state_dict()}, path
    )
else:
    ck = torch.load(path)
    model.load_state_dict(ck["model"])
    opt.load_state_dict(ck["optimizer"])
    amp.load_state_dict(ck["amp"])
    train(model, opt, 20, 20)
    torch.save(model.state_dict(), path + ".resumed")
