"""``torch._amp_foreach_non_finite_check_and_unscale_`` for NPU tensors, as the NPU's kernel does.

torch's GradScaler, and scripts written against it, unscale gradients and look for inf/NaN with
this operation. On the NPU it also reads the float status when the chip saturates (the 910: an
fp16 overflow leaves a finite 65504 behind, only the status knows), and looks at the values in
INF/NAN mode (the 910B). CPU torch 1.13 has no kernel for it at all; torch 2.x's CPU kernel
neither reads the status nor refuses gradients of two dtypes, which the NPU's does.
"""

from __future__ import annotations

from typing import Any, Callable, List, Sequence

import torch

from ..._device import placement
from ..._fp16 import float_status, overflow_mode

NAME = "_amp_foreach_non_finite_check_and_unscale_"


def _one_float(t: Any, what: str) -> None:
    if not isinstance(t, torch.Tensor) or t.numel() != 1 or t.dtype != torch.float32:
        raise RuntimeError(f"{NAME}: {what} must be a 1-element float32 tensor.")


def check_and_unscale(
    grads: Sequence[torch.Tensor], found_inf: torch.Tensor, inv_scale: torch.Tensor
) -> None:
    """Multiply ``grads`` by ``inv_scale`` in place; set ``found_inf`` to 1 when one of them held
    an inf or NaN, or (saturation mode) the float status records an overflow."""
    from .grad_scaler import unscale_in_place

    _one_float(found_inf, "found_inf")
    _one_float(inv_scale, "inv_scale")
    grads = list(grads)
    if grads:
        dtype, npu = grads[0].dtype, placement.npu_of(grads[0])
        for g in grads[1:]:
            if g.dtype != dtype:
                raise RuntimeError(
                    f"{NAME}: scaled_grads must have the same dtype (found {dtype} and {g.dtype})."
                )
            if placement.npu_of(g) != npu:
                raise RuntimeError(f"{NAME}: scaled_grads must be on the same device.")
    factor = float(inv_scale.item())
    found = False
    with torch.no_grad():
        for g in grads:
            found = unscale_in_place(g, factor) or found
    if not overflow_mode.inf_nan():
        found = float_status.get() or found
    if found:
        found_inf.fill_(1.0)


def _on_npu(tensors: List[Any]) -> bool:
    return any(isinstance(t, torch.Tensor) and placement.npu_of(t) is not None for t in tensors)


def _npu_aware(original: Callable) -> Callable:
    def call(grads, found_inf, inv_scale):
        if _on_npu(list(grads) + [found_inf]):
            return check_and_unscale(grads, found_inf, inv_scale)
        return original(grads, found_inf, inv_scale)

    call.__name__ = NAME
    call.__doc__ = check_and_unscale.__doc__
    call._apexnpu_original = original  # type: ignore[attr-defined]
    return call


def install() -> None:
    """Make ``torch._amp_foreach_non_finite_check_and_unscale_`` the NPU's for NPU tensors."""
    current = getattr(torch, NAME, None)
    if current is not None and not hasattr(current, "_apexnpu_original"):
        setattr(torch, NAME, _npu_aware(current))
