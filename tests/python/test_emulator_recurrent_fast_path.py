"""torch's recurrent layers on NPU tensors run as whole-sequence kernels (torch_npu._ops.recurrent)
and the models of bench/amp_models.py train to the same losses, bit for bit, on the general and
the fast emulation path, in fp16 on a 910 and in bf16 autocast on a 910B.

The kernels' numerics are checked against torch's own GRU/LSTM (and cells) computed in float64
on the same fp16/bf16 values, as the NPU computes them (fp32 accumulation, each result stored
once): fp16 outputs within 1e-3 (two units in the last place of values below 1), fp16 gradients
within 2e-3 of the largest gradient, bf16 within 1.6e-2 (two of bf16's); fp32 within 1e-5.
"""

import os
import struct
import sys

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from overlay_support import use_overlay

use_overlay()
import torch_npu  # noqa: E402,F401
from torch_npu._fp16 import float_status  # noqa: E402
from torch_npu._fp16 import path as emulation_path  # noqa: E402
from torch_npu._ops import recurrent  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import amp_models  # noqa: E402

LAYERS = {
    "GRU": lambda: nn.GRU(8, 16, num_layers=2, batch_first=True),
    "LSTM": lambda: nn.LSTM(8, 16, num_layers=2, bidirectional=True),
    "GRUCell": lambda: nn.GRUCell(8, 16),
    "LSTMCell": lambda: nn.LSTMCell(8, 16),
}
TOLERANCE = {
    torch.float16: (1e-3, 2e-3),
    torch.bfloat16: (1.6e-2, 1.6e-2),
    torch.float32: (1e-5, 1e-5),
}


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def _run_layer(name, dtype, seed=0):
    """(NPU output, NPU gradients, float64 reference output, reference gradients)."""
    torch.manual_seed(seed)
    layer = LAYERS[name]()
    layer = layer.to(dtype)
    reference = LAYERS[name]().double()
    reference.load_state_dict({k: v.double() for k, v in layer.state_dict().items()})
    shape = (5, 8) if name.endswith("Cell") else (5, 7, 8)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(seed + 1)).to(dtype)
    npu_layer = layer.npu()
    out = _first(npu_layer(x.npu()))
    ref = _first(reference(x.double()))
    weight = torch.randn(ref.shape, generator=torch.Generator().manual_seed(seed + 2))
    (out.float() * weight.to(dtype).float().npu()).sum().backward()
    (ref * weight.to(dtype).double()).sum().backward()
    grads = [p.grad.cpu().double() for p in npu_layer.parameters()]
    ref_grads = [p.grad for p in reference.parameters()]
    return out, grads, ref, ref_grads


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=["fp16", "fp32"])
def test_kernel_follows_the_float64_layer(chip910, name, dtype):
    out, grads, ref, ref_grads = _run_layer(name, dtype)
    out_tol, grad_tol = TOLERANCE[dtype]
    assert out.dtype == dtype and out.device.type == "npu"
    assert (out.cpu().double() - ref).abs().max().item() <= out_tol
    for g, r in zip(grads, ref_grads):
        assert (g - r).abs().max().item() <= grad_tol * max(r.abs().max().item(), 1e-3)
    assert not float_status.get()


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_kernel_in_bf16_on_a_910b(chip910b, name):
    out, grads, ref, ref_grads = _run_layer(name, torch.bfloat16)
    out_tol, grad_tol = TOLERANCE[torch.bfloat16]
    assert out.dtype == torch.bfloat16
    assert (out.cpu().double() - ref).abs().max().item() <= out_tol
    for g, r in zip(grads, ref_grads):
        assert (g - r).abs().max().item() <= grad_tol * max(r.abs().max().item(), 1e-3)


def test_one_rounding_per_output_not_per_gate(chip910):
    """The kernel's fp16 result is the fp32 layer's rounded once; torch's decomposition under the
    emulation rounds every gate and differs from it."""
    torch.manual_seed(3)
    layer = nn.GRU(8, 16).half()
    x = torch.randn(6, 4, 8).half()
    with torch.no_grad():
        fused = layer.npu()(x.npu())[0].cpu()
        decomposed = recurrent.originals()["gru"](
            x.npu(),
            torch.zeros(1, 4, 16, dtype=torch.float16).npu(),
            layer._flat_weights,
            True,
            1,
            0.0,
            False,
            False,
            False,
        )[0].cpu()
        fp32 = nn.GRU(8, 16)
        fp32.load_state_dict({k: v.float() for k, v in layer.state_dict().items()})
        once = fp32(x.float())[0].half()
    assert torch.equal(fused, once)
    assert not torch.equal(decomposed, once)
    assert (decomposed.float() - once.float()).abs().max().item() < 1e-2


