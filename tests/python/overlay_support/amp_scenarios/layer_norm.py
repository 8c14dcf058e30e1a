"""apex.normalization.FusedLayerNorm on the NPU, where NVIDIA's fused_layer_norm_cuda is never
built: it falls back to torch.nn.functional.layer_norm (as Ascend's apex does), the module and
the functional forms alike, and a BERT-style block with it trains under amp O2. Prints JSON."""

import json

import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp
from apex.normalization import FusedLayerNorm
from apex.normalization.fused_layer_norm import fused_layer_norm, fused_layer_norm_affine
from apex.optimizers import NpuFusedAdam

result = {}
torch.manual_seed(0)
x = torch.randn(4, 5, 16).npu().requires_grad_()
for affine in (True, False):
    ln = FusedLayerNorm(16, eps=1e-6, elementwise_affine=affine).npu()
    if affine:
        with torch.no_grad():
            ln.weight.uniform_(0.5, 1.5)
            ln.bias.uniform_(-0.5, 0.5)
    out = ln(x)
    want = F.layer_norm(x, (16,), ln.weight, ln.bias, 1e-6)
    grads = torch.autograd.grad(out.square().sum(), [x] + list(ln.parameters()))
    want_grads = torch.autograd.grad(want.square().sum(), [x] + list(ln.parameters()))
    result[f"module_affine={affine}"] = [
        torch.equal(out, want),
        out.device.type,
        all(torch.equal(a, b) for a, b in zip(grads, want_grads)),
    ]
w, b = torch.rand(16).npu(), torch.rand(16).npu()
result["functional_affine"] = torch.equal(
    fused_layer_norm_affine(x, (16,), w, b, 1e-5), F.layer_norm(x, (16,), w, b, 1e-5)
)
result["functional"] = torch.equal(
    fused_layer_norm(x, (16,), 1e-5), F.layer_norm(x, (16,), None, None, 1e-5)
)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 16))
        self.norm = FusedLayerNorm(16)
        self.head = nn.Linear(16, 3)

    def forward(self, h):
        return self.head(self.norm(h + self.ff(h)).mean(1))


model = Block().npu()
opt = NpuFusedAdam(model.parameters(), lr=1e-2)
model, opt = amp.initialize(model, opt, opt_level="O2", verbosity=0)
g = torch.Generator().manual_seed(1)
data, labels = (
    torch.randn(32, 5, 16, generator=g).npu(),
    torch.randint(0, 3, (32,), generator=g).npu(),
)
losses = []
for _ in range(30):
    opt.zero_grad()
    loss = F.cross_entropy(model(data.half()).float(), labels)
    with amp.scale_loss(loss, opt) as scaled:
        scaled.backward()
    opt.step()
    losses.append(loss.item())
result["norm_dtype"] = str(model.norm.weight.dtype)
result["losses"] = [losses[0], losses[-1]]
print(json.dumps(result))
