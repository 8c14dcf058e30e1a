"""How the runtime's broadcast fp16 kernels (``add_half_broadcast``, ``multiply_half_broadcast``)
read the two operands of an elementwise ``a + b`` or ``a * b``, and which layout the result gets.

One operand has the result's shape (the *full* one) and is dense: it is read, and the result
written, as one flat range in its memory order. The other is broadcast along it and may have any
strides: the kernel finds its element through (size, stride) dimensions over the full operand's
memory order, stride 0 where it is broadcast (``backend/half_broadcast.h``).

The result's layout is the one the general path gives: torch's fp32 kernel lays its output out
by the order of its inputs' strides (TensorIterator: for each pair of dimensions the first input
whose strides there are both non-zero decides), and the fp32 result is narrowed into a
contiguous fp16 tensor when it is contiguous, else into one of its strides. A contiguous full
operand that decides gives a contiguous result; a non-contiguous one gives its own strides when
all its sizes exceed 1 (the order of its strides then says all; size-1 dimensions would get
strides by rules not repeated here). When the broadcast operand comes first, it decides the
pairs where its strides are not zero, so there it must order the dimensions as the full one
does. Anything else is ``None``: the caller takes the round trip.
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence, Tuple

import torch

from . import fp32_copies

MAX_DIMS = 8  # the runtime's kMaxBroadcastDims


class Layout(NamedTuple):
    full: torch.Tensor  # read as one flat range
    other: torch.Tensor  # read through (sizes, strides)
    sizes: Tuple[int, ...]
    strides: Tuple[int, ...]  # of ``other``, in elements; 0 where it is broadcast
    out_strides: Optional[Tuple[int, ...]]  # None: contiguous


def _broadcasts_to(other: torch.Tensor, shape: Sequence[int]) -> bool:
    lead = len(shape) - other.dim()
    return lead >= 0 and all(s in (1, shape[lead + d]) for d, s in enumerate(other.shape))


def _expanded_strides(other: torch.Tensor, shape: Sequence[int]) -> List[int]:
    """``other.expand(shape).stride()``, without making the view."""
    lead = len(shape) - other.dim()
    sizes, strides = other.shape, other.stride()
    out = [0] * len(shape)
    for d in range(lead, len(shape)):
        if sizes[d - lead] != 1 or shape[d] == 1:
            out[d] = strides[d - lead]
    return out


def plan(first: torch.Tensor, second: torch.Tensor) -> Optional[Layout]:
    """How the kernels compute ``first OP second`` (two strided host tensors of one dtype), or
    None when they do not take the pair. Of two operands of one shape the first is read flat
    when it can be, else the second (a slice times a contiguous tensor)."""
    if first.shape == second.shape:
        return _plan(first, second, False) or _plan(second, first, True)
    if _broadcasts_to(second, first.shape):
        return _plan(first, second, False)
    if _broadcasts_to(first, second.shape):
        return _plan(second, first, True)
    return None


def _plan(full: torch.Tensor, other: torch.Tensor, other_first: bool) -> Optional[Layout]:
    shape, full_strides = full.shape, full.stride()
    if full.is_contiguous():
        order = [d for d in range(len(shape)) if shape[d] != 1]
        out_strides = None
    elif all(s > 1 for s in shape) and fp32_copies.non_overlapping_and_dense(shape, full_strides):
        order = sorted(range(len(shape)), key=lambda d: -full_strides[d])
        out_strides = tuple(full_strides)
    else:
        return None
    expanded = _expanded_strides(other, shape)
    if other_first:
        deciding = [expanded[d] for d in order if expanded[d] != 0]
        if any(outer <= inner for outer, inner in zip(deciding, deciding[1:])):
            return None
    sizes: List[int] = []
    strides: List[int] = []
    for d in order:  # outermost first; neighbours that are one run of ``other`` merge
        if sizes and strides[-1] == expanded[d] * shape[d]:
            sizes[-1] *= shape[d]
            strides[-1] = expanded[d]
        else:
            sizes.append(shape[d])
            strides.append(expanded[d])
    if not sizes:
        sizes, strides = [1], [0]
    if len(sizes) > MAX_DIMS:
        return None
    return Layout(full, other, tuple(sizes), tuple(strides), out_strides)