def test_gradient_overflow_saturates_and_raises_the_status(chip910):
    layer = nn.LSTMCell(8, 16).half().npu()
    x = torch.randn(4, 8).half().npu()
    h, _ = layer(x)
    (h.float().sum() * 1e9).backward()
    grad = layer.weight_ih.grad.cpu().float()
    assert float_status.get()
    assert grad.abs().max().item() == 65504.0 and torch.isfinite(grad).all()


def test_dropout_while_training_keeps_torch_decomposition(chip910):
    """Dropout between layers while training runs as torch's steps, each emulated, its masks
    drawn from the NPU's generator: the same seed gives the same output, another seed another."""
    lstm = nn.LSTM(8, 16, num_layers=2, dropout=0.5).half().npu()
    x = torch.randn(6, 3, 8).half().npu()
    outs = []
    for seed in (5, 5, 6):
        torch.npu.manual_seed(seed)
        outs.append(lstm(x)[0].detach().cpu())
    assert outs[0].dtype == torch.float16
    assert torch.equal(outs[0], outs[1]) and not torch.equal(outs[0], outs[2])
    lstm.eval()  # no dropout: the kernel
    assert torch.equal(lstm(x)[0].detach().cpu(), lstm(x)[0].detach().cpu())


def test_bf16_on_a_910_is_refused(chip910):
    layer = nn.GRUCell(8, 16).to(torch.bfloat16).npu()
    with pytest.raises(RuntimeError, match="bfloat16 is not supported"):
        layer(torch.randn(2, 8).to(torch.bfloat16).npu())


def test_host_layers_stay_torch(chip910):
    layer = nn.GRU(8, 16)
    x = torch.randn(3, 2, 8)
    expected = recurrent.originals()["gru"](
        x, torch.zeros(1, 2, 16), layer._flat_weights, True, 1, 0.0, True, False, False
    )[0]
    assert torch.equal(layer(x)[0], expected)


# --- the bench's models: the same losses on both paths ---------------------------------------


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _small_batch(name):
    """The bench's batch of ``name``, cut down to keep the test short."""
    x, y = amp_models.MODELS[name][2](torch.Generator().manual_seed(1))
    if name == "cnn":
        return x[:4, :, :16, :16], y[:4]
    if x.dim() == 2 and x.shape[1] == 128:  # token models: 2 sequences of 32
        return x[:2, :32], y[:2]
    return x[:4, :8], y[:4]


def _losses(name, path, reduced, steps=3):
    """Losses of ``steps`` SGD steps on the emulated NPU: fp16 weights with a static loss scale
    (``reduced`` fp16), or fp32 weights under bf16 autocast (``reduced`` bf16)."""
    with emulation_path.using(path):
        torch.manual_seed(0)
        model = amp_models.MODELS[name][1]()
        if name == "cnn":
            model[-1] = nn.Linear(64 * 4 * 4, 10)  # 16x16 images
        model = model.npu()
        if reduced == torch.float16:
            model = model.half()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        x, y = (t.npu() for t in _small_batch(name))
        if reduced == torch.float16 and x.is_floating_point():
            x = x.half()
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            if reduced == torch.float16:
                loss = F.cross_entropy(model(x).float(), y)
                (loss * 128.0).backward()
                for p in model.parameters():
                    p.grad.div_(128.0)
            else:
                with torch.autocast("npu", dtype=torch.bfloat16):
                    out = model(x)
                loss = F.cross_entropy(out.float(), y)
                loss.backward()
            opt.step()
            losses.append(_bits(loss.item()))
        return losses


@pytest.mark.parametrize("name", sorted(amp_models.MODELS))
def test_fp16_losses_are_bit_identical_on_both_paths(chip910, name):
    general = _losses(name, "general", torch.float16)
    assert _losses(name, "fast", torch.float16) == general


@pytest.mark.parametrize("name", sorted(amp_models.MODELS))
def test_bf16_autocast_losses_are_bit_identical_on_both_paths(chip910b, name):
    general = _losses(name, "general", torch.bfloat16)
    assert _losses(name, "fast", torch.bfloat16) == general
