"""The emulated NPU's memory, counted as torch_npu's caching allocator counts device memory.

The NPUs' memory is host memory, and an NPU tensor's storage is its allocation: when a tensor is
put on an NPU (``placement``), its storage is counted there, in torch_npu's block sizes (the
bytes asked for plus 32, rounded up to 512) and pools (blocks up to 1 MiB are small), until the
storage is freed. The allocator keeps nothing cached, so each block is its own segment and the
reserved memory is the allocated memory. ``memory_stats`` gives torch_npu's statistics (current,
peak, allocated and freed of allocations, segments, active blocks and their bytes), and the
snapshot lists the segments, consistently with them.

Every NPU has the host's memory (``mem_get_info``: the host's available and total memory). A
process may be held to a fraction of it (``set_per_process_memory_fraction``): a block beyond
that fails as torch_npu's allocator fails, with its "NPU out of memory" error, and so does a
host allocation that fails for an NPU (``allocation_guard``).
"""

from __future__ import annotations

import functools
import os
import re
import threading
import weakref
from typing import Any, Dict, List, Optional, Tuple

import torch

from .._fp16 import scratch_pool
from . import devices, host_allocator, memory_history

BLOCK = 512  # torch_npu's smallest block; every size is rounded up to it
PAD = 32  # torch_npu adds this to every allocation
SMALL = 1 << 20  # the largest block of the small pool
ONE_EB = 1 << 60

_TORCH_1 = devices.NATIVE_TYPE != "npu"
_STORAGE_PRESERVED = not _TORCH_1  # torch 2.x keeps one storage object per storage

# Statistic kinds: blocks (allocations = segments = active blocks), their bytes (allocated =
# reserved = active), and the bytes asked for. Pools: all, small, large. Fields per pool.
COUNT, BYTES, REQUESTED = 0, 1, 2
ALL, SMALL_POOL, LARGE_POOL = 0, 1, 2
CURRENT, PEAK, ALLOCATED, FREED = 0, 1, 2, 3
POOL_NAMES = ("all", "small_pool", "large_pool")


def _slot(kind: int, pool: int, field: int) -> int:
    return (kind * 3 + pool) * 4 + field


class _Device:
    """One NPU's blocks and statistics."""

    def __init__(self) -> None:
        self.stats = [0] * 36
        self.num_ooms = 0
        self.num_device_alloc = 0
        self.num_device_free = 0
        self.fraction = 1.0


class _Block:
    __slots__ = ("device", "size", "requested", "refs", "key")

    def __init__(self, device: int, size: int, requested: int, key: int) -> None:
        self.device, self.size, self.requested, self.key = device, size, requested, key
        self.refs: List[Any] = []


_lock = threading.RLock()
_devices: Dict[int, _Device] = {}
_blocks: Dict[int, _Block] = {}  # data pointer of a storage -> its block


def _device(index: int) -> _Device:
    state = _devices.get(index)
    if state is None:
        state = _devices.setdefault(index, _Device())
        state.fraction = _configured["fraction"]
    return state


# --- PYTORCH_NPU_ALLOC_CONF ---------------------------------------------------------------------

ALLOC_CONF = "PYTORCH_NPU_ALLOC_CONF"
_FRACTION_KEY = "per_process_memory_fraction"
_configured = {"fraction": 1.0}


