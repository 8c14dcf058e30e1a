"""``torch_npu.npu_gather_sparse_index(input, index)``: the rows of ``input`` (its first
dimension) named by ``index``, of shape ``index.shape + input.shape[1:]`` (``input[index]``),
with its gradient scattered back (torch_npu's ``npu_gather_sparse_index_backward``)."""

from __future__ import annotations

import torch

from ._registry import operator


@operator
def npu_gather_sparse_index(input: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    if index.dtype not in (torch.int32, torch.int64):
        raise RuntimeError(
            f"npu_gather_sparse_index: index must be int32 or int64, got {index.dtype}"
        )
    if input.dim() + index.dim() - 1 > 8:
        raise RuntimeError(
            "npu_gather_sparse_index: input.dim() + index.dim() - 1 must not be greater than 8"
        )
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= input.shape[0]):
        raise RuntimeError(f"npu_gather_sparse_index: indices must lie in [0, {input.shape[0]})")
    if input.dim() == 0:
        return input.clone()
    return input[index.long()]
