"""How many elements a tensor's storage holds, as the NPU reports it.

On the NPU, ``change_data_ptr`` points a tensor into a combined buffer while its storage keeps its
own size, so ``torch_npu.get_storage_size(t)`` still gives t's storage size and apex's
``get_aligned_storage_size(t)`` the slot t takes in the combined buffer. On the emulated NPU a
re-pointed tensor's storage is the combined buffer's, so the size it had is recorded when it is
re-pointed. For any other tensor on a real NPU the answer is torch_npu's own, which counts the elements a private
format (FRACTAL_NZ, NC1HWC0, ...) stores beyond the tensor's own.
"""
from __future__ import annotations

import torch

from . import backend

_SIZE = "_apexnpu_storage_size"


def record_repointed(tensor: torch.Tensor, size: int) -> None:
    """``tensor`` now points into a combined buffer; its storage keeps ``size`` elements."""
    setattr(tensor, _SIZE, size)


def record_format_storage(tensor: torch.Tensor, size: int) -> None:
    """``tensor`` was cast to a private format that stores ``size`` elements (emulated NPU)."""
    setattr(tensor, _SIZE, size)


def storage_size(tensor: torch.Tensor) -> int:
    """Elements in ``tensor``'s storage as the NPU counts them."""
    recorded = getattr(tensor, _SIZE, None)
    if recorded is not None:
        return recorded
    real = backend.real_torch_npu()
    if real is not None:
        return int(real.get_storage_size(tensor))
    return tensor.storage().size()
