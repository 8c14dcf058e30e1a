"""Named tensors (torch 1.x) on the emulated NPU.

torch 1.x hands every operation under a dispatch mode to Python through the TorchScript value
conversion, which refuses named tensors ("NYI: Named tensors are currently unsupported in
TorchScript"); so under the emulation's mode, ``torch.randn(2, 3, names=("N", "C"))``, and
``torch.max(x, "C")`` of a tensor given names, failed on the host and on the NPU, where torch_npu
runs them (Ascend's tests name the dimensions of NPU tensors and reduce over them). Named
tensors therefore run outside the emulation: a tensor that gets names (a maker's ``names=``,
``Tensor.names = ...``, ``rename``, ``rename_``, ``refine_names``) becomes a ``NamedTensor``, a
subclass whose operations run with the mode paused; their new outputs go to the NPU their
inputs are on, stay ``NamedTensor`` while they have names and are plain tensors again once they
have none. Their fp16 arithmetic is the host's, not the NPU's. torch 2.x has no named tensors
to speak of (2.13 removed the makers' ``names``); nothing is installed where ``Tensor.rename``
is missing.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Dict, Iterator, Optional, Tuple

import torch
from torch.utils._pytree import tree_flatten

from . import placement

_Base = torch._C._TensorBase


@contextlib.contextmanager
def _emulation_paused() -> Iterator[None]:
    """No dispatch mode (the emulation's) for the block."""
    try:
        from torch.utils._python_dispatch import _get_current_dispatch_mode, _pop_mode_temporarily
    except ImportError:  # pragma: no cover - torch without dispatch modes
        yield
        return
    if _get_current_dispatch_mode() is None:
        yield
        return
    with _pop_mode_temporarily():
        yield


def _has_names(tensor: torch.Tensor) -> bool:
    return any(name is not None for name in _Base.names.__get__(tensor))


def adopt(out: Any, npu: Optional[int] = None, given: Tuple[Any, ...] = ()) -> Any:
    """The tensors in ``out`` with names as ``NamedTensor``s, the others as plain tensors; new
    ones (not among ``given``) put on ``npu`` when it is an NPU."""
    given_ids = {id(x) for x in given}
    for x in tree_flatten(out)[0]:
        if not isinstance(x, torch.Tensor):
            continue
        if npu is not None and id(x) not in given_ids:
            placement.put(x, npu)
        if type(x) is torch.Tensor and _has_names(x):
            x.__class__ = NamedTensor
        elif type(x) is NamedTensor and not _has_names(x):
            x.__class__ = torch.Tensor
    return out


def _npu_among(leaves: Any) -> Optional[int]:
    for x in leaves:
        if isinstance(x, torch.Tensor):
            index = placement.npu_of(x)
            if index is not None:
                return index
    return None


class NamedTensor(torch.Tensor):
    """A tensor with named dimensions: its operations run outside the emulation."""

    @classmethod
    def __torch_function__(
        cls,
        func: Any,
        types: Any,
        args: Tuple[Any, ...] = (),
        kwargs: Optional[Dict[str, Any]] = None,
    ) -> Any:
        kwargs = kwargs or {}
        with torch._C.DisableTorchFunction(), _emulation_paused():
            out = func(*args, **kwargs)
        leaves = tree_flatten((args, kwargs))[0]
        return adopt(out, _npu_among(leaves), tuple(leaves))

    def __repr__(self, *args: Any, **kwargs: Any) -> str:
        """torch's own text ("tensor(..., names=...)"), not the subclass's name."""
        self.__class__ = torch.Tensor
        try:
            with _emulation_paused():
                return torch.Tensor.__repr__(self, *args, **kwargs)
        finally:
            self.__class__ = NamedTensor


def call(original: Callable, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    """A maker's call with ``names=``: outside the emulation, its result a ``NamedTensor``."""
    with _emulation_paused():
        out = original(*args, **kwargs)
    return adopt(out)


def _naming(method: Callable) -> Callable:
    @functools.wraps(method)
    def name(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        with _emulation_paused():
            out = method(self, *args, **kwargs)
        adopt(self)
        return adopt(out, placement.npu_of(self), (self,))

    return name


def _set_names(self: torch.Tensor, names: Any) -> None:
    _Base.names.__set__(self, names)
    adopt(self)


def install() -> None:
    if not hasattr(torch.Tensor, "rename") or getattr(torch.Tensor.rename, "_apexnpu", False):
        return
    for method in ("rename", "rename_", "refine_names"):
        wrapped = _naming(getattr(torch.Tensor, method))
        wrapped._apexnpu = True  # type: ignore[attr-defined]
        setattr(torch.Tensor, method, wrapped)
    torch.Tensor.names = property(_Base.names.__get__, _set_names, doc=_Base.names.__doc__)
