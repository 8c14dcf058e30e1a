"""Where the NPU's autocast state lives: in torch, so torch and libraries read the same state.

torch 2.x keeps an autocast state per device type, and the emulated NPU is its PrivateUse1
device "npu": ``torch.is_autocast_enabled("npu")`` and ``torch.get_autocast_dtype("npu")`` are
the state, as under torch_npu, and ``torch.autocast("npu")`` sets it. torch 1.13 has no such
slot for an out-of-tree device; torch_npu 1.x keeps NPU autocast in the GPU's slot, so there
``torch.is_autocast_enabled()`` and ``torch.get_autocast_gpu_dtype()`` answer for the NPU. (On
a torch without CUDA nothing else reads that slot: it turns autocast on for CUDA tensors only.)

Also the ``torch.npu`` functions torch_npu has for it (``get_amp_supported_dtype``,
``is_autocast_enabled``, ...): torch 2.x's autocast asks ``get_amp_supported_dtype`` which
dtypes the device takes, and a 910 has no bfloat16.
"""

from __future__ import annotations

from typing import List

import torch

from ..._device import soc

DEVICE = "npu"
# torch 2.x (from 2.4): autocast state per device type, "npu" among them.
PER_DEVICE = hasattr(torch, "get_autocast_dtype")


def get_amp_supported_dtype() -> List[torch.dtype]:
    """The dtypes the NPU's autocast may cast to: bfloat16 only on chips that compute it."""
    if soc.has_bf16():
        return [torch.float16, torch.bfloat16, torch.float32]
    return [torch.float16, torch.float32]


def is_autocast_enabled() -> bool:
    """Whether the calling thread is inside an enabled NPU autocast region."""
    if PER_DEVICE:
        return torch.is_autocast_enabled(DEVICE)
    return torch.is_autocast_enabled()


def set_autocast_enabled(enabled: bool) -> None:
    if PER_DEVICE:
        torch.set_autocast_enabled(DEVICE, bool(enabled))
    else:
        torch.set_autocast_enabled(bool(enabled))


def get_autocast_dtype() -> torch.dtype:
    """The dtype NPU autocast casts lower-precision operations to (float16 unless set)."""
    if PER_DEVICE:
        return torch.get_autocast_dtype(DEVICE)
    return torch.get_autocast_gpu_dtype()


def set_autocast_dtype(dtype: torch.dtype) -> None:
    if PER_DEVICE:
        torch.set_autocast_dtype(DEVICE, dtype)
    else:
        torch.set_autocast_gpu_dtype(dtype)
