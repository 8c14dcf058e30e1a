"""An intended fp16 saturation in the forward pass (masked_fill(-1e9) on fp16 attention scores)
is no overflow of the step, as in Ascend's apex (it clears the float status when scale_loss
starts); an overflow in backward still is, and so is one in a backward whose unscaling was
delayed (gradient accumulation). Prints one JSON list of what each step did."""

import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp

level = sys.argv[1]


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.out = nn.Linear(16, 4)

    def forward(self, x, mask):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = torch.matmul(q, k.transpose(1, 2))  # fp16 at O1 and O2
        scores = scores.masked_fill(mask, -1e9)  # saturates to -65504 in fp16
        return self.out(torch.matmul(F.softmax(scores.float(), dim=-1).to(v.dtype), v)).mean(1)


torch.manual_seed(0)
model = Attention().npu()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
model, opt = amp.initialize(model, opt, opt_level=level, verbosity=0)
x = torch.randn(8, 6, 16).npu()
mask = torch.zeros(8, 6, 6, dtype=torch.bool)
mask[:, :, 4:] = True
mask = mask.npu()
y = torch.randint(0, 4, (8,)).npu()


def backward(factor, delay_unscale=False):
    loss = F.cross_entropy(model(x, mask).float(), y) * factor
    saturated = torch.npu.get_npu_overflow_flag()
    with amp.scale_loss(loss, opt, delay_unscale=delay_unscale) as scaled:
        scaled.backward()
    return saturated


events = []
# Five clean steps, a step whose backward overflows, then two backwards accumulated into one
# step, the first (its unscaling delayed) overflowing.
for kind in ["clean"] * 5 + ["backward_overflow", "accumulated_overflow"]:
    before = [p.detach().clone() for p in model.parameters()]
    opt.zero_grad()
    if kind == "accumulated_overflow":
        saturated = backward(1e9, delay_unscale=True)
        backward(1.0)
    else:
        saturated = backward(1e9 if kind == "backward_overflow" else 1.0)
    opt.step()
    stepped = not all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    events.append(
        dict(
            kind=kind,
            saturated_in_forward=bool(saturated),
            stepped=stepped,
            scale=amp.state_dict()["loss_scaler0"]["loss_scale"],
        )
    )
print(json.dumps(events))
