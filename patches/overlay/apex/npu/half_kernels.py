"""fp16 operations the runtime computes in one pass over fp16 memory, for the fast path.

Each gives exactly what the general path gives: the same fp16 bits, the same float status, a
new contiguous fp16 tensor (or the written input, for in-place ops). They apply only where that
is plain to see: contiguous fp16 tensors of one shape and the arguments below; anything else
returns ``NOT_HANDLED`` and takes the fp32 round trip.
- ``relu`` / ``relu_``: torch's fp32 ``max(x, 0)`` on exact values, stored saturating.
- ``threshold_backward(grad, self, 0)`` (relu's backward): ``self <= 0 ? 0 : grad``, stored
  saturating.
The runtime raises the float status of device 0, as its ``float_to_half`` does for the general
path.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence

import torch

aten = torch.ops.aten
NOT_HANDLED = object()
_HALF = torch.float16
_empty = torch._C._VariableFunctions.empty
_is_cpu = torch._C._TensorBase.is_cpu.__get__


def _plain_half(x: Any) -> bool:
    """A contiguous, non-empty fp16 host tensor, read as one flat range."""
    return (isinstance(x, torch.Tensor) and x.dtype == _HALF and x.layout == torch.strided
            and _is_cpu(x) and x.numel() > 0 and x.is_contiguous())


def _relu(rt: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    (x,) = args
    if kwargs or not _plain_half(x):
        return NOT_HANDLED
    out = _empty(x.shape, dtype=_HALF)
    rt.relu_half(x.data_ptr(), out.data_ptr(), x.numel())
    return out


def _relu_(rt: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    (x,) = args
    if kwargs or not _plain_half(x):
        return NOT_HANDLED
    rt.relu_half(x.data_ptr(), x.data_ptr(), x.numel())
    return x


def _relu_backward(rt: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    if kwargs or len(args) != 3:
        return NOT_HANDLED
    grad, self, threshold = args
    if type(threshold) not in (int, float) or threshold != 0 or not _plain_half(grad) \
            or not _plain_half(self) or grad.shape != self.shape:
        return NOT_HANDLED
    out = _empty(grad.shape, dtype=_HALF)
    rt.relu_backward_half(grad.data_ptr(), self.data_ptr(), out.data_ptr(), grad.numel())
    return out


_KERNELS: Dict[Any, Callable[[Any, Sequence[Any], Dict[str, Any]], Any]] = {
    aten.relu.default: _relu,
    aten.relu_.default: _relu_,
    aten.threshold_backward.default: _relu_backward,
}


def run(func: Any, args: Sequence[Any], kwargs: Dict[str, Any], rt: Optional[Any]) -> Any:
    """The op's result computed by the runtime, or NOT_HANDLED."""
    kernel = _KERNELS.get(func)
    if kernel is None or rt is None or not hasattr(rt, "relu_half"):
        return NOT_HANDLED
    return kernel(rt, args, kwargs)
