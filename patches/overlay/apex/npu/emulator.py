"""The emulated NPU, put into torch in one step.

Called when apex.npu is imported on a machine without the real torch_npu, and by the emulator's
own ``torch_npu`` package (whichever comes first; the second call does nothing). The order
matters: ``torch.device`` first, as the other parts accept its NpuDevice.
"""
from __future__ import annotations

import os

from . import (checkpoint, ddp, emulation, factories, hccl, shim, tensor_methods,
               tensor_types, torch_device)

_installed = [False]


def install() -> None:
    """Install the emulated NPU into torch (idempotent) and turn the fp16 emulation on for the
    calling thread unless ``APEXNPU_EMULATION=0``."""
    if _installed[0]:
        return
    _installed[0] = True
    torch_device.install()
    tensor_types.install()
    factories.install()
    tensor_methods.install()
    checkpoint.install()
    ddp.install()
    hccl.register()
    shim.install()
    if os.environ.get("APEXNPU_EMULATION", "1") != "0":
        emulation.enable()