def configure() -> None:
    """Read ``PYTORCH_NPU_ALLOC_CONF`` as torch_npu's allocator reads it when the NPUs start.

    Of its ``key:value`` settings (comma-separated) the emulated allocator acts on
    ``per_process_memory_fraction`` (0 to 1: every NPU's limit until
    ``set_per_process_memory_fraction`` changes it), refused, as by torch_npu, when its value is
    missing or out of range. The others tune how the real allocator splits and maps its
    segments (``expandable_segments``, ``max_split_size_mb``, ...), which the host's memory
    does not have: they are taken as given."""
    text = os.environ.get(ALLOC_CONF, "")
    fraction = 1.0
    for setting in filter(None, (part.strip() for part in text.split(","))):
        key, _, value = setting.partition(":")
        if key.strip() != _FRACTION_KEY:
            continue
        value = value.strip()
        if not value:
            raise RuntimeError(
                f"{ALLOC_CONF}={text!r}: Error, expecting per_process_memory_fraction value"
            )
        try:
            fraction = float(value)
        except ValueError:
            raise RuntimeError(
                f"{ALLOC_CONF}={text!r}: per_process_memory_fraction {value!r} is not a number"
            ) from None
        if not 0.0 <= fraction <= 1.0:
            raise RuntimeError(
                f"{ALLOC_CONF}={text!r}: per_process_memory_fraction is invalid, set it in "
                "[0.0, 1.0]"
            )
    with _lock:
        _configured["fraction"] = fraction
        for state in _devices.values():
            state.fraction = fraction


def block_size(nbytes: int) -> int:
    """The bytes torch_npu's allocator gives a request of ``nbytes``."""
    return (nbytes + PAD + BLOCK - 1) // BLOCK * BLOCK


def _pool(size: int) -> int:
    return SMALL_POOL if size <= SMALL else LARGE_POOL


# For each pool, the statistics a block counts in: (kind, all pools) and (kind, its pool).
_BASES = {
    pool: tuple(_slot(kind, p, CURRENT) for kind in (COUNT, BYTES, REQUESTED) for p in (ALL, pool))
    for pool in (SMALL_POOL, LARGE_POOL)
}


def _count(stats: List[int], block: _Block, sign: int) -> None:
    values = (1, 1, block.size, block.size, block.requested, block.requested)
    for base, value in zip(_BASES[_pool(block.size)], values):
        if sign > 0:
            current = stats[base] + value
            stats[base] = current
            stats[base + ALLOCATED] += value
            if current > stats[base + PEAK]:
                stats[base + PEAK] = current
        else:
            stats[base] -= value
            stats[base + FREED] += value


# The storage behind a tensor, as torch has it (not the one a re-pointed tensor reports).
_TensorBase = getattr(torch._C, "TensorBase", None) or torch._C._TensorBase
_backing = _TensorBase.untyped_storage if _STORAGE_PRESERVED else _TensorBase._storage


def track(tensor: torch.Tensor, index: int) -> None:
    """Count ``tensor``'s storage as memory of NPU ``index`` (once per storage) until it is
    freed; beyond the process's fraction of the memory, fail as torch_npu's allocator."""
    try:
        storage = _backing(tensor)
        key = storage.data_ptr()
    except (RuntimeError, NotImplementedError):  # no host memory behind it (fake, sparse)
        return
    if key == 0:  # nothing allocated (an empty tensor, a meta one), as on the NPU
        return
    block = _blocks.get(key)
    if block is None:
        block = _allocate(storage, key, index)
        if _STORAGE_PRESERVED:
            block.refs.append(weakref.ref(storage, functools.partial(_free, block)))
            return
    elif _STORAGE_PRESERVED:
        return
    # torch 1.x makes a new storage object on each request: follow the tensors instead.
    if tensor.__dict__.get("_apexnpu_counted") is not block:
        tensor._apexnpu_counted = block
        block.refs.append(weakref.ref(tensor, functools.partial(_drop, block)))


def npu_of_storage(storage: Any) -> Optional[int]:
    """The NPU whose memory the (untyped) ``storage`` is, or None: host memory, or a storage
    with nothing allocated."""
    try:
        key = storage.data_ptr()
    except (RuntimeError, NotImplementedError):
        return None
    block = _blocks.get(key) if key else None
    return None if block is None else block.device


def _allocate(storage: Any, key: int, index: int) -> _Block:
    requested = storage.nbytes()
    size = block_size(requested)
    state = _device(index)
    with _lock:
        if state.fraction < 1.0:
            _check_limit(index, state, size)
        block = _blocks[key] = _Block(index, size, requested, key)
        _count(state.stats, block, 1)
        state.num_device_alloc += 1
    if memory_history.recording():
        memory_history.allocated(index, key, size)
    return block


