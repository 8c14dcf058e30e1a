"""Operations whose NPU kernels accept what CPU torch's refuse, for NPU tensors.

Scripts written on the NPU rely on these, so the emulator follows the NPU for NPU tensors (host
tensors keep CPU torch's rules):
- class-index targets (``nll_loss``'s, ``multilabel_margin_loss``'s) and the indices of
  gather, the scatter family and advanced indexing (``x[index]``, ``x[index] = v``) may be
  int32 (Ascend scripts cast targets with
  ``target.to(torch.int32)``, fairseq-style data loaders make ``IntTensor`` batches); CPU torch
  wants int64 (torch 1.x everywhere, torch 2.x for class targets), so they are widened, which
  gives the same values on both torches;
- binary_cross_entropy does not check that input and target lie in [0, 1]: it computes the
  formula (the log of a negative number is NaN). In range, torch's own kernel runs (same bits);
- clamp with number bounds keeps an integer tensor's dtype: the NPU's kernel takes the bounds
  in the tensor's dtype (a float bound is truncated toward zero, as C++ converts it), so
  ``int64_tensor.clamp_(0, gain - 1)`` with a float ``gain`` works in place and ``clamp``
  returns int64 (CPU torch promotes to float, and refuses the in-place form). A bound beyond
  the dtype's range, inf or NaN is an error naming it;
- ``max()`` of a sparse COO tensor gives its largest element, as a dense 0-dim tensor (CPU
  torch has no sparse kernel for it).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Optional, Tuple

import torch

from . import saturation

aten = torch.ops.aten
Call = Tuple[Tuple[Any, ...], Dict[str, Any]]

_REDUCTIONS = {0: lambda t: t, 1: torch.mean, 2: torch.sum}  # none, mean, sum


def _widened(value: Any) -> Any:
    """An int32 index tensor as int64 (the same values); a list of indices (``x[i, j]``'s)
    element by element; anything else as it is."""
    if isinstance(value, torch.Tensor) and value.dtype == torch.int32:
        return value.long()
    if isinstance(value, (list, tuple)) and any(
        isinstance(v, torch.Tensor) and v.dtype == torch.int32 for v in value
    ):
        return type(value)(_widened(v) for v in value)
    return value


def _widen_int32(args: Tuple[Any, ...], position: int) -> Tuple[Any, ...]:
    if len(args) > position:
        args = args[:position] + (_widened(args[position]),) + args[position + 1 :]
    return args


def _in_unit_range(t: torch.Tensor) -> bool:
    return t.numel() == 0 or bool(((t >= 0) & (t <= 1)).all())


def _bce_formula(
    input: torch.Tensor,
    target: torch.Tensor,
    weight: Optional[torch.Tensor] = None,
    reduction: int = 1,
) -> torch.Tensor:
    x, t = input.float(), target.float()
    loss = (t - 1) * torch.clamp(torch.log1p(-x), min=-100) - t * torch.clamp(
        torch.log(x), min=-100
    )
    if weight is not None:
        loss = loss * weight.float()
    loss = _REDUCTIONS[reduction](loss)
    return saturation.to_fp16(loss) if input.dtype == torch.float16 else loss.to(input.dtype)


def _bce(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Optional[torch.Tensor]:
    input, target = args[0], args[1]
    if _in_unit_range(input) and _in_unit_range(target):
        return None
    return _bce_formula(*args, **kwargs)


_CLAMPS = ("clamp", "clamp_", "clamp_min", "clamp_min_", "clamp_max", "clamp_max_")


def _bound_in_dtype(op: Any, bound: Any, dtype: torch.dtype) -> Any:
    """A number bound of an integer clamp, converted to ``dtype`` as the NPU's kernel takes
    it."""
    if not isinstance(bound, float):
        return bound
    info = torch.iinfo(dtype)
    if not math.isfinite(bound) or not info.min <= math.trunc(bound) <= info.max:
        raise RuntimeError(
            f"{op}: the bound {bound} cannot be converted to {dtype} without "
            f"overflow (the NPU takes a clamp's bounds in the tensor's dtype, "
            f"[{info.min}, {info.max}])"
        )
    return math.trunc(bound)


def _integer_clamp(op: Any, args: Tuple[Any, ...]) -> Tuple[Any, ...]:
    self = args[0]
    if self.is_floating_point() or self.is_complex() or self.dtype == torch.bool:
        return args
    return (self,) + tuple(_bound_in_dtype(op, b, self.dtype) for b in args[1:])


# op -> position of an index argument that may be int32 on the NPU.
_INT32_INDICES: Dict[Any, int] = {
    aten.nll_loss_forward.default: 1,
    aten.nll_loss_backward.default: 2,
    aten.nll_loss2d_forward.default: 1,
    aten.nll_loss2d_backward.default: 2,
    # multi-label targets: class indices, padded with -1 after the last label
    aten.multilabel_margin_loss_forward.default: 1,
    aten.multilabel_margin_loss_backward.default: 2,
    aten.gather.default: 2,
    # the scatter family (gather's backward is a scatter_add with gather's index)
    **{getattr(aten, name).default: 2 for name in ("scatter_add", "scatter_add_")},
    **{
        getattr(getattr(aten, op), overload): 2
        for op in ("scatter", "scatter_")
        for overload in ("src", "value", "reduce", "value_reduce")
    },
    aten.scatter_reduce.two: 2,
    aten.scatter_reduce_.two: 2,
    # advanced indexing, ``x[index]`` and ``x[index] = v``: a list of optional index tensors
    aten.index.Tensor: 1,
    aten.index_put.default: 1,
    aten.index_put_.default: 1,
    aten._index_put_impl_.default: 1,
}


def _sparse_max(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Optional[torch.Tensor]:
    """The largest element of a sparse COO tensor, the zeros it does not store included; CPU
    torch has no such kernel."""
    self = args[0]
    if self.layout != torch.sparse_coo:
        return None
    if self.numel() == 0:
        return self.to_dense().max()  # torch's error for an empty reduction
    values = self.coalesce()._values()
    if values.numel() == 0:
        return torch.zeros((), dtype=self.dtype)
    top = values.max()
    if values.numel() < self.numel():  # unstored elements are zeros
        top = torch.maximum(top, torch.zeros((), dtype=self.dtype))
    return top


# op -> the NPU's result when it differs from torch's (None: torch's own kernel).
_KERNELS: Dict[Any, Callable[[Tuple[Any, ...], Dict[str, Any]], Optional[Any]]] = {
    aten.binary_cross_entropy.default: _bce,
    aten.max.default: _sparse_max,
}
# clamp's number overloads: their bounds are taken in the tensor's dtype.
_INTEGER_CLAMPS = frozenset(getattr(aten, name).default for name in _CLAMPS)
OPS = frozenset(_INT32_INDICES) | frozenset(_KERNELS) | _INTEGER_CLAMPS


def npu_call(op: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Call, Any]:
    """((args, kwargs) as the NPU's kernel takes them, the NPU's own result or None) for an op
    in OPS on NPU tensors. With None, the op runs as usual with the returned arguments."""
    position = _INT32_INDICES.get(op)
    if position is not None:
        args = _widen_int32(tuple(args), position)
    if op in _INTEGER_CLAMPS:
        args = _integer_clamp(op, tuple(args))
    kernel = _KERNELS.get(op)
    return (tuple(args), kwargs), (kernel(tuple(args), kwargs) if kernel is not None else None)
