"""amp's combined-tensor helpers on every optimizer (Ascend's API), and fusion that lasts.

    python optimizer_getters.py LEVEL OPTIMIZER COMBINE_GRAD ZERO_GRAD

OPTIMIZER is torch_sgd or fused_adam; ZERO_GRAD is how each step zeroes: opt, opt_none
(opt.zero_grad(set_to_none=True)) or model_none (model.zero_grad(set_to_none=True)). Prints one
JSON document: the flags, what the getters give before and after the first backward, the norm
clip_optimizer_grad_norm_fused returns and the gradients it leaves against
torch.nn.utils.clip_grad_norm_ on copies, and how often the buffers were made over 5 steps."""

import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp
from apex.optimizers import NpuFusedAdam

level, which, combine_grad, zero = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 32), nn.LayerNorm(32), nn.ReLU(), nn.Linear(32, 4)).npu()
if which == "torch_sgd":
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
else:
    opt = NpuFusedAdam(model.parameters(), lr=1e-2)
model, opt = amp.initialize(
    model, opt, opt_level=level, verbosity=0, combine_grad=combine_grad or None
)
g = torch.Generator().manual_seed(3)
x, y = torch.randn(16, 6, generator=g).npu(), torch.randint(0, 4, (16,), generator=g).npu()
out = {
    "accelerate": opt.accelerate,
    "is_npu_fused_optimizer": opt.is_npu_fused_optimizer,
    "grads_before_backward": len(opt.get_optimizer_combined_grads()),
}


def zero_grad():
    if zero == "opt":
        opt.zero_grad()
    elif zero == "opt_none":
        opt.zero_grad(set_to_none=True)
    else:
        model.zero_grad(set_to_none=True)
        opt.zero_grad(set_to_none=True)


def backward():
    zero_grad()
    loss = F.cross_entropy(model(x.half() if level == "O2" else x).float(), y)
    with amp.scale_loss(loss, opt) as scaled:
        scaled.backward()


backward()
masters = [p for group in opt.param_groups for p in group["params"]]  # fp32 masters at O2 now
grads = opt.get_optimizer_combined_grads()
masks = opt.get_optimizer_combined_grad_masks()
out["grads"] = len(grads)
out["grad_slots"] = [None if g is None else str(g.dtype) for g in grads]
out["mask_dtypes"] = sorted({str(m.dtype) for m in masks if m is not None})
grads, masks = [g for g in grads if g is not None], [m for m in masks if m is not None]
out["mask_elements"] = int(sum(float(m.sum()) for m in masks))
out["master_elements"] = sum(p.numel() for p in masters)
out["masked_sum_matches"] = bool(grads) and bool(
    torch.isclose(
        sum((g.float() * m).abs().sum() for g, m in zip(grads, masks)),
        sum(p.grad.float().abs().sum() for p in masters),
        rtol=1e-6,
    )
)
out["params"] = len(opt.get_optimizer_combined_params())
model_grads, model_masks = opt.get_model_combined_grads(), opt.get_model_combined_grad_masks()
model_grads, model_masks = (
    [g for g in model_grads if g is not None],
    [m for m in model_masks if m is not None],
)
out["model_grad_dtypes"] = sorted(str(t.dtype) for t in model_grads)
out["model_mask_elements"] = int(sum(float(m.sum()) for m in model_masks))
out["model_elements"] = sum(p.numel() for p in model.parameters())

# Clip to a third of the norm, against torch's clip_grad_norm_ on copies of the gradients.
copies = [nn.Parameter(p.detach().float().cpu()) for p in masters]  # on the host: torch's own
for c, p in zip(copies, masters):
    c.grad = p.grad.detach().float().cpu()
want = float(torch.nn.utils.clip_grad_norm_(copies, 1.0))
max_norm = want / 3
for c, p in zip(copies, masters):
    c.grad = p.grad.detach().float().cpu()
torch.nn.utils.clip_grad_norm_(copies, max_norm)
got = float(opt.clip_optimizer_grad_norm_fused(max_norm))
out["norm"] = [got, want]
out["clipped_max_error"] = max(
    float((p.grad.float().cpu() - c.grad).abs().max()) for p, c in zip(masters, copies)
)
try:
    opt.clip_model_grad_norm_fused(1e9)
    out["clip_model"] = "ok"
except RuntimeError as e:
    out["clip_model"] = "RuntimeError" if "opt_level='O1'" in str(e) else str(e)
opt.step()

for _ in range(4):
    backward()
    opt.step()
combined = opt._amp_stash.combined_grads
out["builds"] = combined.builds if combined is not None else None
out["fusions"] = getattr(opt, "fusions", None)
print(json.dumps(out))
