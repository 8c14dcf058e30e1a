"""``torch_npu.npu_gelu_mul(input, *, approximate='none')``: ``gelu(x1) * x2`` of the halves
``x1``, ``x2`` of the last dimension (GELU by erf, or ``'tanh'``), computed in fp32 and stored
once in the input's dtype. torch_npu registers no backward: torch's autograd fallback
decides (see _no_derivative)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator


@operator
def npu_gelu_mul(input: torch.Tensor, *, approximate: str = "none") -> torch.Tensor:
    if approximate not in ("none", "tanh"):
        raise RuntimeError(
            f"npu_gelu_mul: approximate must be 'none' or 'tanh', got {approximate!r}"
        )
    if input.dim() < 2 or input.shape[-1] % 2:
        raise RuntimeError(
            f"npu_gelu_mul: input needs 2 or more dimensions and an even last "
            f"one, got shape {tuple(input.shape)}"
        )

    def compute(input):
        x1, x2 = torch.chunk(upcast(input).float(), 2, dim=-1)
        return store(F.gelu(x1, approximate=approximate) * x2, input.dtype)

    return without_derivative("npu_gelu_mul", compute, input)
