"""Operations whose NPU kernels behave differently from CPU torch's, for NPU tensors.

CPU torch checks that binary_cross_entropy's input and target lie in [0, 1]; the NPU's kernel
does not, and computes the formula (log of a negative number gives NaN). Scripts and tests
written on the NPU rely on that, so NPU tensors get the formula when a value is out of range and
torch's own kernel (the same bits) otherwise.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import torch

from . import saturation

_REDUCTIONS = {0: lambda t: t, 1: torch.mean, 2: torch.sum}  # none, mean, sum


def _in_unit_range(t: torch.Tensor) -> bool:
    return t.numel() == 0 or bool(((t >= 0) & (t <= 1)).all())


def binary_cross_entropy(op: Any, input: torch.Tensor, target: torch.Tensor,
                         weight: Optional[torch.Tensor] = None, reduction: int = 1) -> torch.Tensor:
    if _in_unit_range(input) and _in_unit_range(target):
        return op(input, target, weight, reduction)
    x, t = input.float(), target.float()
    loss = (t - 1) * torch.clamp(torch.log1p(-x), min=-100) \
        - t * torch.clamp(torch.log(x), min=-100)
    if weight is not None:
        loss = loss * weight.float()
    loss = _REDUCTIONS[reduction](loss)
    return saturation.to_fp16(loss) if input.dtype == torch.float16 else loss.to(input.dtype)


KERNELS: Dict[Any, Callable[..., Any]] = {
    torch.ops.aten.binary_cross_entropy.default: binary_cross_entropy,
}
