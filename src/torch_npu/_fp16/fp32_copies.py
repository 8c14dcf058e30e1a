"""fp32 copies of fp16 and bf16 tensors, as ``x.to(torch.float32)`` makes them, in one runtime
pass.

torch's own conversion and the runtime's ``half_to_float`` give the same bits for every fp16
value (exact; NaNs quieted with their payload kept), and ``bf16_to_float`` for every bf16 value
(exact: the bf16 bits are the float's top half, NaNs kept as they are), so the copy differs
only in speed. Its
layout is the one ``_to_copy`` picks: a tensor that is non-overlapping and dense keeps its
strides, and only such a tensor is converted by the runtime, as one flat range of memory
(``data_ptr`` is its lowest address, since strides are never negative). Anything else, or no
runtime, goes through ``x.to(torch.float32)`` itself. An argument whose values the op never
reads gets a tensor of that layout without the conversion (``fp32_like``). The memory may be
lent by ``scratch_pool``.

A tensor whose owner vouches that it changes only through operations autograd sees (autocast's
cast of a weight, made once per region and used at every step of a recurrent cell) may be
``kept``: ``kept_or_new`` then widens it once and hands out that one copy again while the tensor
is the same object with the same ``_version`` and memory, until the owner drops it with
``forget``. A parameter may not be kept: a fused optimizer writes it through its pointer, which
no version counter sees.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, Optional, Sequence, Tuple

import torch

from .. import _runtime
from . import scratch_pool

_FLOAT = torch.float32
_HALF = torch.float16
_STRIDED = torch.strided
_empty_strided = torch._C._VariableFunctions.empty_strided
_is_cpu = torch._C._TensorBase.is_cpu.__get__


def non_overlapping_and_dense(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """torch's ``is_non_overlapping_and_dense`` for a tensor with no size-0 dimension: the
    dimensions of size > 1, by increasing stride, tile memory without gaps or overlaps."""
    expected = 1
    for stride, size in zip(reversed(strides), reversed(sizes)):  # row-major: no sort needed
        if size != 1 and stride != expected:
            break
        expected *= size
    else:
        return True
    expected = 1
    for stride, size in sorted(zip(strides, sizes)):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


_LOOKUP = object()


# Below this many elements a fresh buffer costs less than the pool's bookkeeping (glibc serves
# it from memory the heap already faulted in).
POOLED_MIN_NUMEL = 1 << 14


def _new(sizes: Sequence[int], strides: Sequence[int], n: int, pooled: bool) -> torch.Tensor:
    if pooled and n >= POOLED_MIN_NUMEL:
        return scratch_pool.take(sizes, strides, n)
    return _empty_strided(sizes, strides, dtype=_FLOAT)


def to_fp32(x: torch.Tensor, rt: Any = _LOOKUP, pooled: bool = False) -> torch.Tensor:
    """The fp16 or bf16 tensor ``x`` as a new fp32 tensor: the values and strides of
    ``x.to(float32)``. ``rt``: the runtime as ``_runtime.runtime_kernels()`` gives it, if the
    caller has it; ``pooled``: the memory is lent by ``scratch_pool`` (the caller gives it
    back)."""
    n = x.numel()
    if n and x.layout == _STRIDED and _is_cpu(x):
        if rt is _LOOKUP:
            rt = _runtime.runtime_kernels()
        widen = None
        if rt is not None:
            widen = rt.half_to_float if x.dtype == _HALF else getattr(rt, "bf16_to_float", None)
        if widen is not None:
            sizes, strides = x.size(), x.stride()
            if x.is_contiguous() or non_overlapping_and_dense(sizes, strides):
                out = _new(sizes, strides, n, pooled)
                widen(x.data_ptr(), out.data_ptr(), n)
                return out
    return widened(x)


def widened(x: torch.Tensor) -> torch.Tensor:
    """``x.to(float32)`` with every fp16 NaN converted as IEEE converts it: quiet, its payload
    kept (the runtime's ``half_to_float`` and torch's vector code do so; torch 2.x's scalar code,
    which converts the elements its vector loop leaves over, gives 0x7FFFFFFF instead, so the
    bits of a NaN would depend on its position)."""
    out = x.to(_FLOAT)
    if x.dtype != _HALF or out.layout != _STRIDED:
        return out
    nan = torch.isnan(out)
    if bool(nan.any()):
        half_bits = x.view(torch.int16)[nan].to(torch.int32)
        sign = (half_bits & 0x8000) << 16  # 1.13 ORs int32 tensors with tensors only
        quiet = torch.tensor(0x7FC00000, dtype=torch.int32)
        out.view(torch.int32)[nan] = sign | quiet | ((half_bits & 0x03FF) << 13)
    return out


def fp32_like(x: torch.Tensor, pooled: bool = False) -> Optional[torch.Tensor]:
    """An fp32 tensor with the sizes and strides ``to_fp32(x)`` would have and unset values, for
    an argument the op never reads the values of; None when ``x`` is not non-overlapping and
    dense (torch then picks the copy's layout by rules not repeated here)."""
    n = x.numel()
    if n and x.layout == torch.strided and _is_cpu(x):
        sizes, strides = x.size(), x.stride()
        if non_overlapping_and_dense(sizes, strides):
            return _new(sizes, strides, n, pooled)
    return None


class _Kept(threading.local):
    """The calling thread's kept tensors, by id: (the tensor, and its fp32 copy with the
    ``_version`` and address it was made from, or None before the first use)."""

    def __init__(self) -> None:
        self.copies: Dict[int, Tuple[torch.Tensor, Optional[Tuple[int, int, torch.Tensor]]]] = {}


_kept = _Kept()


def keep(x: torch.Tensor) -> None:
    """Let ``kept_or_new`` reuse one fp32 copy of the fp16 or bf16 tensor ``x`` while it is
    unchanged; the caller vouches that nothing writes ``x`` unseen by its version counter (by
    its pointer or through ``.data``) until it calls ``forget(x)``."""
    if x.dtype in (_HALF, torch.bfloat16) and id(x) not in _kept.copies:
        _kept.copies[id(x)] = (x, None)


def forget(x: torch.Tensor) -> None:
    """Stop reusing ``x``'s fp32 copy (those handed out stay valid: nothing writes them)."""
    found = _kept.copies.get(id(x))
    if found is not None and found[0] is x:
        del _kept.copies[id(x)]


def kept_or_new(x: torch.Tensor, rt: Any = _LOOKUP) -> torch.Tensor:
    """``to_fp32(x, rt)``; for a kept ``x``, the copy made at an earlier call while ``x`` has
    not changed since (same ``_version``, same address). The copy may be shared: the caller
    reads it and never writes it."""
    found = _kept.copies.get(id(x))
    if found is None or found[0] is not x:
        return to_fp32(x, rt)
    made = found[1]
    version, address = x._version, x.data_ptr()
    if made is not None and made[0] == version and made[1] == address:
        return made[2]
    copy = to_fp32(x, rt)
    _kept.copies[id(x)] = (x, (version, address, copy))
    return copy
