"""torch's own optimizers on the emulated NPU, on whichever torch runs the test:
- the foreach and fused implementations group their tensors by the NPU each is on (torch 2.x
  groups in C++, where an emulated NPU tensor is host memory) and step as they do on the host;
- ``torch.npu.amp.GradScaler`` drives an optimizer that unscales its gradients itself by
  torch's protocols: the scaler as ``grad_scaler``, or (torch 2.x, the fused optimizers the HF
  Trainer picks) ``grad_scale`` and ``found_inf`` set on the optimizer, as torch's scaler does.
Every NPU run is compared with the same run on the host, bit for bit."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from overlay_support import use_overlay

use_overlay(runtime=True)
import torch_npu  # noqa: E402,F401
from torch.npu.amp import GradScaler  # noqa: E402
from torch_npu._fp16 import float_status  # noqa: E402

GROUPS_IN_CPP = hasattr(torch._C, "_group_tensors_by_device_and_dtype")
TORCH_2 = int(torch.__version__.split(".")[0]) >= 2
CLIP_FOREACH = {"foreach": True} if TORCH_2 else {}  # torch 1.13's clip has no foreach
needs_cpp_groups = pytest.mark.skipif(
    not GROUPS_IN_CPP,
    reason=f"torch {torch.__version__} groups tensors in Python, by "
    "Tensor.device (torch 2.x groups them in C++)",
)
needs_host_fused = pytest.mark.skipif(
    not TORCH_2, reason=f"torch {torch.__version__} has no fused optimizers for host memory"
)


@pytest.fixture(autouse=True)
def clear_status():
    float_status.clear()
    yield
    float_status.clear()


def t(*shape, seed=0, dtype=torch.float32, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(device, dtype)


@needs_cpp_groups
@pytest.mark.parametrize("with_indices", [False, True])
def test_groups_are_keyed_by_the_npu_each_tensor_is_on(with_indices):
    firsts = [
        t(2, device="npu:0"),
        t(3),
        t(4, device="npu:1"),
        t(5, device="npu:0"),
        t(6, dtype=torch.float16, device="npu:0"),
    ]
    seconds = [x.clone() for x in firsts]
    groups = torch._C._group_tensors_by_device_and_dtype([firsts, seconds], with_indices)
    found = {
        key: ([[x.shape[0] for x in column] for column in lists], indices)
        for key, (lists, indices) in groups.items()
    }
    expect = {
        (torch.device("npu:0"), torch.float32): ([[2, 5], [2, 5]], [0, 3]),
        (torch.device("cpu"), torch.float32): ([[3], [3]], [1]),
        (torch.device("npu:1"), torch.float32): ([[4], [4]], [2]),
        (torch.device("npu:0"), torch.float16): ([[6], [6]], [4]),
    }
    if not with_indices:
        expect = {key: (lists, []) for key, (lists, _) in expect.items()}
    assert found == expect
    # The grouped tensors are the given ones, not copies.
    lists, _ = groups[(torch.device("npu:0"), torch.float32)]
    assert lists[0][1] is firsts[3] and lists[1][0] is seconds[0]


def test_a_foreach_operation_over_lists_spanning_npus_runs_per_npu_as_torch_does():
    devices = ["npu:0", "npu:1", "cpu", "npu:0"]
    xs = [t(3, seed=i, device=d) for i, d in enumerate(devices)]
    ys = [t(3, seed=10 + i, device=d) for i, d in enumerate(devices)]
    host = [x.cpu() for x in xs]
    sums = torch._foreach_add(xs, ys, alpha=2.0)
    assert [str(x.device) for x in sums] == devices
    expect = torch._foreach_add(host, [y.cpu() for y in ys], alpha=2.0)
    assert all(torch.equal(a.cpu(), b) for a, b in zip(sums, expect))
    torch._foreach_mul_(xs, 0.5)
    torch._foreach_mul_(host, 0.5)
    assert all(torch.equal(a.cpu(), b) for a, b in zip(xs, host))
    assert [str(x.device) for x in xs] == devices
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch._foreach_add_([xs[0], xs[1]], [ys[1], ys[0]])  # each pair mixes two NPUs


def two_npu_model():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3))
    npu = copy.deepcopy(model)
    npu[0].to("npu:0")
    npu[2].to("npu:1")
    return model, npu


def two_npu_loss(model, x, y):
    h = model[1](model[0](x.to(model[0].weight.device)))
    return F.mse_loss(model[2](h.to(model[2].weight.device)).to(y.device), y)


OPTIMIZERS = {
    "sgd-foreach": (torch.optim.SGD, dict(lr=0.1, momentum=0.9, foreach=True)),
    "adam-foreach": (torch.optim.Adam, dict(lr=0.01, foreach=True)),
    "adamw-fused": (torch.optim.AdamW, dict(lr=0.01, fused=True)),
    "sgd-fused": (torch.optim.SGD, dict(lr=0.1, momentum=0.9, fused=True)),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_torch_optimizers_step_as_on_the_host_with_parameters_on_two_npus(name):
    maker, kwargs = OPTIMIZERS[name]
    if "fused" in kwargs and not TORCH_2:
        pytest.skip(f"torch {torch.__version__} has no fused optimizers for host memory")
    host, npu = two_npu_model()
    host_opt, npu_opt = maker(host.parameters(), **kwargs), maker(npu.parameters(), **kwargs)
    for step in range(3):
        x, y = t(4, 6, seed=step), t(4, 3, seed=10 + step)
        for model, opt in ((host, host_opt), (npu, npu_opt)):
            opt.zero_grad()
            two_npu_loss(model, x, y).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5, **CLIP_FOREACH)
            opt.step()
    for a, b in zip(host.parameters(), npu.parameters()):
        assert b.device.type == "npu"
        assert torch.equal(a, b.cpu())


def train(model, opt, scaler, x, y, inject=None, clip=None):
    opt.zero_grad()
    scaler.scale(F.mse_loss(model(x), y)).backward()
    if inject is not None:
        next(model.parameters()).grad.view(-1)[0] = inject
    if clip is not None:
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    scaler.step(opt)
    scaler.update()


@needs_host_fused
def test_grad_scaler_drives_a_fused_optimizer_as_torchs_scaler_does_on_the_host():
    """The HF Trainer's path with --fp16: fused AdamW, unscale_ for clipping, then step."""
    torch.manual_seed(0)
    host = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3))
    npu = copy.deepcopy(host).npu()
    host_opt = torch.optim.AdamW(host.parameters(), lr=0.01, fused=True)
    npu_opt = torch.optim.AdamW(npu.parameters(), lr=0.01, fused=True)
    host_scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8, growth_interval=2)
    npu_scaler = GradScaler(init_scale=2.0**8, growth_interval=2)
    # clean, clean (the scale grows), an inf gradient (skipped, backs off), unscale_ and clip,
    # a NaN gradient after unscale_, clean.
    plan = [
        {},
        {},
        {"inject": float("inf")},
        {"clip": 0.05},
        {"inject": float("nan"), "clip": 0.05},
        {},
    ]
    for step, extra in enumerate(plan):
        x, y = t(4, 6, seed=step), t(4, 3, seed=10 + step)
        train(host, host_opt, host_scaler, x, y, **extra)
        train(npu, npu_opt, npu_scaler, x.npu(), y.npu(), **extra)
        assert npu_scaler.get_scale() == host_scaler.get_scale(), step
        for a, b in zip(host.parameters(), npu.parameters()):
            assert torch.equal(a, b.cpu()), step
        assert not hasattr(npu_opt, "grad_scale") and not hasattr(npu_opt, "found_inf")
    assert npu_scaler.get_scale() == 2.0**7  # grew once, backed off twice
    steps = [s["step"] for s in npu_opt.state.values()]
    assert all(float(s) == 4.0 for s in steps)  # the two overflowing steps were not counted


