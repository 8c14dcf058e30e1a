"""O2 two ways on the same model, data and seed: ``decorate`` (apex.npu's amp_decorate, then an
unchanged torch-native AMP loop: autocast, GradScaler, unscale_, clip_grad_norm_ on
amp_parameters, step, update) or ``initialize`` (amp.initialize(opt_level="O2") and
amp.scale_loss). 50 steps of SGD with momentum, gradients clipped to norm 1, an overflow forced
at steps 20 and 35 (the loss times 1e9 saturates fp16). OPTIMIZER is torch_sgd or
npu_fused_sgd. Saves to OUT: the fp32 master weights, the model's parameter dtypes, and each
step's (loss scale after it, whether the master weights changed).

    python native_o2.py decorate|initialize OPTIMIZER OUT
"""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_npu  # noqa: F401

import apex
from apex import amp

mode, optimizer_name, out = sys.argv[1], sys.argv[2], sys.argv[3]
OVERFLOWS = (20, 35)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 4)).npu()
if optimizer_name == "torch_sgd":
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
else:
    from apex.optimizers import NpuFusedSGD

    opt = NpuFusedSGD(model.parameters(), lr=0.05, momentum=0.9)
g = torch.Generator().manual_seed(1)
data = [
    (torch.randn(16, 8, generator=g).npu(), torch.randint(0, 4, (16,), generator=g).npu())
    for _ in range(10)
]


def masters():
    return [p.detach().clone() for group in opt.param_groups for p in group["params"]]


history = []
if mode == "decorate":
    from torch.npu.amp import GradScaler, autocast

    model, opt = torch.npu.amp.amp_decorate(model, opt)
    # Its own schedule would grow the scale every 3 clean steps and back off to a quarter: the
    # loss scaler of O2 decides instead.
    scaler = GradScaler(init_scale=4.0, growth_factor=4.0, backoff_factor=0.25, growth_interval=3)
    for step in range(50):
        x, y = data[step % len(data)]
        before = masters()
        opt.zero_grad()
        with autocast():
            loss = F.cross_entropy(model(x), y) * (1e9 if step in OVERFLOWS else 1.0)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(apex.npu.amp_parameters(opt), 1.0)
        scaler.step(opt)
        scaler.update()
        history.append(
            (scaler.get_scale(), any(not torch.equal(a, b) for a, b in zip(before, masters())))
        )
    assert scaler.state_dict()["scale"] == scaler.get_scale()
else:
    model, opt = amp.initialize(model, opt, opt_level="O2", verbosity=0)
    for step in range(50):
        x, y = data[step % len(data)]
        before = masters()
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y) * (1e9 if step in OVERFLOWS else 1.0)
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        torch.nn.utils.clip_grad_norm_(amp.master_params(opt), 1.0)
        opt.step()
        history.append(
            (
                amp.state_dict()["loss_scaler0"]["loss_scale"],
                any(not torch.equal(a, b) for a, b in zip(before, masters())),
            )
        )
torch.save(
    {
        "masters": [m.cpu() for m in masters()],
        "history": history,
        "dtypes": {k: str(v.dtype) for k, v in model.named_parameters()},
    },
    out,
)
