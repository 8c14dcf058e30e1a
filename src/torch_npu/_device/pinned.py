"""Pinned host memory on the emulated NPU.

On an NPU host, ``pin_memory`` gives page-locked memory that the device copies from
asynchronously; torch_npu takes it from a caching host allocator, so a block freed by one pinned
tensor is handed to the next request of its size (a size rounded up to a power of two), and
``is_pinned()`` answers whether a host tensor's memory came from there (an NPU tensor's never
did). The emulated NPU has nothing to lock, but scripts test pinning (``DataLoader`` with
``pin_memory=True``, ``x.pin_memory().is_pinned()``, non-blocking copies to the host), so pinned
memory here is host memory from such a cache: each pinned storage leases a block, given back
when torch frees the storage, and ``is_pinned`` looks a storage's address up among the leased
blocks. torch 1.13's CPU build and torch 2.x's (whose pinned allocator belongs to the
accelerator, which the emulated NPU cannot give it from Python) refuse pinning otherwise.

Blocks are ``bytearray``s; a lease is a ctypes array over one, 64-byte aligned as torch's CPU
allocator aligns, which ``torch.frombuffer`` keeps alive as long as the storage lives.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from typing import Dict, List, Tuple

import torch

_ALIGN = 64
_MIN_BLOCK = 512
_KEEP_BLOCK = 64 << 20  # freed blocks above this go back to the system at once
_KEEP_TOTAL = 256 << 20  # and the cache holds no more than this

_lock = threading.RLock()  # a release may run (garbage collection) while a lease is made
_free: Dict[int, List[bytearray]] = {}  # block size -> free blocks, most recently freed last
_free_bytes = [0]
_leased: Dict[int, int] = {}  # address of a leased block's memory -> its block size
_itemsizes: Dict[torch.dtype, int] = {}

if hasattr(torch._C._TensorBase, "untyped_storage"):
    _storage = torch._C._TensorBase.untyped_storage
else:  # torch 1.13
    _storage = torch._C._TensorBase._storage


def _block_size(nbytes: int) -> int:
    size = _MIN_BLOCK
    while size < nbytes:
        size <<= 1
    return size


def _aligned_view(block: bytearray, nbytes: int) -> Tuple[int, ctypes.Array]:
    """(address, ctypes array of ``nbytes``) at the first aligned byte of ``block``."""
    start = ctypes.addressof(ctypes.c_char.from_buffer(block))
    skip = -start % _ALIGN
    return start + skip, (ctypes.c_char * nbytes).from_buffer(block, skip)


def _release(address: int, size: int, block: bytearray) -> None:
    """A leased block's storage is gone: keep the block for the next lease of its size."""
    with _lock:
        _leased.pop(address, None)
        if size <= _KEEP_BLOCK and _free_bytes[0] + size <= _KEEP_TOTAL:
            _free.setdefault(size, []).append(block)
            _free_bytes[0] += size


def _lease(nbytes: int) -> torch.Tensor:
    """A 1-D uint8 host tensor of ``nbytes`` (> 0) in a pinned block."""
    size = _block_size(nbytes)
    with _lock:
        blocks = _free.get(size)
        if blocks:
            block = blocks.pop()
            _free_bytes[0] -= size
        else:
            block = bytearray(size + _ALIGN)
        address, view = _aligned_view(block, nbytes)
        _leased[address] = size
    weakref.finalize(view, _release, address, size, block)
    return torch.frombuffer(view, dtype=torch.uint8)


def empty(shape: torch.Size, dtype: torch.dtype) -> torch.Tensor:
    """An uninitialised contiguous host tensor in pinned memory."""
    numel = 1
    for extent in shape:
        numel *= extent
    itemsize = _itemsizes.get(dtype)
    if itemsize is None:
        itemsize = _itemsizes[dtype] = torch.empty(0, dtype=dtype, device="cpu").element_size()
    if numel == 0:
        return torch.empty(shape, dtype=dtype, device="cpu")
    raw = _lease(numel * itemsize)
    return raw.view(dtype).view(shape)


def pin(tensor: torch.Tensor) -> torch.Tensor:
    """A copy of host ``tensor`` in pinned memory (contiguous), autograd seeing the copy."""
    out = empty(tensor.shape, tensor.dtype)
    if tensor.numel():
        out.copy_(tensor)
    elif tensor.requires_grad:
        out = tensor.clone(memory_format=torch.contiguous_format)
    return out


def is_pinned(tensor: torch.Tensor) -> bool:
    """Whether host ``tensor``'s memory is a pinned block."""
    try:
        address = _storage(tensor).data_ptr()
    except (RuntimeError, NotImplementedError):  # tensors without storage (meta, subclasses)
        return False
    with _lock:
        return address in _leased


def empty_cache() -> None:
    """Give the free pinned blocks back to the system."""
    with _lock:
        _free.clear()
        _free_bytes[0] = 0