class SelfUnscaling(torch.optim.Optimizer):
    """An optimizer of a user's own that unscales and skips by itself: SGD without momentum."""

    _step_supports_amp_scaling = True

    def __init__(self, params, lr):
        super().__init__(params, dict(lr=lr))
        self.seen = []

    def _apply(self, grad_scale, found_inf):
        if found_inf is not None and float(found_inf) != 0.0:
            return
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    grad = p.grad if grad_scale is None else p.grad / grad_scale
                    p.data.add_(grad, alpha=-group["lr"])


class TakesScaler(SelfUnscaling):
    def step(self, closure=None, grad_scaler=None):
        """As torch 1.13's fused Adam uses the scaler."""
        self.seen.append(grad_scaler)
        scale = found = None
        if grad_scaler is not None:
            scale = grad_scaler._get_scale_async()
            found = next(iter(grad_scaler._check_inf_per_device(self).values()))
        self._apply(scale, found)


class ReadsAttributes(SelfUnscaling):
    def step(self, closure=None):
        scale, found = getattr(self, "grad_scale", None), getattr(self, "found_inf", None)
        self.seen.append(
            (
                None if scale is None else (scale.dim(), scale.device.type, float(scale)),
                None if found is None else (found.dim(), found.device.type, float(found)),
            )
        )
        self._apply(scale, found)


