"""``torch_npu.npu.memory``: the memory of the emulated NPUs, as torch_npu's caching allocator
reports it (see ``_device.memory`` for what is counted): statistics, the snapshot, the summary
table, the per-process fraction, and raw allocations."""

from __future__ import annotations

import collections
import pickle
import sys
import warnings
from typing import Any, Dict, List, Optional, Tuple

import torch

from .._device import devices
from .._device import memory as allocator
from .._device import memory_history
from ..utils._error_code import ErrCode, pta_error
from .streams import Stream
from .utils import _get_device_index, current_device, current_stream

__all__ = [
    "caching_allocator_alloc",
    "caching_allocator_delete",
    "get_per_process_memory_fraction",
    "set_per_process_memory_fraction",
    "empty_cache",
    "memory_stats",
    "memory_stats_as_nested_dict",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "reset_max_memory_allocated",
    "reset_max_memory_cached",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "memory_cached",
    "max_memory_cached",
    "memory_snapshot",
    "memory_summary",
    "get_allocator_backend",
    "mem_get_info",
    "host_empty_cache",
]


def _index(device: Any) -> int:
    """The NPU a memory query is about (the current one by default)."""
    return devices.check_index(_get_device_index(device, optional=True), "torch.npu.memory")


# --- raw allocations ----------------------------------------------------------------------------

_raw: Dict[int, torch.Tensor] = {}  # pointer -> the host buffer behind it


def caching_allocator_alloc(size: int, device: Any = None, stream: Any = None) -> int:
    """``size`` bytes of NPU memory from the allocator, as a pointer (an int) for other
    frameworks; ``caching_allocator_delete`` frees it."""
    index = _index(current_device() if device is None else device)
    if stream is None:
        stream = current_stream(index)
    if isinstance(stream, Stream):
        stream = stream.npu_stream
    if not isinstance(stream, int):
        raise TypeError(
            "Invalid type for stream argument, must be `torch_npu.npu.Stream` or "
            "`int` representing a pointer to a existing stream" + pta_error(ErrCode.TYPE)
        )
    with allocator.allocation_guard(index):
        buffer = torch.empty(int(size), dtype=torch.uint8)
    allocator.track(buffer, index)
    pointer = buffer.data_ptr()
    _raw[pointer] = buffer
    return pointer


def caching_allocator_delete(mem_ptr: int) -> None:
    """Free memory that ``caching_allocator_alloc`` gave."""
    if _raw.pop(mem_ptr, None) is None:
        raise RuntimeError(f"invalid device pointer: {mem_ptr:#x}" + pta_error(ErrCode.PTR))


# --- the per-process fraction -------------------------------------------------------------------


def get_per_process_memory_fraction(device: Any = None) -> float:
    """The fraction of an NPU's memory this process may allocate (1.0 unless set)."""
    return allocator.fraction(_index(device))


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    """Hold this process to ``fraction`` (0 to 1) of NPU ``device``'s memory: an allocation
    beyond it fails with torch_npu's out-of-memory error."""
    index = _index(current_device() if device is None else device)
    if not isinstance(fraction, float):
        raise TypeError(
            "Invalid type for fraction argument, must be `float`" + pta_error(ErrCode.TYPE)
        )
    if fraction < 0 or fraction > 1:
        raise ValueError(
            f"Invalid fraction value: {fraction}. Allowed range: 0~1" + pta_error(ErrCode.VALUE)
        )
    allocator.set_fraction(index, fraction)


def empty_cache() -> None:
    """Give cached memory back: the emulator's idle fp32 buffers and the host heap's free
    memory (the allocator itself caches nothing)."""
    allocator.empty_cache()


# --- statistics ---------------------------------------------------------------------------------


def memory_stats_as_nested_dict(device: Any = None) -> Dict[str, Any]:
    return allocator.nested_stats(_index(device))


def memory_stats(device: Any = None) -> "collections.OrderedDict[str, int]":
    """torch_npu's statistics of NPU ``device``'s allocator, flat and sorted by key
    (``"allocated_bytes.all.current"``, ...)."""
    flat: List[Tuple[str, int]] = []

    def add(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                add(f"{prefix}.{key}" if prefix else key, inner)
        else:
            flat.append((prefix, value))

    add("", memory_stats_as_nested_dict(device))
    flat.sort()
    return collections.OrderedDict(flat)


def reset_accumulated_memory_stats(device: Any = None) -> None:
    allocator.reset_accumulated(_index(device))


def reset_peak_memory_stats(device: Any = None) -> None:
    allocator.reset_peak(_index(device))


def reset_max_memory_allocated(device: Any = None) -> None:
    warnings.warn(
        "torch_npu.npu.reset_max_memory_allocated now calls "
        "torch_npu.npu.reset_peak_memory_stats, which resets /all/ peak memory stats.",
        DeprecationWarning,
    )
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device: Any = None) -> None:
    warnings.warn(
        "torch_npu.npu.reset_max_memory_cached now calls "
        "torch_npu.npu.reset_peak_memory_stats, which resets /all/ peak memory stats.",
        DeprecationWarning,
    )
    reset_peak_memory_stats(device)


def _stat(device: Any, kind: int, field: int) -> int:
    return allocator.stat(_index(device), kind, allocator.ALL, field)


def memory_allocated(device: Any = None) -> int:
    """Bytes held by NPU tensors on ``device``."""
    return _stat(device, allocator.BYTES, allocator.CURRENT)


def max_memory_allocated(device: Any = None) -> int:
    return _stat(device, allocator.BYTES, allocator.PEAK)


