"""While gradients are fused, ``Module.zero_grad`` must keep their memory: ``set_to_none=True``
would drop gradient tensors that are views of the combined buffers, and the next backward would
allocate new ones outside them, silently undoing the fusion."""

from __future__ import annotations

import torch

_fusion_active = [False]


def fusion_active() -> bool:
    """Whether some gradients live in combined buffers."""
    return _fusion_active[0]


def keep_grad_memory() -> None:
    """Mark fusion active and force ``Module.zero_grad(set_to_none=False)`` from now on."""
    _fusion_active[0] = True
    if getattr(torch.nn.Module.zero_grad, "_apexnpu_keeps_grad_memory", False):
        return
    original = torch.nn.Module.zero_grad

    def zero_grad(self, set_to_none: bool = False) -> None:
        return original(self, set_to_none=False if fusion_active() else set_to_none)

    zero_grad._apexnpu_keeps_grad_memory = True  # type: ignore[attr-defined]
    zero_grad.__wrapped__ = original  # type: ignore[attr-defined]
    zero_grad.__doc__ = original.__doc__
    torch.nn.Module.zero_grad = zero_grad
