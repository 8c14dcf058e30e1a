"""NPU autocast casts a tensor passed several times to nn.MultiheadAttention's Python function
once, so its self-attention (``query is key is value``) keeps the packed in-projection (one
linear of the input, as on a device whose autocast casts below Python) instead of three linears
of three casts. The reference is the same call written with explicit casts, the input cast once;
the emulation is deterministic, so they agree bit for bit. fp16 on a 910 and bf16 on a 910B
(torch 1.13's autocast takes no bf16 for a GPU slot). Operators keep torch's cast per argument:
``mm(a, a)`` casts ``a`` twice, and the two gradients meet in fp32."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from overlay_support import use_overlay

use_overlay()
import torch_npu  # noqa: E402,F401

CHIPS = {torch.float16: "chip910", torch.bfloat16: "chip910b"}


def _region(dtype):
    if hasattr(torch, "get_autocast_dtype"):
        return torch.autocast("npu", dtype=dtype)
    return torch.npu.amp.autocast(dtype=dtype)


class _CountLinear:
    """Counts the calls of ``F.linear`` that multi_head_attention_forward makes."""

    def __init__(self, monkeypatch):
        self.calls = 0
        original = F.linear

        def counted(*args, **kwargs):
            self.calls += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(F, "linear", counted)


def _attention():
    torch.manual_seed(0)
    return nn.MultiheadAttention(16, 4, batch_first=True).npu()


def _x():
    return torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(1)).npu()


@pytest.mark.parametrize("dtype", list(CHIPS), ids=["fp16-910", "bf16-910B"])
def test_self_attention_keeps_its_packed_projection(dtype, request, monkeypatch):
    request.getfixturevalue(CHIPS[dtype])
    if dtype == torch.bfloat16 and not hasattr(torch, "get_autocast_dtype"):
        pytest.skip("torch 1.x's autocast takes bf16 on the CPU and CUDA only")
    attention, x = _attention(), _x().requires_grad_()
    counter = _CountLinear(monkeypatch)
    with _region(dtype):
        out, weights = attention(x, x, x, need_weights=True)
    assert out.dtype == dtype and out.device == torch.device("npu:0")
    assert counter.calls == 2  # the packed in-projection, then the output projection
    out.float().sum().backward()
    got_grad = x.grad.clone()

    # Reference: each tensor cast once, by hand, the call made without autocast.
    x.grad = None
    xb = x.to(dtype).transpose(0, 1)  # one tensor for query, key and value, as the module
    b = attention
    ref, ref_weights = F.multi_head_attention_forward(
        xb,
        xb,
        xb,
        16,
        4,
        b.in_proj_weight.to(dtype),
        b.in_proj_bias.to(dtype),
        None,
        None,
        False,
        0.0,
        b.out_proj.weight.to(dtype),
        b.out_proj.bias.to(dtype),
        training=True,
        need_weights=True,
    )
    ref = ref.transpose(0, 1)
    assert torch.equal(out.cpu(), ref.cpu())
    assert torch.equal(weights.cpu(), ref_weights.cpu())
    ref.float().sum().backward()
    assert torch.equal(got_grad.cpu(), x.grad.cpu())


def test_an_operator_casts_each_argument(chip910):
    a = torch.randn(4, 4, generator=torch.Generator().manual_seed(2)).npu().requires_grad_()
    a = a * 1  # not a leaf: leaves (weights) come from the region's cache
    with _region(torch.float16):
        out = torch.mm(a, a)
    assert out.dtype == torch.float16
    casts = [node for node, _ in out.grad_fn.next_functions]
    assert len(casts) == 2 and casts[0] is not casts[1]
    assert all(type(node).__name__.startswith("ToCopyBackward") for node in casts)
