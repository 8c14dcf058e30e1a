"""Dynamic loss scaling: a forced overflow skips the step and backs off; clean steps grow the
scale after scale_window; min/max are respected. ``overflow.py COMBINE_GRAD [LEVEL]`` (O2 by
default); in either NPU overflow mode (APEXNPU_INF_NAN_MODE). Prints one JSON document of what
happened, and the mode torch_npu reported."""

import contextlib
import io
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp
from apex.optimizers import NpuFusedSGD

combine_grad = sys.argv[1] == "1"
level = sys.argv[2] if len(sys.argv) > 2 else "O2"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).npu()
opt = NpuFusedSGD(model.parameters(), lr=0.1, momentum=0.9)
model, opt = amp.initialize(
    model,
    opt,
    opt_level=level,
    loss_scale="dynamic",
    dynamic_init_scale=2.0**10,
    scale_window=3,
    min_loss_scale=2.0**8,
    max_loss_scale=2.0**11,
    combine_grad=combine_grad or None,
)
x, y = torch.randn(16, 4).npu(), torch.randint(0, 2, (16,)).npu()
events = []
for step, factor in enumerate([1, 1e9] + [1] * 9 + [1e9] * 4):
    before = [p.detach().clone() for p in model.parameters()]
    masters_before = [p.detach().clone() for g in opt.param_groups for p in g["params"]]
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y) * factor
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()
    unchanged = all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    masters_unchanged = all(
        torch.equal(a, b)
        for a, b in zip(masters_before, [p for g in opt.param_groups for p in g["params"]])
    )
    events.append(
        dict(
            step=step,
            forced=factor != 1,
            scale=amp.state_dict()["loss_scaler0"]["loss_scale"],
            unchanged=unchanged,
            masters_unchanged=masters_unchanged,
            message=out.getvalue().strip(),
        )
    )
import torch_npu  # noqa: E402

print(json.dumps({"inf_nan": torch_npu.npu.utils.is_support_inf_nan(), "events": events}))
