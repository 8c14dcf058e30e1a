"""``torch.npu.enable_deterministic_with_backward`` and ``disable_deterministic_with_backward``.

Each passes its tensor through unchanged and switches torch's deterministic algorithms where
the tensor passes, in the forward pass and, reversed, where its gradient passes back: the
region between an ``enable`` and a ``disable`` (or the rest of the forward after one) runs
deterministically in both directions, as torch_npu's identity operators arrange.
"""

from __future__ import annotations

import torch

__all__ = ["enable_deterministic_with_backward", "disable_deterministic_with_backward"]


class _Switch(torch.autograd.Function):
    """Identity; deterministic algorithms set to ``on`` going forward, ``not on`` going back
    (the gradient leaves the region the forward entered)."""

    @staticmethod
    def forward(ctx, tensor: torch.Tensor, on: bool) -> torch.Tensor:  # type: ignore[override]
        ctx.on = on
        torch.use_deterministic_algorithms(on)
        return tensor.view_as(tensor)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        torch.use_deterministic_algorithms(not ctx.on)
        return grad, None


def enable_deterministic_with_backward(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor``, with deterministic algorithms on from here in the forward pass and off again
    once its gradient has passed back through here."""
    return _Switch.apply(tensor, True)


def disable_deterministic_with_backward(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor``, with deterministic algorithms off from here in the forward pass and on
    again once its gradient has passed back through here."""
    return _Switch.apply(tensor, False)
