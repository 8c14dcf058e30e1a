"""Freed host memory kept for the next allocation, as the NPU's caching allocator keeps freed
device memory.

The emulated NPU's memory is host memory. Left to its defaults, glibc gives blocks above a few
hundred KiB fresh mappings and trims its heap when much of it is free, so memory that an fp16
step frees (its fp32 temporaries) is handed back to the system and faulted in again, page by
page, by the next step. With the fast emulation path the process keeps it instead: blocks up to
32 MiB (glibc's largest threshold) come from the heap and the heap is not trimmed;
``torch.npu.empty_cache()`` returns the free part (``malloc_trim``), as it empties the NPU's
cache. Nothing changes where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
from typing import Any, List, Optional

_M_TRIM_THRESHOLD = -1  # glibc's malloc.h
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20
_TRIM_THRESHOLD = (1 << 31) - 1

_applied: List[bool] = []


def _glibc() -> Optional[Any]:
    try:
        libc = ctypes.CDLL(None)
    except OSError:  # pragma: no cover - no dynamic C library
        return None
    return libc if hasattr(libc, "gnu_get_libc_version") else None


def keep_freed_memory() -> bool:
    """Tell glibc to keep freed memory (once per process); False where that is not glibc."""
    if not _applied:
        libc = _glibc()
        _applied.append(
            libc is not None
            and bool(libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD))
            and bool(libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
        )
    return _applied[0]


def release_free_memory() -> None:
    """Return the heap's free memory to the system."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
