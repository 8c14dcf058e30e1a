"""``torch_npu.npu_masked_softmax_with_rel_pos_bias(x, atten_mask, relative_pos_bias,
scale_value=1.0, inner_precision_mode=0)``: the softmax of Swin Transformer's window attention,
``softmax(scale_value * x + atten_mask + relative_pos_bias)`` over the last dimension.

``x`` is ``(B, W, N, S1, S2)`` (batches, windows, heads) or ``(B * W, N, S1, S2)``; the mask,
optional, is per window, ``(W, S1, S2)``, ``(W, 1, S1, S2)`` or ``(1, W, 1, S1, S2)``; the bias
per head, ``(N, S1, S2)``, ``(1, N, S1, S2)`` or ``(1, 1, N, S1, S2)``; all of one dtype. The
sum and softmax are computed in fp32 and the result stored once in ``x``'s dtype, in ``x``'s
shape. ``inner_precision_mode`` is reserved (changes nothing). No gradient: torch_npu defines
none."""

from __future__ import annotations

from typing import Optional

import torch

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator

NAME = "npu_masked_softmax_with_rel_pos_bias"


@operator
def npu_masked_softmax_with_rel_pos_bias(
    x: torch.Tensor,
    atten_mask: Optional[torch.Tensor],
    relative_pos_bias: torch.Tensor,
    scale_value: float = 1.0,
    inner_precision_mode: int = 0,
) -> torch.Tensor:
    if x.dim() not in (4, 5):
        raise RuntimeError(f"{NAME}: x must be 4-D or 5-D, got {tuple(x.shape)}")
    for what, t in (("atten_mask", atten_mask), ("relative_pos_bias", relative_pos_bias)):
        if t is not None and t.dtype != x.dtype:
            raise RuntimeError(f"{NAME}: {what} is {t.dtype}, x {x.dtype}: they must agree")
    heads, s1, s2 = x.shape[-3:]
    if (
        relative_pos_bias.dim() not in (3, 4, 5)
        or tuple(relative_pos_bias.shape[-3:])
        != (
            heads,
            s1,
            s2,
        )
        or any(n != 1 for n in relative_pos_bias.shape[:-3])
    ):
        raise RuntimeError(
            f"{NAME}: relative_pos_bias must be ({heads}, {s1}, {s2}) with leading 1s, got "
            f"{tuple(relative_pos_bias.shape)}"
        )
    windows = 1
    if atten_mask is not None:
        m = atten_mask
        ok = (
            (m.dim() == 3)
            or (m.dim() == 4 and m.shape[1] == 1)
            or (m.dim() == 5 and m.shape[0] == 1 and m.shape[2] == 1)
        )
        if not ok or tuple(m.shape[-2:]) != (s1, s2):
            raise RuntimeError(
                f"{NAME}: atten_mask must be (W, {s1}, {s2}), (W, 1, {s1}, {s2}) or "
                f"(1, W, 1, {s1}, {s2}), got {tuple(m.shape)}"
            )
        windows = m.shape[0] if m.dim() in (3, 4) else m.shape[1]
    if x.dim() == 5:
        if atten_mask is not None and x.shape[1] != windows:
            raise RuntimeError(f"{NAME}: x has {x.shape[1]} windows, atten_mask {windows}")
    elif x.shape[0] % windows:
        raise RuntimeError(
            f"{NAME}: x's {x.shape[0]} batch windows are not a multiple of {windows}"
        )

    def compute(x, mask, bias):
        y = upcast(x).float() * float(scale_value)
        shape = y.shape
        y = y.reshape(-1, windows, heads, s1, s2)
        if mask is not None:
            y = y + upcast(mask).float().reshape(1, windows, 1, s1, s2)
        y = y + upcast(bias).float().reshape(1, 1, heads, s1, s2)
        return store(torch.softmax(y, -1).reshape(shape), x.dtype)

    return without_derivative(NAME, compute, x, atten_mask, relative_pos_bias)
