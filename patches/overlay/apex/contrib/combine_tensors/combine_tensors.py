"""Tensor fusion: many tensors re-pointed into one combined buffer that shares their memory.

Each tensor takes ``ceil(storage/16)*16 + 32`` elements of the combined buffer (the layout of the
NPU build), where ``storage`` is the size of the tensor's storage as the NPU reports it
(``torch_npu.get_storage_size``: a tensor in a private format such as FRACTAL_NZ stores more
elements than it has), so every tensor starts aligned and a fused kernel can run over the whole
buffer; the gaps stay zero. After ``combine_npu`` the original tensors are views of the combined buffer:
writing either one is seen by the other, and the combined buffer stays alive as long as any of
them does.
"""

from __future__ import annotations

from typing import List, Optional, Sequence

import torch

from apex.npu.combined import storage_sizes

SUPPORTED_DTYPES = (torch.float32, torch.float16)


class CombineError(RuntimeError, ValueError):
    """A bad argument to the combine functions: a RuntimeError, as Ascend's apex raises (its
    C++ extension's checks), and a ValueError, as this module raised before."""


class CombineTypeError(RuntimeError, TypeError):
    """A tensor of a dtype or device the combine functions do not take: a RuntimeError, as
    Ascend's apex raises, and a TypeError, as this module raised before."""


def get_aligned_storage_size(tensor: torch.Tensor, align: int = 16, pad: int = 32) -> int:
    """Elements ``tensor`` takes in a combined buffer: its storage size rounded up to ``align``
    elements, plus ``pad`` (Ascend's ``ceil(numel/16)*16 + 32``). For a tensor already in a
    combined buffer, the size of the storage it had, as the NPU keeps it."""
    if tensor.dtype not in SUPPORTED_DTYPES:
        raise CombineTypeError(
            f"get_aligned_storage_size: fused optimizers support "
            f"torch.float32 and torch.float16 tensors only, got {tensor.dtype}"
        )
    numel = storage_sizes.storage_size(tensor)
    return (numel + align - 1) // align * align + pad


def combined_offsets(tensors: Sequence[torch.Tensor]) -> List[int]:
    """Element offset of each tensor in the combined buffer, then the total size."""
    offsets = [0]
    for t in tensors:
        offsets.append(offsets[-1] + get_aligned_storage_size(t))
    return offsets


def change_data_ptr(dst: torch.Tensor, src: torch.Tensor, offset: int) -> None:
    """Re-point ``dst`` to ``src``'s memory starting ``offset`` elements into ``src``.

    ``dst`` keeps its shape (now contiguous) and object identity; its old values are not copied.
    """
    if offset < 0:
        raise CombineError(f"change_data_ptr: offset must be non-negative, got {offset}")
    if dst.dtype != src.dtype or dst.dtype not in SUPPORTED_DTYPES:
        raise CombineTypeError(
            f"change_data_ptr: dst and src must both be float32 or float16, "
            f"got {dst.dtype} and {src.dtype}"
        )
    if not src.is_contiguous():
        raise CombineError("change_data_ptr: src must be contiguous")
    if offset + dst.numel() > src.numel():
        raise CombineError(
            f"change_data_ptr: dst ({dst.numel()} elements) at offset {offset} "
            f"extends past src ({src.numel()} elements)"
        )
    storage_sizes.record_repointed(dst, storage_sizes.storage_size(dst))
    with torch.no_grad():
        # A fresh tensor on src's storage becomes dst's data. Not dst.set_(): on a parameter that
        # replaces its gradient accumulator, and the hooks on the old one (torch DDP's) go quiet.
        storage = src.untyped_storage() if hasattr(src, "untyped_storage") else src.storage()
        slot = src.new_empty(0).set_(
            storage, src.storage_offset() + offset, dst.size(), _contiguous_strides(dst.size())
        )
        dst.data = slot


def _contiguous_strides(size: torch.Size) -> List[int]:
    strides, running = [], 1
    for extent in reversed(list(size)):
        strides.append(running)
        running *= max(extent, 1)
    return list(reversed(strides))


def combine_npu(
    list_of_tensor: Sequence[Optional[torch.Tensor]], require_copy_value: bool = True
) -> Optional[torch.Tensor]:
    """Combine the tensors into one new buffer and re-point each of them into it.

    Returns the combined buffer (1-D, zero in the gaps), or None for an empty list. All tensors
    must share one dtype (float32 or float16) and device. With ``require_copy_value`` the values
    are kept; without it the re-pointed tensors read zero.
    """
    tensors = [t for t in list_of_tensor if t is not None]
    if not tensors:
        return None
    dtype, device = tensors[0].dtype, tensors[0].device
    for i, t in enumerate(tensors):
        if t.dtype != dtype or t.device != device:
            raise CombineTypeError(
                f"combine_npu: tensor {i} is {t.dtype} on {t.device}, "
                f"expected {dtype} on {device} like tensor 0"
            )
    if dtype not in SUPPORTED_DTYPES:
        raise CombineTypeError(f"combine_npu: {dtype} is not supported (float32 or float16 only)")
    offsets = combined_offsets(tensors)
    combined = torch.zeros(offsets[-1], dtype=dtype, device=device)
    with torch.no_grad():
        for t, offset in zip(tensors, offsets):
            if require_copy_value:
                combined[offset : offset + t.numel()].copy_(t.reshape(-1))
            change_data_ptr(t, combined, offset)
    return combined


def get_part_combined_tensor(
    combined_tensor: Optional[torch.Tensor], index: int, size: int
) -> Optional[torch.Tensor]:
    """The ``size`` elements of the combined buffer starting at element ``index`` (sharing its
    memory), or None when there is no buffer or nothing to take."""
    if combined_tensor is None or size == 0:
        return None
    available = storage_sizes.storage_size(combined_tensor)
    if index < 0 or size < 0 or index + size > available:
        raise CombineError(
            f"get_part_combined_tensor: [{index}, {index + size}) is outside the "
            f"combined tensor's storage of {available} elements"
        )
    return combined_tensor.reshape(-1)[index : index + size]


def is_combined_tensor_valid(
    combined_tensor: Optional[torch.Tensor], list_of_tensor: Sequence[Optional[torch.Tensor]]
) -> bool:
    """Whether every tensor of the list (any subset of what was combined) still points into the
    combined buffer's storage. An empty list is valid; a None tensor, or no buffer for a
    non-empty list, is not."""
    if len(list_of_tensor) == 0:
        return True
    if combined_tensor is None:
        return False
    start = combined_tensor.data_ptr()
    end = start + storage_sizes.storage_size(combined_tensor) * combined_tensor.element_size()
    return all(t is not None and start <= t.data_ptr() < end for t in list_of_tensor)
