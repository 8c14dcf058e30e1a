"""Dynamic loss scaling in bfloat16 on an emulated 910B: ``bf16_overflow.py LEVEL COMBINE_GRAD``
(LEVEL O4 or O5, loss_scale="dynamic" asked for). A loss times 1e38 overflows fp32 once
scaled: that step is skipped and the scale backs off; clean steps grow it after scale_window;
min/max hold. Prints one JSON document of what happened and the overflow mode.

In INF/NAN mode (the 910B's default) torch_npu, and the emulator with it, refuses to read the
float status (``get_npu_overflow_flag`` raises) and warns that clearing it is useless, so any
read by apex fails the run and a clear is an error here."""

import contextlib
import io
import json
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_npu
from apex import amp
from apex.optimizers import NpuFusedSGD

inf_nan = torch_npu.npu.utils.is_support_inf_nan()

level, combine_grad = sys.argv[1], sys.argv[2] == "1"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).npu()
opt = NpuFusedSGD(model.parameters(), lr=0.1, momentum=0.9)
with warnings.catch_warnings():
    warnings.simplefilter("error")  # a clear of the status would warn
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
for step, factor in enumerate([1, 1e38] + [1] * 9 + [1e38] * 4):
    before = [p.detach().clone() for p in model.parameters()]
    masters_before = [p.detach().clone() for g in opt.param_groups for p in g["params"]]
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y) * factor
    out = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with contextlib.redirect_stdout(out):
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
            opt.step()
    unchanged = all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    masters = [p for g in opt.param_groups for p in g["params"]]
    masters_unchanged = all(torch.equal(a, b) for a, b in zip(masters_before, masters))
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
print(
    json.dumps(
        {
            "inf_nan": inf_nan,
            "events": events,
            "model_dtypes": sorted({str(p.dtype) for p in model.parameters()}),
            "master_dtypes": sorted({str(p.dtype) for p in masters}),
        }
    )
)