def memory_reserved(device: Any = None) -> int:
    """Bytes the allocator holds on ``device`` (it caches nothing: the allocated bytes)."""
    return _stat(device, allocator.BYTES, allocator.CURRENT)


def max_memory_reserved(device: Any = None) -> int:
    return _stat(device, allocator.BYTES, allocator.PEAK)


def memory_cached(device: Any = None) -> int:
    warnings.warn(
        "torch_npu.npu.memory_cached has been renamed to torch_npu.npu.memory_reserved",
        DeprecationWarning,
    )
    return memory_reserved(device)


def max_memory_cached(device: Any = None) -> int:
    warnings.warn(
        "torch_npu.npu.max_memory_cached has been renamed to torch_npu.npu.max_memory_reserved",
        DeprecationWarning,
    )
    return max_memory_reserved(device)


def memory_snapshot(mempool_id: Optional[Tuple[int, int]] = None) -> List[Dict[str, Any]]:
    """The allocator's segments on every NPU (each with its blocks)."""
    return allocator.snapshot()


def host_empty_cache() -> None:
    """Return the pinned host memory kept for reuse (torch_npu's host caching allocator)."""
    from .._device import pinned

    pinned.empty_cache()


def _record_memory_history(
    enabled: Optional[str] = "all",
    context: Optional[str] = "all",
    stacks: str = "all",
    max_entries: int = sys.maxsize,
    device: Any = None,
) -> None:
    """Record every NPU allocation and free with its Python stack (None stops), for
    ``_snapshot`` and torch's memory viewer."""
    if device is not None:
        _get_device_index(device, optional=True)
    memory_history.record(enabled, context, stacks, max_entries)


def _snapshot(device: Any = None, augment_with_fx_traces: bool = False) -> Dict[str, Any]:
    """torch's memory snapshot: every NPU's segments (each block with the stack that allocated
    it, when recorded) and each NPU's allocation history."""
    if device is not None:
        _get_device_index(device, optional=True)
    return {
        "segments": allocator.snapshot(),
        "device_traces": memory_history.traces(devices.device_count()),
    }


def _dump_snapshot(
    filename: str = "dump_snapshot.pickle", augment_with_fx_traces: bool = False
) -> None:
    """``_snapshot()`` pickled into ``filename`` (what pytorch.org/memory_viz opens)."""
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)


def mem_get_info(device: Any = None) -> Tuple[int, int]:
    """(free, total) bytes of NPU ``device``: the host's available and total memory."""
    index = _get_device_index(current_device() if device is None else device, optional=True)
    if not 0 <= index < devices.device_count():
        raise AssertionError("Invalid device id" + pta_error(ErrCode.VALUE))
    return allocator.host_memory()


def get_allocator_backend() -> str:
    """The allocator behind NPU memory: torch_npu's own caching allocator ("native")."""
    return "native"


# --- the summary table ----------------------------------------------------------------------------


def _format_bytes(value: int, reference: int) -> str:
    units = ["B ", "KB", "MB", "GB", "TB", "PB"]
    unit = 0
    while unit + 1 < len(units) and reference >= 768 * 1024:
        value //= 1024
        reference /= 1024
        unit += 1
    return f"{value:7d} {units[unit]}"


def _format_count(value: int, reference: int) -> str:
    units = [" ", "K", "M"]
    unit = 0
    while unit + 1 < len(units) and reference >= 750 * 1000:
        value //= 1000
        reference /= 1000
        unit += 1
    return f"{value:7d} {units[unit]} "


_METRICS = (
    ("allocated_bytes", "Allocated memory", _format_bytes),
    ("active_bytes", "Active memory", _format_bytes),
    ("reserved_bytes", "NPU reserved memory", _format_bytes),
    ("inactive_split_bytes", "Non-releasable memory", _format_bytes),
    ("allocation", "Allocations", _format_count),
    ("active", "Active allocs", _format_count),
    ("segment", "NPU reserved segments", _format_count),
    ("inactive_split", "Non-releasable allocs", _format_count),
)
_OVERSIZE = (
    ("oversize_allocations", "Oversize allocations"),
    ("oversize_segments", "Oversize NPU segments"),
)
_RULE, _DOUBLE_RULE = "-" * 75, "=" * 75


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """torch_npu's table of NPU ``device``'s memory statistics."""
    index = _get_device_index(device, optional=True)
    stats = memory_stats(index)
    lines = [
        _DOUBLE_RULE,
        f" {'':16} PyTorch NPU memory summary, device ID {index:<18d} ",
        _RULE,
        f"  {'':9} NPU OOMs: {stats['num_ooms']:<13d} | {'':6} npuMalloc retries: "
        f"{stats['num_alloc_retries']:<9d}  ",
        _DOUBLE_RULE,
        "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ",
    ]

    def row(name: str, prefix: str, formatter: Any, reference_prefix: str) -> str:
        cells = [
            formatter(stats[prefix + field], stats[reference_prefix + field])
            for field in ("current", "peak", "allocated", "freed")
        ]
        return f" {name:<21} | " + " | ".join(cells) + " "

    for key, name, formatter in _METRICS:
        lines.append(_RULE)
        pools = [("all", name)]
        if not abbreviated:
            pools += [
                ("large_pool", "      from large pool"),
                ("small_pool", "      from small pool"),
            ]
        for pool, label in pools:
            lines.append(row(label, f"{key}.{pool}.", formatter, f"{key}.all."))
    for key, name in _OVERSIZE:
        lines.append(_RULE)
        lines.append(row(name, f"{key}.", _format_count, f"{key}."))
    lines.append(_DOUBLE_RULE)
    return "|" + "|\n|".join(lines) + "|\n"
