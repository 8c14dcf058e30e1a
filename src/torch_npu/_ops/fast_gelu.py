"""``torch_npu.fast_gelu(input)`` and ``torch_npu.npu_fast_gelu(input)``: the NPU's FastGelu,
``x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|))``, which is ``x * sigmoid(1.702 x)``, with
the gradient of that formula (``npu_fast_gelu_backward``)."""

from __future__ import annotations

import torch

from ._precision import store, upcast
from ._registry import operator

_ALPHA = 1.702


@operator
def npu_fast_gelu(input: torch.Tensor) -> torch.Tensor:
    x = upcast(input)
    return store(x * torch.sigmoid(_ALPHA * x), input.dtype)


@operator
def fast_gelu(input: torch.Tensor) -> torch.Tensor:
    return npu_fast_gelu(input)
