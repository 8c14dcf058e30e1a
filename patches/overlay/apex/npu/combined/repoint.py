"""Re-pointing a tensor into a combined buffer whatever its dtype, bfloat16 included.

``apex.contrib.combine_tensors.change_data_ptr`` takes fp32 and fp16 tensors only, as Ascend's
does; amp's combined gradients of a bf16 model (O2/O5 in bfloat16) put bf16 model gradients into
a bf16 buffer. This re-points them the same way: ``change_data_ptr`` for what it takes, else a
view of the buffer's storage made the tensor's data (through ``.data``, so a parameter keeps its
gradient accumulator), its storage size recorded as ``change_data_ptr`` records it.
"""

from __future__ import annotations

import torch

from apex.contrib.combine_tensors import change_data_ptr
from apex.contrib.combine_tensors.combine_tensors import SUPPORTED_DTYPES

from . import storage_sizes


def repoint(dst: torch.Tensor, flat: torch.Tensor, offset: int) -> None:
    """Make ``dst`` a contiguous view of ``flat`` (same dtype) starting ``offset`` elements in."""
    if (
        dst.dtype != flat.dtype
        or not flat.is_contiguous()
        or offset < 0
        or offset + dst.numel() > flat.numel()
    ):
        raise RuntimeError(
            f"repoint: a {dst.dtype} tensor of {dst.numel()} elements cannot go "
            f"at offset {offset} of a {flat.dtype} buffer of {flat.numel()}"
        )
    if dst.dtype in SUPPORTED_DTYPES:
        change_data_ptr(dst, flat, offset)
        return
    storage_sizes.record_repointed(dst, storage_sizes.storage_size(dst))
    storage = flat.untyped_storage() if hasattr(flat, "untyped_storage") else flat.storage()
    strides = torch.empty(dst.size(), device="meta").stride()
    with torch.no_grad():
        dst.data = flat.new_empty(0).set_(
            storage, flat.storage_offset() + offset, dst.size(), strides
        )
