"""``torch_npu.npu_scaled_masked_softmax(x, mask, scale=1, fixed_triu_mask=False)``: softmax
over the last dimension of ``x * scale`` where the elements ``mask`` marks (True) are replaced
by -10000 (Megatron's fused kernel's value), computed in fp32. ``mask`` broadcasts to ``x``.
With ``fixed_triu_mask`` (reserved in torch_npu) the mask is the upper triangle of the last two
dimensions (causal). Backward: the softmax gradient times ``scale``
(``npu_scaled_masked_softmax_backward``)."""

from __future__ import annotations

import torch

from ._precision import store, upcast
from ._registry import operator

MASKED_VALUE = -10000.0


@operator
def npu_scaled_masked_softmax(
    x: torch.Tensor, mask: torch.Tensor, scale: float = 1, fixed_triu_mask: bool = False
) -> torch.Tensor:
    scores = upcast(x) * float(scale)
    if fixed_triu_mask:
        rows, cols = x.shape[-2], x.shape[-1]
        mask = torch.ones(rows, cols, dtype=torch.bool, device=x.device).triu(1)
    scores = scores.masked_fill(mask.to(torch.bool), MASKED_VALUE)
    return store(torch.softmax(scores, dim=-1), x.dtype)
