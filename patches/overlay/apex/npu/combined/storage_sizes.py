"""How many elements a tensor's storage holds, as the NPU reports it, for apex's combined
buffers.

Huawei's ``change_data_ptr`` points a tensor into a combined buffer while its storage keeps its
own size, so ``torch_npu.get_storage_size(t)`` still gives t's storage size and
``get_aligned_storage_size(t)`` the slot t takes in the combined buffer. apex's ``combine_npu``
re-points a tensor as a view of the combined buffer instead (no raw pointers), so the size it
had is recorded when it is re-pointed; any other tensor's answer is torch_npu's, which counts
the elements a private format (FRACTAL_NZ, NC1HWC0, ...) stores beyond the tensor's own.
"""

from __future__ import annotations

import torch
import torch_npu

_SIZE = "_apexnpu_storage_size"


def record_repointed(tensor: torch.Tensor, size: int) -> None:
    """``tensor`` now points into a combined buffer; its storage keeps ``size`` elements."""
    setattr(tensor, _SIZE, size)


def storage_size(tensor: torch.Tensor) -> int:
    """Elements in ``tensor``'s storage as the NPU counts them."""
    recorded = getattr(tensor, _SIZE, None)
    if recorded is not None:
        return recorded
    return int(torch_npu.get_storage_size(tensor))
