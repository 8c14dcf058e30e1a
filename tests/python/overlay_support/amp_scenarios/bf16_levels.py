"""Trains a small BatchNorm CNN 30 steps in bfloat16 on an emulated 910B, or in fp32
(``fp32``: no amp, the reference). ``bf16_levels.py HOW LOSS_SCALE COMBINE_GRAD FUSED LR``:
HOW is ``O1-bf16`` (O1, patch_torch_functions_type=bfloat16), ``O2-bf16`` (O2,
cast_model_type=bfloat16), ``O4``, ``O5``, ``O3-bf16`` (bf16 weights stepped in place, no fp32
masters) or ``fp32``; LOSS_SCALE ``default`` (not passed), ``dynamic`` or a number; LR the SGD
learning rate. Prints one JSON document: every loss, the parameters', masters',
state_dict's and BatchNorm buffers' dtypes, the dtypes the convolutions and the linear layer
computed in, the loss scale and amp's resolved options, and with COMBINE_GRAD the combined
gradient buffers."""

import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp
from apex.amp._amp_state import _amp_state
from apex.optimizers import NpuFusedSGD

HOW = {
    "O1-bf16": dict(opt_level="O1", patch_torch_functions_type=torch.bfloat16),
    "O2-bf16": dict(opt_level="O2", cast_model_type=torch.bfloat16),
    "O4": dict(opt_level="O4"),
    "O5": dict(opt_level="O5"),
    "O3-bf16": dict(opt_level="O3", cast_model_type=torch.bfloat16, keep_batchnorm_fp32=True),
}


def cnn():
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(2),
        nn.Flatten(),
        nn.Linear(32, 4),
    )


def combined(model, opt):
    """With combine_grad: the dtypes of the combined gradient buffers (the model's, the
    optimizer's), whether every bf16 model gradient lies in the model's, and how many times amp
    made them (once: they were kept across the 40 steps)."""
    model_bufs, opt_bufs = opt.get_model_combined_grads(), opt.get_optimizer_combined_grads()
    bf16_grads = [p.grad for p in model.parameters() if p.dtype == torch.bfloat16]
    inside = False
    if bf16_grads and model_bufs and model_bufs[0].dtype == torch.bfloat16:
        low = model_bufs[0].data_ptr()
        high = low + model_bufs[0].numel() * model_bufs[0].element_size()
        inside = all(low <= g.data_ptr() < high for g in bf16_grads)
    return dict(
        model=[None if t is None else str(t.dtype) for t in model_bufs],
        optimizer=[None if t is None else str(t.dtype) for t in opt_bufs],
        bf16_grads_inside=inside,
        builds=opt._amp_stash.combined_grads.builds,
    )


def main(how, loss_scale, combine_grad, fused, lr, steps=30):
    torch.manual_seed(0)
    model = cnn().npu()
    cls = NpuFusedSGD if fused else torch.optim.SGD
    opt = cls(model.parameters(), lr=lr, momentum=0.9)
    if how != "fp32":
        kw = dict(HOW[how], verbosity=0)
        if loss_scale != "default":
            kw["loss_scale"] = loss_scale if loss_scale == "dynamic" else float(loss_scale)
        if combine_grad:
            kw["combine_grad"] = True
        model, opt = amp.initialize(model, opt, **kw)
    computed = {}
    for name in ("0", "5"):  # the convolution and the linear layer

        def record(module, inputs, output, name=name):
            computed[name] = str(output.dtype)

        model._modules[name].register_forward_hook(record)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 3, 8, 8, generator=g).npu()
    y = torch.randint(0, 4, (64,), generator=g).npu()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if how == "fp32":
            loss.backward()
        else:
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
        opt.step()
        losses.append(loss.item())
    out = dict(
        losses=losses,
        computed=computed,
        dtypes={n: str(p.dtype) for n, p in model.named_parameters()},
        masters=sorted({str(p.dtype) for grp in opt.param_groups for p in grp["params"]}),
        state_dict={
            k: str(v.dtype) for k, v in model.state_dict().items() if v.is_floating_point()
        },
        buffers={n: str(b.dtype) for n, b in model.named_buffers() if b.is_floating_point()},
    )
    if combine_grad:
        out["combined"] = combined(model, opt)
    if how != "fp32":
        props = _amp_state.opt_properties
        out.update(
            scale=amp.state_dict()["loss_scaler0"]["loss_scale"],
            opt_level=props.opt_level,
            loss_scale=props.loss_scale,
            cast_model_type=str(props.cast_model_type),
            patch_torch_functions_type=str(props.patch_torch_functions_type),
        )
    return out


print(
    json.dumps(
        main(sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1", float(sys.argv[5]))
    )
)
