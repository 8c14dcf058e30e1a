"""torch_npu for the emulated Ascend NPU, shipped by apexnpu as its own wheel.

On a machine without Huawei's torch_npu, ``import torch_npu`` gives Ascend training scripts the
API they expect (``torch.npu``, ``npu:N`` devices, ``Tensor.npu()``, ``is_npu``, the
``torch.npu.*Tensor`` types, hccl, ``torch.npu.amp``), backed by the CPU through apex's device
layer (``apex.npu``): one device layer, loaded by both packages. Never install this wheel beside
the real torch_npu: both own the import name ``torch_npu``.
"""
# Read by apex.npu.backend to tell this emulator from Huawei's torch_npu; set before apex loads.
__apexnpu_emulator__ = True

import sys as _sys  # noqa: E402

import torch  # noqa: E402

from apex.npu import emulator as _emulator  # noqa: E402

_emulator.install()

from .formats import get_npu_format, get_storage_size, npu_format_cast, npu_format_cast_  # noqa: E402,E501

npu = torch.npu
_sys.modules[__name__ + ".npu"] = npu  # `import torch_npu.npu`, `from torch_npu.npu import ...`
_sys.modules[__name__ + ".npu.amp"] = npu.amp

__all__ = ["npu", "get_storage_size", "npu_format_cast", "npu_format_cast_", "get_npu_format"]
