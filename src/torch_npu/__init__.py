"""torch_npu for the emulated Ascend NPU, shipped by apexnpu as its own wheel.

On a machine without Huawei's torch_npu, ``import torch_npu`` gives Ascend training scripts the
API they expect (``torch.npu``, ``npu:N`` devices, ``Tensor.npu()``, hccl, ``torch.npu.amp``),
backed by the CPU through apex's device layer (``apex.npu``). Never install this wheel beside the
real torch_npu: both own the import name ``torch_npu``.
"""
# Read by apex.npu.backend to tell this emulator from Huawei's torch_npu; set before apex loads.
__apexnpu_emulator__ = True

import apex.npu  # noqa: E402,F401 - installs the emulated NPU into torch
