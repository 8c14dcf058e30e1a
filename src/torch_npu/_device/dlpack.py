"""DLPack on the emulated NPU: an NPU tensor passed through a DLPack capsule comes back on its
NPU, sharing its memory (``from_dlpack(to_dlpack(t))``, as torch_npu's NPU capsules do).

The capsule itself can carry no mark: the emulated NPU's memory is the host's, so torch writes
a host capsule. ``to_dlpack`` of an NPU tensor records which NPU the capsule's memory is on,
keyed by its address and held as a weak reference to the storage (which the capsule keeps
alive); ``from_dlpack`` of memory at a recorded address whose storage is still alive puts the
new tensor on that NPU. An NPU tensor given to ``from_dlpack`` directly (through its
``__dlpack__``) comes back on its NPU too. torch 2.x only: torch 1.13 keeps no storage object
to hold weakly.
"""

from __future__ import annotations

import functools
import threading
import weakref
from typing import Any, Dict, Optional, Tuple

import torch

from .. import _wraps
from . import devices, placement

_lock = threading.Lock()
_capsules: Dict[int, Tuple[Any, int]] = {}  # address -> (weak storage, NPU index)


def _record(tensor: torch.Tensor) -> None:
    npu = placement.npu_of(tensor)
    storage = tensor.untyped_storage()
    address = storage.data_ptr()
    if address == 0:
        return
    with _lock:
        if npu is None:
            _capsules.pop(address, None)  # host memory there now
        else:
            _capsules[address] = (weakref.ref(storage), npu)


def _recorded_npu(tensor: torch.Tensor) -> Optional[int]:
    storage = tensor.untyped_storage()
    address = storage.data_ptr()
    with _lock:
        entry = _capsules.get(address)
        if entry is None:
            return None
        held = entry[0]()
        if held is None or held.data_ptr() != address:
            del _capsules[address]  # that NPU memory is gone
            return None
        return entry[1]


def install() -> None:
    if devices.NATIVE_TYPE != "npu":
        return
    import torch.utils.dlpack as torch_dlpack

    to_original = torch_dlpack.to_dlpack
    from_original = torch_dlpack.from_dlpack
    if _wraps.is_wrapper(from_original):
        return

    @functools.wraps(to_original)
    def to_dlpack(tensor: Any) -> Any:
        capsule = to_original(tensor)
        if isinstance(tensor, torch.Tensor):
            _record(tensor)
        return capsule

    @functools.wraps(from_original)
    def from_dlpack(ext_tensor: Any, *args: Any, **kwargs: Any) -> Any:
        npu = placement.npu_of(ext_tensor) if isinstance(ext_tensor, torch.Tensor) else None
        if npu is not None:
            # torch's exporter knows no NPU device; its capsule of the host memory is the
            # NPU's capsule here (torch_npu exports NPU tensors by its own capsules too).
            ext_tensor = to_original(ext_tensor)
        out = from_original(ext_tensor, *args, **kwargs)
        if not isinstance(out, torch.Tensor) or args or kwargs.get("device") is not None:
            return out
        if npu is None:
            npu = _recorded_npu(out)
        return out if npu is None else placement.put(out, npu)

    _wraps.mark(to_dlpack, to_original)
    _wraps.mark(from_dlpack, from_original)
    torch_dlpack.to_dlpack = to_dlpack
    torch_dlpack.from_dlpack = from_dlpack
    if getattr(torch, "to_dlpack", None) is to_original:
        torch.to_dlpack = to_dlpack
    if getattr(torch, "from_dlpack", None) is from_original:
        torch.from_dlpack = from_dlpack
