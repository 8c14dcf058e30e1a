"""Training with Huawei's own apex on the torch_npu emulator (test_huawei_apex_on_emulator.py).

Run by the python of a venv holding Huawei's apex and the emulator's wheel, nothing else of ours:

    python huawei_apex_train.py OUT optim NAME OPT_LEVEL    an optimizer under amp
    python huawei_apex_train.py OUT combine OPT_LEVEL 0|1  torch.optim.SGD, combine_grad off/on
    python huawei_apex_train.py OUT clip OPT_LEVEL 0|1     NpuFusedAdam with fused clipping, its
                                                           Linear weights in FRACTAL_NZ or not
    python huawei_apex_train.py OUT whole_batch WORLD      combine_grad, every rank's rows at once
    python huawei_apex_train.py OUT ddp RANK WORLD INIT    one rank of combine_ddp on hccl

NAME is one of apex.optimizers' NpuFused classes (or Lamb), or torch.optim's SGD, Adam, AdamW,
Adadelta, RMSprop prefixed with ``torch.`` for the reference runs. OUT gets, with torch.save,
{"losses": [...], "params": [fp32 CPU copies], "scales": [...], ...}.
"""

import datetime
import os
import sys

import torch
import torch_npu  # noqa: F401 - the emulator, as an Ascend script imports it
import torch.distributed as dist
import torch.nn.functional as F

from apex import amp
import apex.optimizers

STEPS = 40
ROWS = 32  # per rank
WIDTH = 16

# Per optimizer: keyword arguments that train the regression below in STEPS steps.
OPTIMIZERS = {
    "NpuFusedSGD": dict(lr=0.05, momentum=0.9),
    "NpuFusedAdam": dict(lr=1e-2),
    "NpuFusedAdamW": dict(lr=1e-2, weight_decay=1e-2),
    "NpuFusedAdamP": dict(lr=1e-2),
    "NpuFusedBertAdam": dict(lr=1e-2),
    "NpuFusedAdadelta": dict(lr=1.0),
    "NpuFusedLamb": dict(lr=5e-2),
    "Lamb": dict(lr=5e-2),
    "NpuFusedRMSprop": dict(lr=1e-3),
    "NpuFusedRMSpropTF": dict(lr=1e-2),
}
TORCH_TWINS = {
    "torch.SGD": "NpuFusedSGD",
    "torch.Adam": "NpuFusedAdam",
    "torch.AdamW": "NpuFusedAdamW",
    "torch.Adadelta": "NpuFusedAdadelta",
    "torch.RMSprop": "NpuFusedRMSprop",
}


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(WIDTH, 32),
        torch.nn.ReLU(),
        torch.nn.Linear(32, 32),
        torch.nn.ReLU(),
        torch.nn.Linear(32, 1),
    )


