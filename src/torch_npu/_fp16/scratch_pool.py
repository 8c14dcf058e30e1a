"""fp32 buffers for the fast path's widened inputs, reused from one operation to the next.

An fp16 operation's fp32 inputs live only while the op runs, and a training step asks for the
same sizes again and again; fresh memory for each costs page faults and cold caches. The pool
lends a flat buffer of exactly the size asked for (seen in a view with the wanted strides), and
takes it back once the op is done, unless one of the op's results shares its memory (then the
result keeps it). Values are always written before they are read (or never read), so nothing
depends on what a buffer held before. Each thread has its own pool; at most ``MAX_BYTES`` are
kept, buffers above ``MAX_BUFFER_BYTES`` are not kept, and ``clear`` (``torch.npu.empty_cache``)
frees them all.
"""

from __future__ import annotations

import threading
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import torch

MAX_BYTES = 256 << 20
MAX_BUFFER_BYTES = 64 << 20
_FLOAT = torch.float32
_empty = torch._C._VariableFunctions.empty


class _Pool(threading.local):
    def __init__(self) -> None:
        self.free: Dict[int, List[torch.Tensor]] = {}  # numel -> idle buffers
        self.kept = 0  # bytes of the idle buffers
        self.lent: List[Tuple[int, torch.Tensor]] = []


_pool = _Pool()


def take(sizes: Sequence[int], strides: Sequence[int], numel: int) -> torch.Tensor:
    """An fp32 tensor of ``sizes`` and ``strides`` (non-overlapping and dense, ``numel``
    elements) over a pooled buffer; its values are unset."""
    idle = _pool.free.get(numel)
    if idle:
        buffer = idle.pop()
        _pool.kept -= numel * 4
    else:
        buffer = _empty([numel], dtype=_FLOAT)
    _pool.lent.append((numel, buffer))
    return buffer.as_strided(sizes, strides)


# The dense tensors a sparse tensor of each layout keeps its values and indices in.
_PARTS = {
    getattr(torch, layout): names
    for layout, names in (
        ("sparse_coo", ("_indices", "_values")),
        ("sparse_csr", ("crow_indices", "col_indices", "values")),
        ("sparse_csc", ("ccol_indices", "row_indices", "values")),
        ("sparse_bsr", ("crow_indices", "col_indices", "values")),
        ("sparse_bsc", ("ccol_indices", "row_indices", "values")),
    )
    if hasattr(torch, layout)
}


def _memory_of(t: torch.Tensor) -> Optional[List[torch.Tensor]]:
    """The strided tensors whose memory ``t`` is (itself, or a sparse tensor's values and
    indices); None for a layout without them."""
    if t.layout == torch.strided:
        return [t]
    names = _PARTS.get(t.layout)
    if names is None:
        return None
    return [getattr(t, name)() for name in names]


def give_back(results: Iterable[object]) -> None:
    """Take back every buffer lent since the last call, except those a tensor among
    ``results`` lies in."""
    lent = _pool.lent
    if not lent:
        return
    _pool.lent = []
    spans = []
    for t in results:
        if isinstance(t, torch.Tensor):
            parts = _memory_of(t)
            if parts is None:
                return  # memory this module cannot see: lend those buffers no more
            spans.extend((part.data_ptr(), part.numel()) for part in parts)
    for numel, buffer in lent:
        start = buffer.data_ptr()
        end = start + numel * 4
        if any(start <= ptr < end for ptr, n in spans if n):
            continue  # a result is this memory: it is the result's now
        size = numel * 4
        if size > MAX_BUFFER_BYTES or _pool.kept + size > MAX_BYTES:
            continue
        _pool.free.setdefault(numel, []).append(buffer)
        _pool.kept += size


def clear() -> None:
    """Free the calling thread's idle buffers."""
    _pool.free.clear()
    _pool.kept = 0


def kept_bytes() -> int:
    return _pool.kept