def _drop(block: _Block, ref: Any) -> None:
    with _lock:
        if ref in block.refs:
            block.refs.remove(ref)
        if not block.refs:
            _free(block)


def _free(block: _Block, _ref: Any = None) -> None:
    with _lock:
        if _blocks.get(block.key) is not block:
            return
        del _blocks[block.key]
        state = _device(block.device)
        _count(state.stats, block, -1)
        state.num_device_free += 1
    if memory_history.recording():
        memory_history.freed(block.device, block.key, block.size)


# --- statistics -----------------------------------------------------------------------------------


def stat(index: int, kind: int, pool: int, field: int) -> int:
    return _device(index).stats[_slot(kind, pool, field)]


def allocated(index: int) -> int:
    """Bytes of NPU ``index``'s live blocks."""
    return stat(index, BYTES, ALL, CURRENT)


def nested_stats(index: int) -> Dict[str, Any]:
    """torch_npu's ``_npu_memoryStats``: each statistic per pool, and the event counters."""
    state = _device(index)
    with _lock:
        values = list(state.stats)

    def per_pool(kind: Optional[int]) -> Dict[str, Dict[str, int]]:
        result = {}
        for pool, name in enumerate(POOL_NAMES):
            if kind is None:
                result[name] = {"current": 0, "peak": 0, "allocated": 0, "freed": 0}
            else:
                base = _slot(kind, pool, CURRENT)
                result[name] = {
                    "current": values[base],
                    "peak": values[base + PEAK],
                    "allocated": values[base + ALLOCATED],
                    "freed": values[base + FREED],
                }
        return result

    zero = {"current": 0, "peak": 0, "allocated": 0, "freed": 0}
    return {
        "num_alloc_retries": 0,
        "num_ooms": state.num_ooms,
        "max_split_size": -1,
        "num_sync_all_streams": 0,
        "num_device_alloc": state.num_device_alloc,
        "num_device_free": state.num_device_free,
        "num_oom_rejections": 0,
        "allocation": per_pool(COUNT),
        "segment": per_pool(COUNT),
        "active": per_pool(COUNT),
        "inactive_split": per_pool(None),
        "allocated_bytes": per_pool(BYTES),
        "reserved_bytes": per_pool(BYTES),
        "active_bytes": per_pool(BYTES),
        "inactive_split_bytes": per_pool(None),
        "requested_bytes": per_pool(REQUESTED),
        "oversize_allocations": dict(zero),
        "oversize_segments": dict(zero),
    }


def reset_peak(index: int) -> None:
    state = _device(index)
    with _lock:
        for base in range(0, 36, 4):
            state.stats[base + PEAK] = state.stats[base + CURRENT]


def reset_accumulated(index: int) -> None:
    state = _device(index)
    with _lock:
        for base in range(0, 36, 4):
            state.stats[base + ALLOCATED] = state.stats[base + FREED] = 0
        state.num_ooms = 0


def snapshot() -> List[Dict[str, Any]]:
    """The segments of every NPU, as torch_npu's ``memory_snapshot()`` lists them."""
    with _lock:
        blocks = sorted(_blocks.values(), key=lambda b: (b.device, b.key))
    segments = []
    for b in blocks:
        segments.append(
            {
                "device": b.device,
                "address": b.key,
                "total_size": b.size,
                "allocated_size": b.size,
                "active_size": b.size,
                "requested_size": b.requested,
                "stream": 0,
                "segment_type": "small" if b.size <= SMALL else "large",
                "segment_pool_id": (0, 0),
                "is_expandable": False,
                "frames": memory_history.frames_of(b.key),
                "blocks": [
                    {
                        "address": b.key,
                        "size": b.size,
                        "requested_size": b.requested,
                        "state": "active_allocated",
                        "frames": memory_history.frames_of(b.key),
                    }
                ],
            }
        )
    return segments


