"""The emulated NPU, put into torch in one step when ``torch_npu`` is imported.

The order matters: ``torch.device`` first, as the other parts accept NPU devices.
"""

from __future__ import annotations

import os

from ._device import (
    checkpoint,
    device_groups,
    dlpack,
    factories,
    formats,
    host_composites,
    storage_makers,
    tensor_methods,
    tensor_types,
    torch_device,
)
from ._fp16 import mode as emulation
from .distributed import ddp, fsdp, hccl

_installed = [False]


def install() -> None:
    """Install the emulated NPU into torch (idempotent) and turn the fp16 emulation on for the
    calling thread unless ``APEXNPU_EMULATION=0``."""
    if _installed[0]:
        return
    _installed[0] = True
    from . import _cann_home, npu, profiler

    _cann_home.install()

    torch_device.install()
    tensor_types.install()
    factories.install()
    tensor_methods.install()
    host_composites.install()
    device_groups.install()
    formats.install()
    storage_makers.install()
    dlpack.install()
    checkpoint.install()
    ddp.install()
    hccl.register()
    fsdp.install()
    npu.install()
    profiler.install()
    if os.environ.get("APEXNPU_EMULATION", "1") != "0":
        emulation.enable()
