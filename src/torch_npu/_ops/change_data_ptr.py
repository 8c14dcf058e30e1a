"""``torch_npu.npu_change_data_ptr(dst, src, index) -> int``: ``dst`` now reads and writes
``src``'s memory from element ``index`` of ``src``'s storage on; returns 0.

On the NPU this swaps the data pointer of ``dst``'s storage and keeps everything else of ``dst``:
its sizes, strides and storage offset, its storage size as ``torch_npu.get_storage_size``
reports it, its identity (a parameter stays the same parameter; autograd's accumulator and the
hooks on it are untouched). Its old values are not copied. It is the building block of
``torch_npu.utils.npu_combine_tensors`` and of fused optimizers that update many tensors as one.

The emulated NPU makes ``dst`` a view of ``src``'s memory (through ``.data``, which keeps
``dst``'s identity) that reports what the NPU's re-pointed storage reports (``own_storage``):
``dst.storage()`` has ``dst``'s storage size and ``src``'s storage keeps its own. Two things
differ from the NPU, both safer: ``src``'s memory lives as long as ``dst`` reads it (on the NPU it
is not owned, and freeing ``src`` leaves ``dst`` dangling), and views of ``dst`` made before the
call keep the old memory (on the NPU they share the storage whose pointer moved). The bound is
checked in elements: torch_npu compares ``index`` plus ``dst``'s storage in bytes with ``src``'s
in bytes, which lets a float32 ``dst`` run past ``src``'s end; the emulator refuses that rather
than write outside ``src``.
"""

from __future__ import annotations

import torch

from .._device import formats, own_storage
from ._registry import operator

DTYPES = (torch.float16, torch.float32, torch.bfloat16)


@operator
def npu_change_data_ptr(dst: torch.Tensor, src: torch.Tensor, index: int) -> int:
    if index < 0:
        raise RuntimeError(
            f"npu_change_data_ptr: expected offset (index) equal to or greater "
            f"than zero, got {index}"
        )
    if src.dtype != dst.dtype:
        raise RuntimeError(
            f"npu_change_data_ptr: expected src and dst tensors of the same "
            f"dtype, got src {src.dtype} and dst {dst.dtype}"
        )
    if src.dtype not in DTYPES:
        raise RuntimeError(
            f"npu_change_data_ptr: only float32, float16 and bfloat16 tensors "
            f"are supported, got {src.dtype}"
        )
    for name, t in (("dst", dst), ("src", src)):
        if not getattr(t, "is_npu", False):
            raise RuntimeError(
                f"npu_change_data_ptr: {name} is on {t.device}; both tensors must be on the NPU"
            )
    if dst.device != src.device:
        raise RuntimeError(
            f"npu_change_data_ptr: dst is on {dst.device} and src on "
            f"{src.device}; both must be on the same NPU"
        )
    dst_size, src_size = formats.get_storage_size(dst), formats.get_storage_size(src)
    if index + dst_size > src_size:
        raise RuntimeError(
            f"npu_change_data_ptr: offsets overflow: offset (index) {index} + "
            f"dst storage size {dst_size} > src storage size {src_size}"
        )
    own_storage.repoint(dst, src, index, dst_size)
    formats.keep_storage_size(dst, dst_size)
    return 0
