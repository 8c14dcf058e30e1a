"""bf16 on an emulated 910B, in INF/NAN and in saturation mode: the fast path's bf16 kernels
(``torch_npu._fp16.bf16_kernels``, the runtime's ``bf16_to_float``, ``float_to_bf16``,
``copy_bf16``, ``add_bf16``) and the general path give the same bits and float status, and both
follow the definition of a bf16 store written here: the nearest bf16 (ties to the even one)
found by comparing the value with the two bf16 values around it in float64, where both and their
midpoint are exact; overflow to inf and every NaN as 0x7FC0 in INF/NAN mode, NaN as +0 and
beyond the range the largest bf16, reported, in saturation mode. Every bf16 value, fp32 values
at and around every rounding boundary (ties, subnormals, the top of the range, inf, NaN), both
kernel paths (torch operations and the runtime's kernels). Then the bench's models train to the
same losses, bit for bit, on both emulation paths with the runtime's kernels."""

import math
import os
import struct
import sys

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from overlay_support import select_kernel_path, use_overlay
from overlay_support.both_paths import bits_of, both_paths, every_bf16
from overlay_support.emulation_off import plain_torch

# The runtime goes on sys.path before anything looks it up (the lookup is cached).
RUNTIME_DIR = use_overlay(runtime=True)
import torch_npu  # noqa: E402,F401
from torch_npu._fp16 import float_status  # noqa: E402
from torch_npu._fp16 import path as emulation_path  # noqa: E402
from overlay_support.npu_op_checks import emulated_chip  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import amp_models  # noqa: E402

BF16 = torch.bfloat16
BF16_MAX_BITS = 0x7F7F
NAN_BITS = 0x7FC0
MODES = {"inf_nan": True, "saturation": False}


@pytest.fixture(params=sorted(MODES))
def mode(request):
    """A 910B in the mode of the parameter; the float status clear before and after."""
    with emulated_chip("Ascend910B1", inf_nan=MODES[request.param]):
        float_status.clear()
        yield request.param
        float_status.clear()


def boundary_floats():
    """Each bf16 pattern with low halves at and around its rounding boundary: exact, just
    above, just below and at the tie, the largest low half."""
    with plain_torch():
        top = torch.arange(0, 65536, dtype=torch.int64) << 16
        lows = torch.tensor([0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF], dtype=torch.int64)
        bits = (top[:, None] | lows[None, :]).reshape(-1)
        return (bits - ((bits >> 31) << 32)).to(torch.int32).view(torch.float32)


def _bf16_value(pattern):
    """float64 values of bf16 patterns (int64 tensor of 16-bit patterns, sign clear)."""
    return (pattern << 16).to(torch.int32).view(torch.float32).double()


def reference_bits(x, saturate):
    """The bf16 bits (int64, 0..65535) of storing the fp32 values ``x``, by the definition."""
    with plain_torch():
        bits = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
        sign = (bits >> 16) & 0x8000
        magnitude = x.double().abs()
        below = (bits >> 16) & 0x7FFF  # truncation: at most the magnitude
        low = _bf16_value(below)
        high = torch.where(
            below + 1 == 0x7F80, torch.full_like(low, 2.0**128), _bf16_value(below + 1)
        )
        midpoint = (low + high) / 2
        up = (magnitude > midpoint) | ((magnitude == midpoint) & (below % 2 == 1))
        up &= magnitude != low
        out = sign | (below + up.to(torch.int64))
        nan = torch.isnan(x)
        if saturate:
            big = magnitude > _bf16_value(torch.tensor(BF16_MAX_BITS))
            out = torch.where(big, sign | BF16_MAX_BITS, out)
            out = torch.where(nan, torch.zeros_like(out), out)
        else:
            out = torch.where(nan, torch.full_like(out, NAN_BITS), out)
        return out