# --- limits and out-of-memory errors ----------------------------------------------------------


def set_fraction(index: int, fraction: float) -> None:
    _device(index).fraction = float(fraction)


def fraction(index: int) -> float:
    return _device(index).fraction


def format_size(size: int) -> str:
    """A byte count as torch_npu's allocator writes it in its messages."""
    if size <= 1024:
        return f"{size} bytes"
    if size <= 1 << 20:
        return f"{size / 1024:.2f} KiB"
    if size <= 1 << 30:
        return f"{size / (1 << 20):.2f} MiB"
    return f"{size / (1 << 30):.2f} GiB"


def _oom_type() -> type:
    # torch_npu 2.x raises torch's OutOfMemoryError (a RuntimeError); 1.x a RuntimeError.
    return RuntimeError if _TORCH_1 else getattr(torch, "OutOfMemoryError", RuntimeError)


def out_of_memory(index: int, size: int) -> RuntimeError:
    """torch_npu's error for an allocation of ``size`` bytes that NPU ``index`` cannot give."""
    from ..utils._error_code import ErrCode, pta_error

    state = _device(index)
    state.num_ooms += 1
    if size >= ONE_EB and not _TORCH_1:
        return _oom_type()("NPU out of memory. Tried to allocate more than 1EB memory.")
    free, total = host_memory()
    allowed = ""
    if state.fraction < 1.0:
        allowed = f"{format_size(int(state.fraction * total))} allowed; "
    used = format_size(allocated(index))
    # torch_npu 1.x: "...PyTorch) If reserved ..."; 2.x: "...PyTorch).If reserved ..."
    tail = (
        "reserved in total by PyTorch)"
        + (" " if _TORCH_1 else ".")
        + "If reserved memory is >> allocated memory try setting max_split_size_mb to avoid "
        "fragmentation."
    )
    message = (
        f"NPU out of memory. Tried to allocate {format_size(size)} (NPU {index}; "
        f"{format_size(total)} total capacity; {used} already allocated; {used} current "
        f"active; {format_size(free)} free; {allowed}{used} {tail}"
    )
    return _oom_type()(message + pta_error(ErrCode.MEMORY))


def _check_limit(index: int, state: _Device, size: int) -> None:
    limit = int(state.fraction * total_memory())
    if allocated(index) + size > limit:
        raise out_of_memory(index, size)


_HOST_FAILURE = re.compile(
    r"DefaultCPUAllocator: can't allocate memory: you tried to allocate "
    r"(\d+) bytes"
)


class allocation_guard:  # noqa: N801 - used like a function: ``with allocation_guard(npu):``
    """Around a host allocation made for NPU ``index`` (None: for the host, left alone): a
    failure of the host allocator reads as torch_npu's out-of-memory error."""

    __slots__ = ("index",)

    def __init__(self, index: Optional[int]) -> None:
        self.index = index

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, error: Any, trace: Any) -> bool:
        if self.index is None or not isinstance(error, RuntimeError):
            return False
        match = _HOST_FAILURE.search(str(error))
        if match is None:
            return False
        raise out_of_memory(self.index, int(match.group(1))) from None


# --- the host's memory ----------------------------------------------------------------------------


def _meminfo_kib(field: str) -> int:
    """The number after "field:" in /proc/meminfo, in KiB (0 when unreadable)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


_total: List[int] = []


def total_memory() -> int:
    """The bytes of every emulated NPU: the host's memory."""
    if not _total:
        _total.append(_meminfo_kib("MemTotal") * 1024)
    return _total[0]


def host_memory() -> Tuple[int, int]:
    """(free, total) bytes of the host, whose memory every emulated NPU has."""
    return _meminfo_kib("MemAvailable") * 1024, total_memory()


def empty_cache() -> None:
    """Frees the fp16 emulation's idle fp32 buffers (``scratch_pool``) of the calling thread and
    returns the host heap's free memory to the system (``host_allocator``)."""
    scratch_pool.clear()
    host_allocator.release_free_memory()
