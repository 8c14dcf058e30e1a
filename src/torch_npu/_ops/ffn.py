"""``torch_npu.npu_ffn(x, weight1, weight2, activation, *, expert_tokens=None, ..., bias1=None,
bias2=None, ..., inner_precise=None, output_dtype=None)``: the feed-forward block
``activation(x W1 + b1) W2 + b2`` over the last dimension of ``x`` (``W1`` ``[K1, N1]``, ``W2``
``[K2, N2]``); with ``expert_tokens`` (token counts per expert, summing to the rows of ``x``)
the rows go in order to the experts' ``weight1[e]`` ``[E, K1, N1]``, ``weight2[e]`` and biases
(MoE FFN). Activations ``relu``, ``silu``, ``fastgelu`` (``x * sigmoid(1.702 x)``, torch_npu's
fast_gelu) and ``gelu`` (CANN's Gelu, the tanh form). Computed in fp32 (the kernel's
high-precision mode), stored once in ``x``'s dtype. Not emulated, and refused naming themselves:
the int8 quantisation and antiquantisation parameters, ``expert_tokens_index`` and the gated
activations (geglu, swiglu, reglu: the documentation does not say which half is gated).
torch_npu documents it for inference: no backward."""

from __future__ import annotations

from typing import List, Optional

import torch
import torch.nn.functional as F

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator

_ACTIVATIONS = {
    "relu": F.relu,
    "silu": F.silu,
    "fastgelu": lambda h: h * torch.sigmoid(1.702 * h),
    "gelu": lambda h: F.gelu(h, approximate="tanh"),
}


@operator
def npu_ffn(
    x: torch.Tensor,
    weight1: torch.Tensor,
    weight2: torch.Tensor,
    activation: str,
    *,
    expert_tokens: Optional[List[int]] = None,
    expert_tokens_index: Optional[List[int]] = None,
    bias1: Optional[torch.Tensor] = None,
    bias2: Optional[torch.Tensor] = None,
    scale: Optional[torch.Tensor] = None,
    offset: Optional[torch.Tensor] = None,
    deq_scale1: Optional[torch.Tensor] = None,
    deq_scale2: Optional[torch.Tensor] = None,
    antiquant_scale1: Optional[torch.Tensor] = None,
    antiquant_scale2: Optional[torch.Tensor] = None,
    antiquant_offset1: Optional[torch.Tensor] = None,
    antiquant_offset2: Optional[torch.Tensor] = None,
    inner_precise: Optional[int] = None,
    output_dtype: Optional[torch.dtype] = None,
) -> torch.Tensor:
    name = "npu_ffn"
    quant = {
        "scale": scale,
        "offset": offset,
        "deq_scale1": deq_scale1,
        "deq_scale2": deq_scale2,
        "antiquant_scale1": antiquant_scale1,
        "antiquant_scale2": antiquant_scale2,
        "antiquant_offset1": antiquant_offset1,
        "antiquant_offset2": antiquant_offset2,
        "expert_tokens_index": expert_tokens_index,
    }
    given = sorted(k for k, v in quant.items() if v is not None)
    if given:
        raise RuntimeError(f"{name}: {', '.join(given)} (quantised inference) not emulated")
    if activation not in _ACTIVATIONS:
        raise RuntimeError(
            f"{name}: activation {activation!r} not emulated; {sorted(_ACTIVATIONS)} are"
        )
    if x.dtype not in (torch.float16, torch.bfloat16, torch.float32) or x.dim() < 2:
        raise RuntimeError(
            f"{name}: x must be a float tensor of 2 or more dimensions, got "
            f"{x.dtype} {tuple(x.shape)}"
        )
    experts = weight1.dim() == 3
    if (
        (weight2.dim() != weight1.dim())
        or weight1.dim() not in (2, 3)
        or weight1.shape[-2] != x.shape[-1]
        or weight2.shape[-2] != weight1.shape[-1]
        or (experts and weight1.shape[0] != weight2.shape[0])
    ):
        raise RuntimeError(
            f"{name}: weight1 [(E,) K1, N1] and weight2 [(E,) N1, N2] must chain "
            f"from x's last dimension {x.shape[-1]}, got {tuple(weight1.shape)} "
            f"and {tuple(weight2.shape)}"
        )
    rows = x.reshape(-1, x.shape[-1])
    if experts:
        counts = [int(c) for c in (expert_tokens or [])]
        if len(counts) != weight1.shape[0] or sum(counts) != rows.shape[0] or min(counts) < 0:
            raise RuntimeError(
                f"{name}: expert_tokens must give {weight1.shape[0]} counts "
                f"summing to the {rows.shape[0]} tokens, got {expert_tokens}"
            )
    elif expert_tokens is not None:
        raise RuntimeError(f"{name}: expert_tokens needs weights with an expert dimension")
    act = _ACTIVATIONS[activation]

    def block(v, e):
        w1 = upcast(weight1[e] if experts else weight1).float()
        w2 = upcast(weight2[e] if experts else weight2).float()
        h = v @ w1
        if bias1 is not None:
            h = h + upcast(bias1[e] if experts else bias1).float()
        h = act(h) @ w2
        if bias2 is not None:
            h = h + upcast(bias2[e] if experts else bias2).float()
        return h

    def compute(x_rows):
        v = upcast(x_rows).float()
        if not experts:
            out = block(v, None)
        else:
            parts, start = [], 0
            for e, count in enumerate(counts):
                parts.append(block(v[start : start + count], e))
                start += count
            out = torch.cat(parts)
        return store(out.reshape(x.shape[:-1] + (out.shape[-1],)), x.dtype)

    return without_derivative(name, compute, rows)
