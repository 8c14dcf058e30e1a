"""``torch_npu.npu_silu(input)`` and ``npu_silu_(input)``: Swish, ``x * sigmoid(x)``, with its
gradient (``npu_silu_backward``); the in-place form writes into ``input``."""

from __future__ import annotations

import torch

from ._precision import store, store_into, upcast
from ._registry import operator


@operator
def npu_silu(input: torch.Tensor) -> torch.Tensor:
    x = upcast(input)
    return store(x * torch.sigmoid(x), input.dtype)


@operator
def npu_silu_(input: torch.Tensor) -> torch.Tensor:
    if input.requires_grad and torch.is_grad_enabled():
        # Through autograd (on a copy of the values the backward reads), as torch's in-place
        # activations are.
        return input.copy_(npu_silu(input.clone()))
    x = upcast(input)
    store_into(input, x * torch.sigmoid(x))
    return input
