"""The storage a tensor re-pointed by ``npu_change_data_ptr`` reports: its own.

On the NPU, ``npu_change_data_ptr(dst, src, index)`` moves the data pointer of ``dst``'s storage
to element ``index`` of ``src``'s memory; everything else of that storage stays, so
``dst.storage()`` still has ``dst``'s storage size, ``dst.storage_offset()`` is what it was, and
``src``'s storage is not touched. The emulated NPU cannot move a storage's pointer; it makes
``dst`` a view of ``src``'s storage instead, at ``index`` plus ``dst``'s offset (``repoint``), so
that ``src``'s memory lives as long as ``dst`` reads it. Seen from Python, ``dst`` then reports
what the NPU reports: ``storage()``/``untyped_storage()`` give a storage of ``dst``'s storage
size over ``src``'s memory from ``index`` (an alias, which keeps that memory alive), and
``storage_offset()`` its offset in that storage. The pair stays consistent, so
``torch.save``, ``copy.deepcopy`` and ``set_`` of what they report give ``dst``'s values.

A tensor whose sizes run past its own storage (its storage was shrunk with ``resize_`` before)
reads and writes past ``index`` plus its storage size on the NPU too, into the slack the NPU's
caching allocator leaves after ``src``; the emulated NPU grows ``src``'s backing memory to hold
it, and ``src`` keeps reporting its own storage as before. Storages reported before such a
growth must not be used after it.
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional, Tuple

import torch

_MARK = "_apexnpu_own_storage"  # (backing storage's address, start byte, bytes, offset shift)
_Base = torch._C._TensorBase
_NEW_API = hasattr(_Base, "untyped_storage")  # torch 2.x; torch 1.13 has _storage
_backing = _Base.untyped_storage if _NEW_API else _Base._storage
_base_offset = _Base.storage_offset


def _extent(tensor: torch.Tensor) -> int:
    """Elements from ``tensor``'s first one to one past its last, in its storage."""
    if tensor.numel() == 0:
        return 0
    return 1 + sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))


def _mark(tensor: torch.Tensor, start_element: int, size: int) -> None:
    """``tensor`` reports a storage of ``size`` elements from ``start_element`` of its backing
    storage (its offset counted from there)."""
    backing = _backing(tensor)
    size_of = tensor.element_size()
    tensor.__dict__[_MARK] = (
        backing._cdata,
        start_element * size_of,
        size * size_of,
        start_element,
    )


def _valid(tensor: torch.Tensor) -> Optional[Tuple[Any, int, int, int]]:
    """(backing storage, start byte, bytes, offset shift) while ``tensor`` is still where it was
    re-pointed (``set_`` or ``.data =`` since then put it elsewhere), else None."""
    mark = tensor.__dict__.get(_MARK)
    if mark is None:
        return None
    backing = _backing(tensor)
    cdata, start, nbytes, shift = mark
    if backing._cdata != cdata or _base_offset(tensor) < shift:
        del tensor.__dict__[_MARK]
        return None
    return backing, start, nbytes, shift


def repoint(dst: torch.Tensor, src: torch.Tensor, index: int, size: int) -> None:
    """``dst`` reads and writes ``src``'s memory from element ``index`` of ``src``'s storage on,
    reporting a storage of ``size`` elements there; ``dst`` keeps its identity."""
    backing = _backing(src)
    needed = (index + storage_offset(dst) + _extent(dst)) * dst.element_size()
    if needed > backing.nbytes() and _valid(src) is None:
        _mark(src, 0, backing.nbytes() // src.element_size())  # it grows; src reports as before
    offset = index + storage_offset(dst)
    source = backing if _NEW_API else torch.TypedStorage(wrap_storage=backing, dtype=src.dtype)
    with torch.no_grad():
        dst.data = src.new_empty(0).set_(source, offset, dst.size(), dst.stride())
    _mark(dst, index, size)


def _alias(backing: Any, start: int, nbytes: int) -> Any:
    """An untyped storage of ``nbytes`` over ``backing``'s memory from byte ``start``, holding
    ``backing`` alive."""
    if nbytes == 0:
        return torch.UntypedStorage(0)
    memory = (ctypes.c_char * nbytes).from_address(backing.data_ptr() + start)
    memory.backing = backing  # the alias keeps the memory it reads
    bytes_view = torch.frombuffer(memory, dtype=torch.uint8)
    return _backing(bytes_view)


def untyped_storage(tensor: torch.Tensor) -> Any:
    """The untyped storage ``tensor`` reports."""
    found = _valid(tensor)
    if found is None:
        return _backing(tensor)
    backing, start, nbytes, _ = found
    return _alias(backing, start, nbytes)


def typed_storage(tensor: torch.Tensor) -> Any:
    """``tensor.storage()``: its untyped storage typed with its dtype."""
    warn = getattr(torch.storage, "_warn_typed_storage_removal", None)
    if warn is not None:
        warn()
    if _NEW_API:
        return torch.TypedStorage(
            wrap_storage=untyped_storage(tensor), dtype=tensor.dtype, _internal=True
        )
    return torch.TypedStorage(wrap_storage=untyped_storage(tensor), dtype=tensor.dtype)


def storage_offset(tensor: torch.Tensor) -> int:
    """``tensor.storage_offset()`` in the storage it reports."""
    found = _valid(tensor)
    offset = _base_offset(tensor)
    return offset if found is None else offset - found[3]


def reports_own(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` reports a storage other than its backing one (tests, diagnostics)."""
    return _valid(tensor) is not None


def forget(tensor: torch.Tensor) -> None:
    """``tensor`` was given other data (``.data =``): it reports its backing storage again."""
    tensor.__dict__.pop(_MARK, None)
