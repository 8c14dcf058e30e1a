"""``torch_npu._C``: the names of torch_npu's compiled module that scripts, libraries and
Huawei's tests reach for, answered by the emulated NPU.

On an NPU this is the C++ extension behind ``torch_npu.npu``; here each name is the emulator's
own answer (the same one ``torch_npu.npu`` gives): devices, streams, memory, the chip, the sync
debug mode and torch_npu 1.x's ``Generator`` class. Names the emulator has no behaviour for are
absent, so code that probes with ``hasattr`` takes its fallback.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import torch

from .. import npu as _npu
from .._device import devices as _devices
from .._device import formats as _formats
from .._device import generators as _generators
from .._device import memory as _memory
from .._device import soc as _soc
from ..npu import _properties

__all__ = [
    "Generator",
    "_NPUDeviceProperties",
    "_CUuuid",
    "_npu_get_soc_version",
    "_npu_getDeviceCount",
    "_npu_getDevice",
    "_npu_setDevice",
    "_npu_getLocalDevice",
    "_npu_getDeviceWithoutSet",
    "_npu_hasPrimaryContext",
    "_npu_canDeviceAccessPeer",
    "_npu_getDeviceName",
    "_npu_getDeviceProperties",
    "_npu_synchronize",
    "_npu_init",
    "_npu_getCurrentStream",
    "_npu_getDefaultStream",
    "_npu_setStream",
    "_npu_memoryStats",
    "_npu_memorySnapshot",
    "_npu_resetPeakMemoryStats",
    "_npu_resetAccumulatedMemoryStats",
    "_npu_setMemoryFraction",
    "_npu_getMemoryFraction",
    "_npu_emptyCache",
    "_npu_getAllocatorBackend",
    "_npu_npuCachingAllocator_raw_alloc",
    "_npu_npuCachingAllocator_raw_delete",
    "_npu_is_bf16_supported",
    "_npu_is_support_inf_nan",
    "_npu_get_sync_debug_mode",
    "_npu_set_sync_debug_mode",
    "_weak_ref_tensor",
    "_empty_strided_npu",
    "_npu_hostEmptyCache",
    "_distributed_c10d",
    "_npurt",
]

# torch_npu 1.x's generator class: a host generator by default, an NPU's for an NPU device or
# index (torch_npu 2.x makes NPU generators with torch.Generator).
Generator = _generators.NpuGeneratorOf
_NPUDeviceProperties = _properties._NPUDeviceProperties
_CUuuid = _properties._CUuuid


def _npu_get_soc_version() -> int:
    """The chip's SocVersion number (102 for Ascend910A, 220 for Ascend910B1, ...)."""
    return _soc.version()


def _npu_getDeviceCount() -> int:  # noqa: N802 - torch_npu's names
    return _devices.device_count()


def _npu_getDevice() -> int:  # noqa: N802
    return _npu.current_device()


def _npu_getDeviceWithoutSet() -> int:  # noqa: N802
    return _devices.current_device()


_npu_getLocalDevice = _npu_getDeviceWithoutSet


def _npu_setDevice(device: int) -> None:  # noqa: N802
    _npu.set_device(int(device))


def _npu_init() -> None:
    _npu.init()


def _npu_hasPrimaryContext(device: int) -> bool:  # noqa: N802
    """Whether ``device``'s runtime context exists: an emulated NPU has one once used."""
    return _devices.has_context(
        _devices.check_index(int(device), "torch_npu._C._npu_hasPrimaryContext")
    )


def _npu_canDeviceAccessPeer(device: int, peer: int) -> bool:  # noqa: N802
    return _npu.can_device_access_peer(device, peer)


def _npu_getDeviceName() -> str:  # noqa: N802
    return _soc.name()


def _npu_getDeviceProperties(device: int) -> Any:  # noqa: N802
    return _npu.get_device_properties(device)


def _npu_synchronize() -> None:
    _npu.synchronize()


def _stream_data(stream: Any) -> Tuple[int, int, int]:
    return stream.stream_id, stream.device_index, stream.device_type


def _npu_getCurrentStream(device: int) -> Tuple[int, int, int]:  # noqa: N802
    """(stream id, device index, device type) of ``device``'s current stream."""
    return _stream_data(_npu.current_stream(device))