@pytest.mark.usefixtures("kernel_path")
def test_fp32_to_bf16_follows_the_definition(mode):
    x = boundary_floats()
    saturate = mode == "saturation"
    for offset in (0, 1, 7):  # values in the vector body and the scalar tail of each loop
        out, status = both_paths(lambda a: a.to(BF16), x[offset:])
        assert torch.equal(bits_of(out), reference_bits(x[offset:], saturate))
        assert status == saturate  # the values hold NaN and inf
        copied, _ = both_paths(
            lambda a, b: a.copy_(b), torch.zeros(len(x) - offset, dtype=BF16), x[offset:]
        )
        assert torch.equal(bits_of(copied), reference_bits(x[offset:], saturate))
    tame = torch.tensor([1.0, -2.5, 0.0, 3.3e38, -1e-40])
    assert not both_paths(lambda a: a.to(BF16), tame)[1]


@pytest.mark.usefixtures("kernel_path")
def test_bf16_to_fp32_is_exact_for_every_value(mode):
    every = every_bf16()
    out, status = both_paths(lambda a: a.float(), every)
    with plain_torch():
        want = (every.view(torch.int16).to(torch.int32) << 16).view(torch.float32)
        assert torch.equal(out.view(torch.int32), want.view(torch.int32))  # NaNs kept as they are
    assert not status


@pytest.mark.usefixtures("kernel_path")
def test_copies_and_sums_follow_the_definition_for_every_value(mode):
    every = every_bf16()
    saturate = mode == "saturation"
    with plain_torch():
        widened = every.float()
    out, status = both_paths(lambda a: a.clone(), every)
    assert torch.equal(bits_of(out), reference_bits(widened, saturate))
    assert status == saturate
    out, _ = both_paths(lambda a, b: a.copy_(b), torch.zeros(65536, dtype=BF16), every)
    assert torch.equal(bits_of(out), reference_bits(widened, saturate))
    specials = [0.0, -0.0, 1.0, -1.0, 1e-40, 0.5, 3.3e38, -3.3e38, 2.0**119, math.inf, math.nan]
    for v in specials:
        with plain_torch():
            other = torch.full((65536,), v).to(BF16)
            total = widened + other.float()  # the fp32 sum, one rounding
            want = reference_bits(total, saturate)
            beyond = bool((torch.isnan(total) | (total.abs() > torch.finfo(BF16).max)).any())
        for fn in (torch.add, lambda a, b: b.add_(a)):
            out, status = both_paths(fn, every, other)
            assert torch.equal(bits_of(out), want), v
            assert status == (saturate and beyond), v


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _losses(name, path, steps=3):
    """Losses of ``steps`` SGD steps of the bench's model ``name`` (a small batch), fp32 weights,
    the forward under bf16 autocast."""
    with emulation_path.using(path):
        torch.manual_seed(0)
        model = amp_models.MODELS[name][1]()
        if name == "cnn":
            model[-1] = nn.Linear(64 * 4 * 4, 10)  # 16x16 images
        model = model.npu()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        x, y = amp_models.MODELS[name][2](torch.Generator().manual_seed(1))
        if name == "cnn":
            x, y = x[:4, :, :16, :16], y[:4]
        elif x.shape[1] == 128:  # token models: 2 sequences of 32
            x, y = x[:2, :32], y[:2]
        else:
            x, y = x[:4, :8], y[:4]
        x, y = x.npu(), y.npu()
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            with torch.autocast("npu", dtype=BF16):
                out = model(x)
            loss = F.cross_entropy(out.float(), y)
            loss.backward()
            opt.step()
            losses.append(_bits(loss.item()))
        return losses


@pytest.mark.parametrize("name", sorted(amp_models.MODELS))
def test_bench_models_train_to_the_same_losses_with_the_runtime_kernels(
    chip910b, monkeypatch, name
):
    select_kernel_path("runtime", monkeypatch, RUNTIME_DIR)
    general = _losses(name, "general")
    assert _losses(name, "fast") == general
