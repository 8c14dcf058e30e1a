"""Recurrent cells under NPU autocast make autocast's casts of their fp32 activations inside the
kernel (``torch_npu._ops.recurrent.run_cast``, ``autocast_mode.casts_inside``): stepped over a
sequence, they give the bits of the same steps with each input and state cast by ``.to()``
first, as autocast casts them otherwise: outputs, the gradients of the input, of the initial
states and of the weights (whose casts autocast caches, so their per-step gradients add up in
the lower precision), and the float status. In bf16 on a 910B in INF/NAN and in saturation mode,
and in fp16 on a 910 and a 910B; with NaN, infinities, values past the lower precision's range and its
neighbours, subnormals and gradients that overflow; sizes that are not a multiple of a vector
width; both kernel paths (torch operations and the runtime's) and both emulation paths.
"""

import pytest
import torch
import torch.nn as nn

from overlay_support import use_overlay
from overlay_support.emulation_off import plain_torch

use_overlay(runtime=True)
import torch_npu  # noqa: E402,F401
from torch_npu._fp16 import float_status  # noqa: E402
from torch_npu._fp16 import path as emulation_path  # noqa: E402
from torch_npu._ops import recurrent  # noqa: E402
from overlay_support.npu_op_checks import emulated_chip  # noqa: E402

pytestmark = pytest.mark.usefixtures("kernel_path")

BATCH, STEPS, WIDTH, HIDDEN = 3, 4, 5, 13
# (chip, INF/NAN mode, autocast dtype)
CHIPS = {
    "910b-inf_nan": ("Ascend910B1", True, torch.bfloat16),
    "910b-saturation": ("Ascend910B1", False, torch.bfloat16),
    "910-fp16": ("Ascend910A", False, torch.float16),
    "910b-fp16": ("Ascend910B1", True, torch.float16),
}
# fp32 bit patterns at the edges of each lower precision: its largest finite value, the fp32
# values just below and at the tie where rounding goes past it, its smallest subnormal, and an
# fp32 value at the tie below that one (rounds to 0).
EDGES = {
    torch.bfloat16: [0x7F7F0000, 0x7F7F7FFF, 0x7F7F8000, 0x00010000, 0x00008000],
    torch.float16: [0x477FE000, 0x477FEFFF, 0x477FF000, 0x33800000, 0x33000000],
}


@pytest.fixture(params=sorted(CHIPS))
def chip(request):
    """(the autocast dtype, whether the chip runs in INF/NAN mode); the status clear."""
    name, inf_nan, dtype = CHIPS[request.param]
    with emulated_chip(name, inf_nan=inf_nan):
        float_status.clear()
        yield dtype, inf_nan
        float_status.clear()


def edges(dtype: torch.dtype) -> torch.Tensor:
    return torch.tensor(EDGES[dtype], dtype=torch.int64).to(torch.int32).view(torch.float32)


