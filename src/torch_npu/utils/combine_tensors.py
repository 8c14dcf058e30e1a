"""``torch_npu.utils.npu_combine_tensors`` and its two helpers: many NPU tensors moved into one
new buffer, each taking exactly its storage size, one after another, so that an optimizer can
update them all as one tensor (Fairseq's fused Adam in Ascend's model zoo combines its
parameters, gradients and moments this way).

``npu_combine_tensors(list_of_tensor, require_copy_value=True)`` returns the buffer (1-D, zeros
where values are not copied), or None for an empty list or one whose storages hold nothing;
each tensor is re-pointed into it with ``torch_npu.npu_change_data_ptr``, its values copied
over unless ``require_copy_value`` is false. ``get_part_combined_tensor(combined, index, size)``
is a 1-D tensor of ``size`` elements reading the buffer from ``index``;
``is_combined_tensor_valid(combined, list_of_tensor)`` says whether each tensor still starts
inside the buffer and is contiguous. The arguments are checked as torch_npu checks them, with
its messages.
"""

from __future__ import annotations

from typing import Optional, Sequence

import torch

from .._device import formats
from .._ops.change_data_ptr import npu_change_data_ptr

__all__ = ["npu_combine_tensors", "get_part_combined_tensor", "is_combined_tensor_valid"]


def npu_combine_tensors(
    list_of_tensor: Sequence[Optional[torch.Tensor]], require_copy_value: bool = True
) -> Optional[torch.Tensor]:
    if len(list_of_tensor) == 0:
        return None
    if any(t is None for t in list_of_tensor):
        raise RuntimeError("Tensors to combine must not have `None`.")
    dtype = list_of_tensor[0].dtype
    total = 0
    for t in list_of_tensor:
        if t.dtype != dtype:
            raise RuntimeError("Tensors to combine must have the same dtype.")
        if t.device.type != "npu":
            raise RuntimeError(f"Tensors to combine must be on NPU, got {t.device.type}.")
        if not t.is_contiguous():
            raise RuntimeError("Tensors to combine must be contiguous.")
        total += formats.get_storage_size(t)
    if total == 0:
        return None
    combined = torch.zeros(total, dtype=dtype, device=list_of_tensor[0].device)
    index = 0
    # No no_grad here, as in torch_npu: combining parameters is the caller's to do under
    # no_grad (an optimizer's step is), else copying back into a leaf that requires grad fails.
    for t in list_of_tensor:
        values = t.clone() if require_copy_value else None
        npu_change_data_ptr(t, combined, index)
        if values is not None:
            t.copy_(values)
        index += formats.get_storage_size(t)
    return combined


def get_part_combined_tensor(
    combined_tensor: Optional[torch.Tensor], index: int, size: int
) -> Optional[torch.Tensor]:
    if combined_tensor is None or size == 0:
        return None
    available = formats.get_storage_size(combined_tensor)
    if index + size > available:
        raise RuntimeError(
            f"(index + size) ({index + size}) > "
            f"torch_npu.get_storage_size(combined_tensor) ({available})"
        )
    part = torch.zeros(size, dtype=combined_tensor.dtype, device=combined_tensor.device)
    npu_change_data_ptr(part, combined_tensor, index)
    return part


def is_combined_tensor_valid(
    combined_tensor: Optional[torch.Tensor], list_of_tensor: Sequence[Optional[torch.Tensor]]
) -> bool:
    if len(list_of_tensor) == 0:
        return True
    if combined_tensor is None:
        return False
    start = combined_tensor.data_ptr()
    end = start + formats.get_storage_size(combined_tensor) * combined_tensor.element_size()
    return all(
        t is not None and start <= t.data_ptr() < end and t.is_contiguous() for t in list_of_tensor
    )
