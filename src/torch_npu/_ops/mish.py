"""``torch_npu.npu_mish(input)``: Mish, ``x * tanh(softplus(x))``, with its gradient
(``npu_mish_backward(grad, input)``, ``grad * (tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2))``
with ``sp = softplus(x)``). YOLOv4's ports call it for their activations."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._precision import store, upcast
from ._registry import operator


def _mish(x: torch.Tensor) -> torch.Tensor:
    return x * torch.tanh(F.softplus(x))


@operator
def npu_mish(input: torch.Tensor) -> torch.Tensor:
    return store(_mish(upcast(input)), input.dtype)


@operator
def npu_mish_backward(grad: torch.Tensor, input: torch.Tensor) -> torch.Tensor:  # noqa: A002
    x, g = upcast(input), upcast(grad)
    tanh_sp = torch.tanh(F.softplus(x))
    return store(g * (tanh_sp + x * torch.sigmoid(x) * (1 - tanh_sp * tanh_sp)), grad.dtype)
