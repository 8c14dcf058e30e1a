"""``torch.npu`` memory queries on the emulated NPU.

The emulated NPU's memory is the process's host memory, so the queries report it: allocated and
reserved memory are the process's resident set, the peaks its high-water mark (which
``reset_peak_memory_stats`` resets where Linux allows), and ``mem_get_info`` the machine's free
and total memory. Every emulated device reports the same process, as all are backed by it.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Tuple

from .._fp16 import scratch_pool
from . import devices, host_allocator


def _kib(path: str, field: str) -> int:
    """The number after "field:" in a /proc file that reports kibibytes (0 when unreadable)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _status_kib(field: str) -> int:
    return _kib("/proc/self/status", field)


def _meminfo_kib(field: str) -> int:
    return _kib("/proc/meminfo", field)


def memory_allocated(device: Any = None) -> int:
    devices.index_of(device, "torch.npu.memory_allocated")
    return _status_kib("VmRSS") * 1024


def max_memory_allocated(device: Any = None) -> int:
    devices.index_of(device, "torch.npu.max_memory_allocated")
    return max(_status_kib("VmHWM"), _status_kib("VmRSS")) * 1024


memory_reserved = memory_allocated
max_memory_reserved = max_memory_allocated
memory_cached = memory_allocated
max_memory_cached = max_memory_allocated


def reset_peak_memory_stats(device: Any = None) -> None:
    devices.index_of(device, "torch.npu.reset_peak_memory_stats")
    try:  # "5" resets the peak resident set size (Linux 4.0 and later)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


reset_max_memory_allocated = reset_peak_memory_stats
reset_max_memory_cached = reset_peak_memory_stats


def mem_get_info(device: Any = None) -> Tuple[int, int]:
    """(free, total) bytes."""
    devices.index_of(device, "torch.npu.mem_get_info")
    return _meminfo_kib("MemAvailable") * 1024, _meminfo_kib("MemTotal") * 1024


def memory_stats(device: Any = None) -> Dict[str, int]:
    return {"allocated_bytes.all.current": memory_allocated(device),
            "allocated_bytes.all.peak": max_memory_allocated(device),
            "reserved_bytes.all.current": memory_reserved(device),
            "reserved_bytes.all.peak": max_memory_reserved(device)}


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    stats = memory_stats(device)
    lines = [f"emulated NPU memory (host process {os.getpid()}):"]
    lines += [f"  {key}: {value / 2**20:.1f} MiB" for key, value in stats.items()]
    return "\n".join(lines)


def empty_cache() -> None:
    """Frees the fp16 emulation's idle fp32 buffers (``scratch_pool``) of the calling thread and
    returns the host heap's free memory to the system (``host_allocator``)."""
    scratch_pool.clear()
    host_allocator.release_free_memory()
