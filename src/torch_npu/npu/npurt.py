"""``torch.npu.npurt()``: torch_npu's module of raw runtime calls (``torch_npu._C._npurt``), of
which libraries use the host-memory registration: DeepSpeed registers its pinned host buffers
so the NPU's copy engine may read them.

The emulated NPU's memory is the host's, so a registration is bookkeeping, answered with ACL's
return codes: 0 (``ACL_SUCCESS``), or 107000 (``ACL_ERROR_RT_PARAM_INVALID``) for a null address,
an empty or negative size, a negative flag, a range already registered, or an address never
registered. The raw stream calls of the module are not emulated (the emulator's streams are
``torch.npu.Stream``)."""

from __future__ import annotations

import threading
import types
from typing import Dict

ACL_SUCCESS = 0
ACL_ERROR_RT_PARAM_INVALID = 107000

_lock = threading.Lock()
_registered: Dict[int, int] = {}  # start address -> size


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


def registered_ranges() -> Dict[int, int]:
    """The registered ranges (start address -> size), for tests and diagnostics."""
    with _lock:
        return dict(_registered)


module = types.ModuleType("torch_npu._C._npurt", "torch_npu's runtime calls (see npurt.py)")
module.npuHostRegister = npuHostRegister  # type: ignore[attr-defined]
module.npuHostUnregister = npuHostUnregister  # type: ignore[attr-defined]


def npurt() -> types.ModuleType:
    """The NPU runtime's calls, once the NPUs are initialised (as torch_npu's ``npurt()``)."""
    from .._device import devices

    devices.lazy_init()
    return module
