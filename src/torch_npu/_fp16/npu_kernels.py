"""Operations whose NPU kernels accept what CPU torch's refuse, for NPU tensors.

Scripts written on the NPU rely on these, so the emulator follows the NPU for NPU tensors (host
tensors keep CPU torch's rules):
- class-index targets and gather indices may be int32 (Ascend scripts cast targets with
  ``target.to(torch.int32)``); CPU torch wants int64, so they are widened, which gives the same
  values;
- binary_cross_entropy does not check that input and target lie in [0, 1]: it computes the
  formula (the log of a negative number is NaN). In range, torch's own kernel runs (same bits).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import torch

from . import saturation

aten = torch.ops.aten
Call = Tuple[Tuple[Any, ...], Dict[str, Any]]

_REDUCTIONS = {0: lambda t: t, 1: torch.mean, 2: torch.sum}  # none, mean, sum


def _widen_int32(args: Tuple[Any, ...], position: int) -> Tuple[Any, ...]:
    value = args[position] if len(args) > position else None
    if isinstance(value, torch.Tensor) and value.dtype == torch.int32:
        args = args[:position] + (value.long(),) + args[position + 1:]
    return args


def _in_unit_range(t: torch.Tensor) -> bool:
    return t.numel() == 0 or bool(((t >= 0) & (t <= 1)).all())


def _bce_formula(input: torch.Tensor, target: torch.Tensor, weight: Optional[torch.Tensor] = None,
                 reduction: int = 1) -> torch.Tensor:
    x, t = input.float(), target.float()
    loss = (t - 1) * torch.clamp(torch.log1p(-x), min=-100) \
        - t * torch.clamp(torch.log(x), min=-100)
    if weight is not None:
        loss = loss * weight.float()
    loss = _REDUCTIONS[reduction](loss)
    return saturation.to_fp16(loss) if input.dtype == torch.float16 else loss.to(input.dtype)


def _bce(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Optional[torch.Tensor]:
    input, target = args[0], args[1]
    if _in_unit_range(input) and _in_unit_range(target):
        return None
    return _bce_formula(*args, **kwargs)


# op -> position of an index argument that may be int32 on the NPU.
_INT32_INDICES: Dict[Any, int] = {
    aten.nll_loss_forward.default: 1, aten.nll_loss_backward.default: 2,
    aten.nll_loss2d_forward.default: 1, aten.nll_loss2d_backward.default: 2,
    aten.gather.default: 2,
}
# op -> the NPU's result when it differs from torch's (None: torch's own kernel).
_KERNELS: Dict[Any, Callable[[Tuple[Any, ...], Dict[str, Any]], Optional[Any]]] = {
    aten.binary_cross_entropy.default: _bce,
}
OPS = frozenset(_INT32_INDICES) | frozenset(_KERNELS)


def npu_call(op: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Call, Any]:
    """((args, kwargs) as the NPU's kernel takes them, the NPU's own result or None) for an op
    in OPS on NPU tensors. With None, the op runs as usual with the returned arguments."""
    position = _INT32_INDICES.get(op)
    if position is not None:
        args = _widen_int32(tuple(args), position)
    kernel = _KERNELS.get(op)
    return (tuple(args), kwargs), (kernel(tuple(args), kwargs) if kernel is not None else None)
