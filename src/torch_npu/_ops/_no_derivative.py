"""Operators torch_npu defines no gradient for (``npu_pad``, the box operators, ...): op-plugin's
derivatives.yaml has no entry for them, so on the NPU they have no autograd kernel and torch's
autograd fallback for the NPU's key handles them. The emulator follows that fallback:

- torch 2.x in its default mode ``"warn"`` (``torch._C._get_autograd_fallback_mode()``): the
  results join the graph when an input requires grad, and a backward through them warns, in
  torch's words, and gives their inputs no gradient (None);
- mode ``"nothing"``, and torch 1.x (whose fallback lets the call fall through): the results
  do not require grad, so a backward from them fails as from any constant.

Huawei's own test (test/autograd/test_autograd_fallback.py) checks both modes with npu_pad.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Set

import torch

# torch's warning (autograd_not_implemented_fallback.cpp), for the operator named first.
_WARNING = (
    "{}: an autograd kernel was not registered to the Autograd key(s) but we are trying to "
    "backprop through it. This may lead to silently incorrect behavior. This behavior is "
    "deprecated and will be removed in a future version of PyTorch. If your operator is "
    "differentiable, please ensure you have registered an autograd kernel to the correct "
    "Autograd key (e.g. DispatchKey::Autograd, DispatchKey::CompositeImplicitAutograd). If "
    "your operator is not differentiable, or to squash this warning and use the previous "
    "behavior, please register torch::CppFunction::makeFallthrough() to DispatchKey::Autograd."
)


def fallback_mode() -> str:
    """torch's autograd fallback mode: "warn" or "nothing" (torch 1.x: falls through)."""
    get = getattr(torch._C, "_get_autograd_fallback_mode", None)
    return get() if get is not None else "nothing"


class _WarnNotImplemented(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, compute, *inputs):  # noqa: D102 - torch.autograd.Function protocol
        ctx.name = name
        ctx.count = len(inputs)
        return compute(*inputs)

    @staticmethod
    def backward(ctx, *grads):  # noqa: D102
        warnings.warn(_WARNING.format(f"npu::{ctx.name}"), UserWarning, stacklevel=2)
        return (None, None) + (None,) * ctx.count


def without_derivative(name: str, compute: Callable[..., Any], *inputs: Any) -> Any:
    """``compute(*inputs)`` for operator ``name``, as torch's autograd fallback leaves it."""
    if fallback_mode() == "warn":
        return _WarnNotImplemented.apply(name, compute, *inputs)
    with torch.no_grad():
        out = compute(*inputs)
    # A view made under no_grad still requires grad; the kernel's result is a tensor of its own
    # (an input written in place and returned stays that input).
    given = {id(x) for x in inputs if isinstance(x, torch.Tensor)}
    return _outside_graph(out, given)


def _outside_graph(out: Any, given: Set[int]) -> Any:
    if isinstance(out, torch.Tensor):
        return out.detach() if out.requires_grad and id(out) not in given else out
    if isinstance(out, (list, tuple)):
        items = [_outside_graph(x, given) for x in out]
        return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
    return out
