"""LazyModules' uninitialized parameters and buffers on the NPU.

torch makes them in ``__new__`` with ``Tensor._make_subclass`` (a new tensor object, without the
NPU mark of the empty tensor it wraps), refuses every function not on its own list (the
emulator's ``Tensor.to``, ``cpu`` and ``npu`` replace torch's, so they are not on it), and turns
the results of the functions it allows (``half()``, ``float()`` ...) into new objects with
``as_subclass``. Here they stay on the NPU they were made on or moved to, so ``materialize``,
which allocates on ``self.data.device``, gives an NPU parameter, as on torch_npu:
``nn.LazyLinear(4).npu()`` or ``nn.LazyLinear(4, device="npu")``, then a forward.
"""

from __future__ import annotations

import contextlib
from typing import Any, Optional

import torch
from torch.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

from . import placement

try:  # torch >= 1.9
    from torch.nn.parameter import UninitializedTensorMixin
except ImportError:  # pragma: no cover
    UninitializedTensorMixin = None  # type: ignore[assignment,misc]

__all__ = ["is_lazy", "as_plain", "converted", "data_of", "install"]


def as_plain(tensor: torch.Tensor) -> Any:
    """A context in which ``tensor``, when uninitialized, is read as a plain tensor (torch
    functions off), so the emulator's bookkeeping may look at its memory (none yet, or what
    ``materialize`` just gave it), which torch would refuse."""
    return torch._C.DisableTorchFunction() if is_lazy(tensor) else contextlib.nullcontext()


def _made(cls: type, requires_grad: bool, device: Any = None, dtype: Any = None) -> torch.Tensor:
    """An uninitialized tensor of ``cls`` as torch's ``__new__`` makes it, on the device the
    empty tensor it wraps was made on (the emulator's factories put it on the NPU)."""
    data = torch.empty(0, device=device, dtype=dtype)
    lazy = torch.Tensor._make_subclass(cls, data, requires_grad)
    with as_plain(lazy):
        return placement.put(lazy, placement.npu_of(data))


def _parameter_new(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None):
    return _made(cls, requires_grad, device, dtype)


def _buffer_new(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None):
    return _made(cls, requires_grad, device, dtype)


def converted(lazy: torch.Tensor, device: Any, dtype: Optional[torch.dtype]) -> torch.Tensor:
    """``lazy`` moved to ``device`` (a torch.device of the NPU or the host) with ``dtype`` (None:
    its own): a new uninitialized tensor of its class, as torch's ``to`` gives one."""
    return _made(type(lazy), lazy.requires_grad, device, dtype if dtype is not None else lazy.dtype)


def data_of(lazy: torch.Tensor, base_data: Any) -> torch.Tensor:
    """``lazy.data`` (``base_data``: torch's own property): a detached uninitialized tensor of
    its class on its device, as torch gives it, the emulator's ``data`` property not called
    twice on the way."""
    with torch._C.DisableTorchFunction():
        data = base_data.__get__(lazy)
        data = torch.Tensor._make_subclass(type(lazy), data, False)
        return placement.put(data, placement.npu_of(lazy))


def _keeping_the_npu(base: Any) -> Any:
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = base(cls, func, types, args, kwargs)
        # The functions torch allows on them keep the device (the moves are the emulator's):
        # the new object it made of the result is on the NPU its input is on.
        if is_lazy(out) and args and is_lazy(args[0]) and out is not args[0]:
            with as_plain(out):
                placement.put(out, placement.npu_of(args[0]))
        return out

    return classmethod(__torch_function__)


def install() -> None:
    if UninitializedTensorMixin is None or getattr(UninitializedParameter, "_apexnpu", False):
        return
    UninitializedParameter.__new__ = staticmethod(_parameter_new)  # type: ignore[assignment]
    UninitializedBuffer.__new__ = staticmethod(_buffer_new)  # type: ignore[assignment]
    base = UninitializedTensorMixin.__torch_function__.__func__
    UninitializedTensorMixin.__torch_function__ = _keeping_the_npu(base)  # type: ignore
    UninitializedParameter._apexnpu = True