def inputs(dtype: torch.dtype, special: bool) -> torch.Tensor:
    """The sequence (batch, steps, width): random values, and with ``special`` the edges of
    ``dtype`` with both signs, NaN and infinities in the first sequence's last two steps (its
    later states are NaN, the other sequences' stay finite)."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(BATCH, STEPS, WIDTH, generator=g) * 3
    if special:
        edge = edges(dtype)
        x[0, 2] = edge
        x[0, 3] = torch.tensor([-edge[2], float("nan"), float("inf"), -float("inf"), -edge[4]])
    return x


def steps(kind: str, dtype: torch.dtype, x: torch.Tensor, scale: float, inside: bool):
    """The cell stepped over ``x`` under autocast from a fp32 initial state that requires grad;
    with ``inside`` the cell gets the fp32 activations (autocast hands them to the kernel),
    else each is cast by ``.to()`` first. Returns (outputs' bits, gradients' bits, status)."""
    torch.manual_seed(0)
    cell = (nn.GRUCell if kind == "gru" else nn.LSTMCell)(WIDTH, HIDDEN).npu()
    seq = x.npu().requires_grad_()
    start = torch.randn(BATCH, HIDDEN, generator=torch.Generator().manual_seed(4))
    start = start.npu().requires_grad_()
    float_status.clear()
    with torch.autocast("npu", dtype=dtype):
        h = start * 1.0  # not a leaf: autocast casts it at every use, as the input
        c = h
        outs = []
        for t in range(STEPS):
            xt = seq[:, t]
            if not inside:
                xt, h, c = xt.to(dtype), h.to(dtype), c.to(dtype)
            if kind == "gru":
                h = cell(xt, h)
            else:
                h, c = cell(xt, (h, c))
            outs.append(h)
    loss = sum(o.float().sum() * (i + 1) for i, o in enumerate(outs)) * scale
    loss.backward()
    status = float_status.get()
    with plain_torch():
        values = [o.detach().cpu() for o in outs]
        grads = [seq.grad, start.grad] + [p.grad for p in cell.parameters()]
        bits = [v.view(torch.int16) for v in values] + [g.cpu().view(torch.int32) for g in grads]
    return bits, status, [o.dtype for o in outs]


def _counting(monkeypatch):
    """The calls the kernel took with the casts inside."""
    taken = []
    real = recurrent.run_cast

    def counted(*args):
        out = real(*args)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(recurrent, "run_cast", counted)
    return taken


@pytest.mark.parametrize("path", ["fast", "general"])
@pytest.mark.parametrize("special", [False, True], ids=["finite", "special"])
@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_casts_inside_give_the_bits_of_the_casts(chip, kind, special, path, monkeypatch):
    dtype, inf_nan = chip
    x = inputs(dtype, special)
    # Gradients past the range on the special inputs' steps: stored saturated (status) or inf.
    scale = (1e37 if dtype == torch.bfloat16 else 1e4) if special else 1.0
    taken = _counting(monkeypatch)
    with emulation_path.using(path):
        inside, status_inside, dtypes = steps(kind, dtype, x, scale, inside=True)
        assert taken == [True] * STEPS  # every step ran with its casts inside
        cast, status_cast, _ = steps(kind, dtype, x, scale, inside=False)
    assert dtypes == [dtype] * STEPS
    for i, (got, want) in enumerate(zip(inside, cast)):
        assert torch.equal(got, want), f"tensor {i} differs"
    assert status_inside == status_cast
    if special and not inf_nan:
        assert status_inside  # the edges saturate on entry, as the casts do


def test_without_the_cache_the_weights_are_cast_inside_too(chip910b, monkeypatch):
    """With autocast's cache off, each step casts the weights anew, so their gradients come
    back in fp32 per step: the kernel casts them inside as it casts the activations."""
    taken = _counting(monkeypatch)
    x = inputs(torch.bfloat16, False)
    results = []
    for inside in (True, False):
        torch.manual_seed(0)
        cell = nn.LSTMCell(WIDTH, HIDDEN).npu()
        seq = x.npu().requires_grad_()
        with torch.autocast("npu", dtype=torch.bfloat16, cache_enabled=False):
            h = c = torch.zeros(BATCH, HIDDEN).npu()
            for t in range(STEPS):
                if inside:
                    h, c = cell(seq[:, t], (h, c))
                else:
                    weights = [p.to(torch.bfloat16) for p in cell.parameters()]
                    cast = [v.to(torch.bfloat16) for v in (seq[:, t], h, c)]
                    h, c = torch._VF.lstm_cell(cast[0], tuple(cast[1:]), *weights)
        h.float().sum().backward()
        with plain_torch():
            grads = [seq.grad] + [p.grad for p in cell.parameters()]
            bits = [g.cpu().view(torch.int32) for g in grads]
            results.append([h.detach().cpu().view(torch.int16)] + bits)
    assert taken[:STEPS] == [True] * STEPS
    for got, want in zip(*results):
        assert torch.equal(got, want)


def test_an_input_of_another_lower_precision_is_cast_as_usual(chip910b, monkeypatch):
    """An fp16 input under bf16 autocast: the kernel does not take the call (autocast casts
    fp16 to bf16 itself), and the result is the cast's."""
    taken = _counting(monkeypatch)
    torch.manual_seed(0)
    cell = nn.GRUCell(WIDTH, HIDDEN).npu()
    x = inputs(torch.bfloat16, False)[:, 0].half().npu()
    with torch.autocast("npu", dtype=torch.bfloat16):
        got = cell(x)
        want = cell(x.to(torch.bfloat16))
    assert taken == [False, True]
    assert got.dtype == torch.bfloat16
    with plain_torch():
        assert torch.equal(got.cpu().view(torch.int16), want.cpu().view(torch.int16))


def test_the_input_may_change_after_the_step(chip910b):
    """A decoder that writes each step's input into one buffer: the cast the step used is its
    own, so the backward does not see the buffer's later values (nor refuses them)."""
    results = []
    for inside in (True, False):
        torch.manual_seed(0)
        cell = nn.GRUCell(WIDTH, HIDDEN).npu()
        seq = inputs(torch.bfloat16, False).npu().requires_grad_()
        buffer = torch.zeros(BATCH, WIDTH).npu()
        with torch.autocast("npu", dtype=torch.bfloat16):
            h = torch.zeros(BATCH, HIDDEN).npu()
            for t in range(STEPS):
                buffer.copy_(seq[:, t] * 2.0)
                h = cell(buffer if inside else buffer.to(torch.bfloat16), h)
        h.float().sum().backward()
        with plain_torch():
            grads = [seq.grad] + [p.grad for p in cell.parameters()]
            results.append([h.detach().cpu().view(torch.int16)] + [g.cpu() for g in grads])
    for got, want in zip(*results):
        assert torch.equal(got, want)
