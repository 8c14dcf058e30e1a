"""``torch_npu.npu_silu(self)`` and ``npu_silu_(self)``: Swish, ``x * sigmoid(x)``, with its
gradient (``npu_silu_backward``); the in-place form writes into ``self``."""
from __future__ import annotations

import torch

from ._precision import store, store_into, upcast


def npu_silu(self: torch.Tensor) -> torch.Tensor:
    x = upcast(self)
    return store(x * torch.sigmoid(x), self.dtype)


def npu_silu_(self: torch.Tensor) -> torch.Tensor:
    if self.requires_grad and torch.is_grad_enabled():
        # Through autograd (on a copy of the values the backward reads), as torch's in-place
        # activations are.
        return self.copy_(npu_silu(self.clone()))
    x = upcast(self)
    store_into(self, x * torch.sigmoid(x))
    return self
