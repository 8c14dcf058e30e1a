"""Storages made on an NPU directly: ``torch.UntypedStorage(n, device="npu")``.

On torch 2.x an NPU storage made this way would ask torch for the NPU's (PrivateUse1) allocator,
which the emulated NPU does not register, since its memory is the host's: torch would crash the
process. The emulated NPU makes such a storage in host memory, as every NPU tensor's storage is
(a tensor ``set_`` to it is an NPU tensor once put on an NPU, as ``torch.empty(...,
device="npu").set_(storage)`` does). ``TypedStorage`` makes its memory through this
constructor.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

from .. import _wraps
from . import devices

# Marks a storage made by itself on an NPU: the NPU describes it as a vector (see ``formats``).
MADE_ALONE = "_apexnpu_made_alone"


def install() -> None:
    if devices.NATIVE_TYPE != "npu":
        return  # torch 1.x: the NPU is not a device type of torch's storages
    storage_class = torch.UntypedStorage
    original = storage_class.__new__
    if _wraps.is_wrapper(original):
        return

    @functools.wraps(original)
    def new(cls: Any, *args: Any, device: Any = None, **kwargs: Any) -> Any:
        on_npu = devices.npu_index(device, "torch.UntypedStorage") is not None
        if on_npu:
            device = "cpu"  # the NPU's memory is the host's
        if device is not None:
            kwargs["device"] = device
        storage = original(cls, *args, **kwargs)
        if on_npu:
            setattr(storage, MADE_ALONE, True)
        return storage

    _wraps.mark(new, original)
    storage_class.__new__ = new  # type: ignore[method-assign]
