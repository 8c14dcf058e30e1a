"""``torch.npu.npurt()``: torch_npu's module of raw runtime calls (``torch_npu._C._npurt``), of
which libraries use the host-memory registration: DeepSpeed registers its pinned host buffers
so the NPU's copy engine may read them.

The emulated NPU's memory is the host's, so a registration is bookkeeping, answered with ACL's
return codes: 0 (``ACL_SUCCESS``), or 107000 (``ACL_ERROR_RT_PARAM_INVALID``) for a null address,
an empty or negative size, a negative flag, a range already registered, or an address never
registered. Its raw streams (``npuStreamCreate``/``npuStreamDestroy``) are handles the emulator
hands out and takes back: the NPU's work runs on the host in order, so a raw stream orders
nothing more (``torch.npu.Stream`` is the emulator's stream with its bookkeeping)."""

from __future__ import annotations

import ctypes
import itertools
import threading
import types
from typing import Dict

ACL_SUCCESS = 0
ACL_ERROR_RT_PARAM_INVALID = 107000

_lock = threading.Lock()
_registered: Dict[int, int] = {}  # start address -> size
_streams = set()  # raw stream handles made and not destroyed
_handles = itertools.count(1)


def npuHostRegister(address: int, size: int, flags: int) -> int:  # noqa: N802 - torch_npu's
    """Register ``size`` bytes of host memory from ``address`` with the NPU."""
    if not address or size <= 0 or flags < 0:
        return ACL_ERROR_RT_PARAM_INVALID
    with _lock:
        if any(
            start < address + size and address < start + length
            for start, length in _registered.items()
        ):
            return ACL_ERROR_RT_PARAM_INVALID
        _registered[address] = size
    return ACL_SUCCESS


def npuHostUnregister(address: int) -> int:  # noqa: N802 - torch_npu's name
    """Unregister the range registered from ``address``."""
    with _lock:
        if _registered.pop(address, None) is None:
            return ACL_ERROR_RT_PARAM_INVALID
    return ACL_SUCCESS


def npuStreamCreate(stream_address: int) -> int:  # noqa: N802 - torch_npu's name
    """Make a raw stream and write its handle to the ``void*`` at ``stream_address``."""
    if not stream_address:
        return ACL_ERROR_RT_PARAM_INVALID
    with _lock:
        handle = (0x57 << 40) | (next(_handles) << 8)  # non-zero, aligned, like a pointer
        _streams.add(handle)
    ctypes.c_void_p.from_address(stream_address).value = handle
    return ACL_SUCCESS


def npuStreamDestroy(stream: int) -> int:  # noqa: N802 - torch_npu's name
    """Destroy a raw stream made by ``npuStreamCreate``."""
    with _lock:
        if stream not in _streams:
            return ACL_ERROR_RT_PARAM_INVALID
        _streams.discard(stream)
    return ACL_SUCCESS


def registered_ranges() -> Dict[int, int]:
    """The registered ranges (start address -> size), for tests and diagnostics."""
    with _lock:
        return dict(_registered)


module = types.ModuleType("torch_npu._C._npurt", "torch_npu's runtime calls (see npurt.py)")
module.npuHostRegister = npuHostRegister  # type: ignore[attr-defined]
module.npuHostUnregister = npuHostUnregister  # type: ignore[attr-defined]
module.npuStreamCreate = npuStreamCreate  # type: ignore[attr-defined]
module.npuStreamDestroy = npuStreamDestroy  # type: ignore[attr-defined]


def npurt() -> types.ModuleType:
    """The NPU runtime's calls, once the NPUs are initialised (as torch_npu's ``npurt()``)."""
    from .._device import devices

    devices.lazy_init()
    return module
