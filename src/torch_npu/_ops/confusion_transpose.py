"""``torch_npu.npu_confusion_transpose(input, perm, shape, transpose_first)``: a permute and a
reshape fused: ``self.permute(perm).reshape(shape)`` when ``transpose_first``, else
``self.reshape(shape).permute(perm)``; the result is a new contiguous tensor. The backward is the
inverse (``npu_confusion_transpose_backward``). No arithmetic, so no rounding."""

from __future__ import annotations

from typing import Sequence

import torch

from ._registry import operator


@operator(tensor_method=True)
def npu_confusion_transpose(
    input: torch.Tensor, perm: Sequence[int], shape: Sequence[int], transpose_first: bool
) -> torch.Tensor:
    perm, shape = [int(p) for p in perm], [int(s) for s in shape]
    if transpose_first:
        out = input.permute(perm).reshape(shape)
    else:
        out = input.reshape(shape).permute(perm)
    return out.clone(memory_format=torch.contiguous_format)