def _npu_getDefaultStream(device: int) -> Tuple[int, int, int]:  # noqa: N802
    return _stream_data(_npu.default_stream(device))


def _npu_setStream(
    stream_id: int = 0,
    device_index: Optional[int] = None,  # noqa: N802
    device_type: Optional[int] = None,
) -> None:
    index = _devices.current_device() if device_index is None else device_index
    current = _npu.current_stream(index)
    if current.stream_id != stream_id:
        current = _npu.Stream(stream_id=stream_id, device_index=index, device_type=device_type)
    _npu.set_stream(current)


def _npu_memoryStats(device: int) -> Dict[str, Any]:  # noqa: N802
    return _npu.memory_stats_as_nested_dict(device)


def _npu_memorySnapshot(mempool_id: Any = None) -> Dict[str, Any]:  # noqa: N802
    return {"segments": _memory.snapshot(), "device_traces": []}


def _npu_resetPeakMemoryStats(device: int) -> None:  # noqa: N802
    _npu.reset_peak_memory_stats(device)


def _npu_resetAccumulatedMemoryStats(device: int) -> None:  # noqa: N802
    _npu.reset_accumulated_memory_stats(device)


def _npu_setMemoryFraction(fraction: float, device: int) -> None:  # noqa: N802
    _npu.set_per_process_memory_fraction(float(fraction), device)


def _npu_getMemoryFraction(device: int) -> float:  # noqa: N802
    return _npu.get_per_process_memory_fraction(device)


def _npu_emptyCache() -> None:  # noqa: N802
    _npu.empty_cache()


def _npu_getAllocatorBackend() -> str:  # noqa: N802
    return _npu.get_allocator_backend()


def _npu_npuCachingAllocator_raw_alloc(size: int, stream: int) -> int:  # noqa: N802
    return _npu.caching_allocator_alloc(size, stream=stream)


def _npu_npuCachingAllocator_raw_delete(pointer: int) -> None:  # noqa: N802
    _npu.caching_allocator_delete(pointer)


def _npu_is_bf16_supported() -> bool:
    return _soc.has_bf16()


def _npu_is_support_inf_nan() -> bool:
    return _npu.utils.is_support_inf_nan()


def _npu_get_sync_debug_mode() -> int:
    return _npu.get_sync_debug_mode()


def _npu_set_sync_debug_mode(mode: int) -> None:
    _npu.set_sync_debug_mode(mode)


def _weak_ref_tensor(tensor: Any) -> Any:
    """A tensor over ``tensor``'s memory with its sizes, strides, offset and NPU format, as
    torch_npu's graph capture makes to refer to a tensor without owning it. The emulator's
    alias is a view, so it keeps the memory alive rather than dangling after a free."""
    alias = tensor.as_strided(tensor.size(), tensor.stride(), tensor.storage_offset())
    _formats.inherit(tensor, alias)
    return alias


def _empty_strided_npu(*args: Any) -> Any:
    """``_empty_strided_npu(sizes, strides, dtype)``: an uninitialised tensor of those sizes
    and strides on the current NPU, as ``torch.empty_strided`` makes it; torch_npu's fast path
    for inductor's generated wrappers, which skips the dispatcher on an NPU. It takes exactly
    three positional arguments, sizes and strides as tuples of ints, as torch_npu's does."""
    if len(args) != 3:
        raise RuntimeError("_empty_strided_npu expects exactly 3 args: (sizes, strides, dtype)")
    sizes, strides, dtype = args
    for shape in (sizes, strides):
        if type(shape) is not tuple:
            raise RuntimeError("expected a tuple of ints")
    if not isinstance(dtype, torch.dtype):
        raise RuntimeError("_empty_strided_npu: arg 3 must be a torch.dtype")
    device = torch.device("npu", _npu.current_device())
    return torch.empty_strided(sizes, strides, dtype=dtype, device=device)


def _npu_hostEmptyCache() -> None:  # noqa: N802
    """Return the pinned host memory cached for reuse (``torch.npu.host_empty_cache``)."""
    _npu.host_empty_cache()


from . import _distributed_c10d  # noqa: E402 - after the names it may reach

from ..npu.npurt import module as _npurt  # noqa: E402 - what torch.npu.npurt() returns
