"""Operators torch_npu defines no gradient for (``npu_pad``, the box operators): their results
still join the autograd graph when an input requires grad, and a backward through them raises
torch's error for an operator without a derivative, as on the NPU."""

from __future__ import annotations

from typing import Any, Callable

import torch


class _NoDerivative(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, compute, *inputs):  # noqa: D102 - torch.autograd.Function protocol
        ctx.name = name
        return compute(*inputs)

    @staticmethod
    def backward(ctx, *grads):  # noqa: D102
        raise RuntimeError(f"the derivative for '{ctx.name}' is not implemented")


def without_derivative(name: str, compute: Callable[..., Any], *inputs: Any) -> Any:
    """``compute(*inputs)``, whose backward raises for operator ``name``."""
    return _NoDerivative.apply(name, compute, *inputs)
