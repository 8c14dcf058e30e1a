"""Trains the BatchNorm CNN 40 steps under one amp configuration; prints losses, dtypes, scale."""

import json
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp
from apex.optimizers import NpuFusedSGD


def cnn():
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1, bias=False),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(2),
        nn.Flatten(),
        nn.Linear(32, 4),
    )


def run(level, loss_scale, combine_grad, fused, steps=40):
    torch.manual_seed(0)
    model = cnn().npu()
    cls = NpuFusedSGD if fused else torch.optim.SGD
    opt = cls(model.parameters(), lr=0.05, momentum=0.9)
    kw = dict(opt_level=level, verbosity=0)
    if loss_scale is not None:
        kw["loss_scale"] = loss_scale
    if combine_grad:
        kw["combine_grad"] = True
    model, opt = amp.initialize(model, opt, **kw)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 3, 8, 8, generator=g).npu()
    y = torch.randint(0, 4, (64,), generator=g).npu()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()
        losses.append(float(loss))
    dtypes = {n: str(p.dtype) for n, p in model.named_parameters()}
    masters = sorted({str(p.dtype) for grp in opt.param_groups for p in grp["params"]})
    return dict(
        first=losses[0],
        last=losses[-1],
        dtypes=dtypes,
        masters=masters,
        scale=amp.state_dict()["loss_scaler0"]["loss_scale"],
    )


level, ls, cg, fused = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
ls = None if ls == "none" else (ls if ls == "dynamic" else float(ls))
print(json.dumps(run(level, ls, cg, fused)))