def test_an_optimizer_whose_step_takes_grad_scaler_is_given_the_scaler():
    model = nn.Linear(3, 2).npu()
    opt = TakesScaler(model.parameters(), lr=0.1)
    scaler = GradScaler(init_scale=4.0)
    ref = copy.deepcopy(model)
    x = t(2, 3).npu()
    scaler.scale(model(x).sum()).backward()
    scaler.step(opt)
    scaler.update()
    model.zero_grad()
    scaler.scale(model(x).sum()).backward()
    next(model.parameters()).grad.view(-1)[0] = float("inf")
    scaler.step(opt)  # skipped by the optimizer
    scaler.update()
    assert opt.seen == [scaler, scaler]
    ref(x).sum().backward()
    with torch.no_grad():
        for p in ref.parameters():
            p.add_(p.grad, alpha=-0.1)
    for a, b in zip(model.parameters(), ref.parameters()):
        assert torch.equal(a, b)
    assert scaler.get_scale() == 2.0


def test_any_other_finds_grad_scale_and_found_inf_while_it_steps():
    model = nn.Linear(3, 2).npu()
    ref = copy.deepcopy(model)
    opt = ReadsAttributes(model.parameters(), lr=0.1)
    scaler = GradScaler(init_scale=4.0)
    x = t(2, 3).npu()
    scaler.scale(model(x).sum()).backward()
    scaler.step(opt)  # the optimizer divides by the scale itself
    scaler.update()
    model.zero_grad()
    scaler.scale(model(x).sum()).backward()
    if torch_npu.npu.utils.is_support_inf_nan():  # a 910B: the overflow is in the values
        next(model.parameters()).grad.view(-1)[0] = float("inf")
    else:  # a 910: an overflow only the float status sees
        torch.full((2,), 60000.0).half().npu() * 2.0
    scaler.unscale_(opt)  # unscaled already: no scale left to divide by
    scaler.step(opt)  # skipped by the optimizer: found_inf is 1
    scaler.update()
    assert opt.seen == [((0, "npu", 4.0), (0, "npu", 0.0)), (None, (0, "npu", 1.0))]
    assert not hasattr(opt, "grad_scale") and not hasattr(opt, "found_inf")
    ref(x).sum().backward()
    with torch.no_grad():
        for p in ref.parameters():
            p.add_(p.grad, alpha=-0.1)  # x4 then /4 is exact: the same bits
    for a, b in zip(model.parameters(), ref.parameters()):
        assert torch.equal(a, b)
    assert scaler.get_scale() == 2.0