def data(world=1):
    """(x, y) rows of a fixed regression; rank r of ``world`` trains on its ROWS-row share."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(ROWS * world, WIDTH, generator=g)
    w = torch.randn(WIDTH, 1, generator=g)
    return x, torch.tanh(x @ w) + 0.1 * (x**2).sum(1, keepdim=True)


def make_optimizer(name, params):
    if name.startswith("torch."):
        kind = name.split(".", 1)[1]
        kwargs = dict(OPTIMIZERS[TORCH_TWINS[name]])
        if int(torch.__version__.split(".")[0]) >= 2:
            kwargs["foreach"] = False  # torch's per-tensor loops, whatever its default
        return getattr(torch.optim, kind)(params, **kwargs)
    return getattr(apex.optimizers, name)(params, **OPTIMIZERS[name])


def train(model, optimizer, x, y, steps=STEPS, clip=None):
    """(losses, loss scales, the first step's master gradients). ``clip``: a list that gets, each
    step, (the master gradients' L2 norm computed here, the norm apex's fused clipping returns)
    before the step clips them to 1."""
    losses, scales, first = [], [], None
    for _ in range(steps):
        optimizer.zero_grad()
        out = model(x)
        loss = F.mse_loss(out.float(), y)
        with amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
        if first is None:
            first = [p.grad.detach().float().cpu().clone() for p in amp.master_params(optimizer)]
        if clip is not None:
            grads = [p.grad.float() for p in amp.master_params(optimizer) if p.grad is not None]
            mine = torch.stack([g.norm() for g in grads]).norm().item()
            clip.append((mine, float(optimizer.clip_optimizer_grad_norm_fused(1.0))))
        optimizer.step()
        losses.append(loss.item())
        scales.append(amp._amp_state.loss_scalers[0].loss_scale())
    return losses, scales, first


def result(model, optimizer, trained, **extra):
    losses, scales, first = trained
    master = [p.detach().float().cpu().clone() for p in amp.master_params(optimizer)]
    return dict(
        losses=losses,
        scales=scales,
        master=master,
        first_grads=first,
        params=[p.detach().float().cpu().clone() for p in model.parameters()],
        dtypes=[str(p.dtype) for p in model.parameters()],
        devices=[str(p.device) for p in model.parameters()],
        **extra,
    )


def run_optim(name, level):
    model = make_model().npu()
    optimizer = make_optimizer(name, model.parameters())
    model, optimizer = amp.initialize(
        model, optimizer, opt_level=level, loss_scale=128.0, verbosity=0
    )
    x, y = data()
    trained = train(model, optimizer, x.npu(), y.npu())
    return result(model, optimizer, trained)


def run_combine(level, combine):
    model, optimizer = sgd_model()
    model, optimizer = amp.initialize(
        model, optimizer, opt_level=level, loss_scale="dynamic", combine_grad=combine, verbosity=0
    )
    x, y = data()
    trained = train(model, optimizer, x.npu(), y.npu())
    stash = optimizer._amp_stash
    combined = [
        t
        for t in (
            getattr(stash, "main_fp16_grad_combine", None),
            getattr(stash, "main_fp32_from_fp32_grad_combine", None),
            getattr(stash, "main_fp32_grad_combine", None),
        )
        if t is not None
    ]
    return result(model, optimizer, trained, combined=[t.numel() for t in combined])


def run_clip(level, nz):
    """NpuFusedAdam with its fused gradient clipping; with ``nz`` the Linear weights are first
    cast to FRACTAL_NZ, as Ascend's training scripts do (the values stay; the combined buffers
    size their slots by the padded storage torch_npu.get_storage_size reports)."""
    model = make_model().npu()
    if nz:
        for layer in model:
            if isinstance(layer, torch.nn.Linear):
                layer.weight.data = torch_npu.npu_format_cast(layer.weight.data, 29)
    # ints, not torch_npu.Format members: torch 2.x's torch.load (weights_only) refuses enums
    formats = [int(torch_npu.get_npu_format(p)) for p in model.parameters()]
    sizes = [torch_npu.get_storage_size(p) for p in model.parameters()]
    optimizer = apex.optimizers.NpuFusedAdam(model.parameters(), lr=1e-2)
    model, optimizer = amp.initialize(
        model, optimizer, opt_level=level, loss_scale=128.0, combine_grad=True, verbosity=0
    )
    x, y = data()
    norms = []
    trained = train(model, optimizer, x.npu(), y.npu(), clip=norms)
    combined = [t.numel() for t in optimizer.get_optimizer_combined_grads() if t is not None]
    return result(
        model, optimizer, trained, norms=norms, formats=formats, sizes=sizes, combined=combined
    )


def sgd_model():
    model = make_model().npu()
    return model, torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def run_whole_batch(world):
    """What combine_ddp's ranks must agree with: one process, every rank's rows at once."""
    model, optimizer = sgd_model()
    model, optimizer = amp.initialize(
        model, optimizer, opt_level="O2", loss_scale=128.0, combine_grad=True, verbosity=0
    )
    x, y = data(world)
    trained = train(model, optimizer, x.npu(), y.npu())
    return result(model, optimizer, trained)


def run_ddp(rank, world, init):
    torch.npu.set_device(rank)
    dist.init_process_group(
        "hccl",
        init_method="file://" + init,
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=120),
    )
    model, optimizer = sgd_model()
    model, optimizer = amp.initialize(
        model,
        optimizer,
        opt_level="O2",
        loss_scale=128.0,
        combine_grad=True,
        combine_ddp=True,
        verbosity=0,
    )
    x, y = data(world)
    rows = slice(rank * ROWS, (rank + 1) * ROWS)
    trained = train(model, optimizer, x[rows].npu(), y[rows].npu())
    out = result(model, optimizer, trained, backend=dist.get_backend(), world=dist.get_world_size())
    dist.barrier()
    dist.destroy_process_group()
    return out


def main(argv):
    out, scenario, args = argv[0], argv[1], argv[2:]
    if scenario == "optim":
        res = run_optim(args[0], args[1])
    elif scenario == "combine":
        res = run_combine(args[0], args[1] == "1")
    elif scenario == "clip":
        res = run_clip(args[0], args[1] == "1")
    elif scenario == "whole_batch":
        res = run_whole_batch(int(args[0]))
    elif scenario == "ddp":
        res = run_ddp(int(args[0]), int(args[1]), args[2])
    else:
        raise SystemExit(f"unknown scenario {scenario!r}")
    res["torch"] = str(torch.__version__)  # a plain str: torch.load reads weights only
    res["apex"] = os.path.dirname(apex.__file__)
    torch.save(res, out)


if __name__ == "__main__":
    main(sys.argv[1:])
