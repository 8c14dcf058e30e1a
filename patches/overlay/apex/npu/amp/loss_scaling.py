"""Gradient unscaling with overflow detection, the loss scaler's device work.

An overflow is any inf/NaN met while unscaling, plus, on an NPU that saturates (Ascend 910), what
the float status records: fp16 results that saturated during forward and backward and so reach
the gradients finite. In INF/NAN mode (Ascend 910B) such results are inf/NaN and the values tell.
"""

from __future__ import annotations

from typing import Optional, Sequence

import torch

from .. import backend
from . import float_status


def runtime_dtype_code(rt, dtype: torch.dtype):
    """The runtime's dtype code for fp32/fp16, else None."""
    if dtype == torch.float32:
        return rt.DTYPE_FLOAT32
    if dtype == torch.float16:
        return rt.DTYPE_FLOAT16
    return None


def _has_non_finite(values: torch.Tensor) -> bool:
    return values.numel() > 0 and not bool(torch.isfinite(values).all())


@torch.no_grad()
def unscale_flat(
    grad: torch.Tensor,
    inv_scale: float,
    stash: Optional[torch.Tensor] = None,
    add: Optional[torch.Tensor] = None,
) -> bool:
    """``grad = (grad + add) * inv_scale + stash`` in place over a combined buffer.

    ``add`` (fp16 model gradients in the same layout) and ``stash`` (gradients accumulated before
    this backward pass, already unscaled) are optional. Returns whether an inf/NaN was met.
    """
    if add is not None:
        grad.add_(add)
    rt = backend.runtime_kernels()
    code = runtime_dtype_code(rt, grad.dtype) if rt is not None else None
    if code is not None and grad.is_contiguous():
        # One pass: multiply and detect inf/NaN.
        found = bool(rt.unscale(grad.data_ptr(), code, grad.numel(), float(inv_scale)))
    else:
        found = _has_non_finite(grad)
        if inv_scale != 1.0:
            grad.mul_(inv_scale)
    if stash is not None:
        grad.add_(stash)
    return found


@torch.no_grad()
def unscale_tensors(
    model_grads: Sequence[torch.Tensor],
    master_grads: Sequence[torch.Tensor],
    inv_scale: float,
    stashed: Optional[Sequence[torch.Tensor]] = None,
) -> bool:
    """``master = model * inv_scale (+ stashed)`` for separate tensors; returns whether an inf/NaN
    was met in the model gradients."""
    found = False
    for i, (model, master) in enumerate(zip(model_grads, master_grads)):
        found = _has_non_finite(model) or found
        if stashed is not None:
            # The stash may be ``master`` itself: compute aside, then write in place.
            master.copy_(model.to(master.dtype) * inv_scale + stashed[i].to(master.dtype))
            continue
        if master is not model:
            master.copy_(model)
        if inv_scale != 1.0:
            master.mul_(inv_scale)
    return found


def agree_across_ranks(overflow: bool) -> bool:
    """Whether any rank of torch.distributed's default group overflowed (every rank must call
    this together). The float status is each process's own: an fp16 gradient that saturated on
    one rank arrives on the others finite after the all-reduce, so without agreement one rank
    would skip a step that the others take, and the replicas would drift apart silently."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return overflow
    # On the current NPU (HCCL sends device tensors), in a dtype HCCL carries.
    flag = torch.tensor([1 if overflow else 0], dtype=torch.int32, device=backend.device_type())
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return bool(flag.item())


def take_overflow() -> bool:
    """Whether the float status records an overflow since the last call (it is cleared); always
    False in INF/NAN mode, where the gradients' values tell."""
    if backend.inf_nan_mode():
        return False
    return float_status.clear()
