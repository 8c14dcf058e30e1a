"""The NPU device layer of apex.

With Huawei's ``torch_npu`` importable, tensors live on the real Ascend NPU and torch's own
operations run. Without it, the NPU is emulated on the CPU (``emulator.install``): ``npu:N``
devices backed by host memory, real fp16 storage, fp16 arithmetic done in fp32 and saturated back
to fp16, the float status set on overflow, and ``torch.npu`` so that Ascend scripts run
unchanged. The emulator's own ``torch_npu`` package (its own wheel) loads this same layer.
``APEXNPU_EMULATION=0`` leaves the fp16 emulation off.
"""
from __future__ import annotations

from . import backend, emulation, float_status, saturation, shim
from .amp_decorate import amp_decorate, amp_parameters
from .backend import device_type, is_emulated_npu, is_npu_tensor, is_real_npu

__all__ = [
    "backend", "emulation", "float_status", "saturation", "shim",
    "device_type", "is_emulated_npu", "is_npu_tensor", "is_real_npu",
    "amp_decorate", "amp_parameters",
]

if is_emulated_npu():
    from . import emulator

    emulator.install()

from . import ddp, fused_optimizer_switch  # noqa: E402

ddp.install()  # torch DDP takes the APEXNPU_*_COMPRESSION / _HIERARCHICAL_ALLREDUCE switches

fused_optimizer_switch.install()  # APEXNPU_FUSED_OPTIMIZER=1: torch.optim's are the NpuFused ones
