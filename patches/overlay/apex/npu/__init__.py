"""The NPU device layer of apex.

With ``torch_npu`` importable, tensors live on the real Ascend NPU and torch's own operations
run. Without it, the NPU is emulated on the CPU: CPU tensors, real fp16 storage, fp16 arithmetic
done in fp32 and saturated back to fp16, the float status set on overflow, and a ``torch.npu``
shim so that Ascend scripts run unchanged. Importing this package on the emulated NPU installs
the shim and turns the emulation on for the importing thread (``APEXNPU_EMULATION=0`` leaves the
emulation off).
"""
from __future__ import annotations

import os

from . import backend, emulation, float_status, saturation, shim
from .backend import device_type, is_emulated_npu, is_npu_tensor, is_real_npu

__all__ = [
    "backend", "emulation", "float_status", "saturation", "shim",
    "device_type", "is_emulated_npu", "is_npu_tensor", "is_real_npu",
]

if is_emulated_npu():
    shim.install()
    if os.environ.get("APEXNPU_EMULATION", "1") != "0":
        emulation.enable()
