"""``torch_npu.npu_gelu(input, *, approximate='none')``: GELU with erf (``'none'``) or its tanh
approximation (``'tanh'``), with its gradient (``npu_gelu_backward``)."""

from __future__ import annotations

import math

import torch

from ._precision import store, upcast
from ._registry import operator

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


@operator
def npu_gelu(input: torch.Tensor, *, approximate: str = "none") -> torch.Tensor:
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"npu_gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    x = upcast(input)
    if approximate == "none":
        out = 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
    else:
        out = 0.5 * x * (1.0 + torch.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
    return store(out, input.dtype)
