"""``torch_npu.contrib.function._matmul_transpose.MatmulApply``: ``a @ b.transpose(-2, -1)``
(attention's ``q @ k^T``) as one autograd function, as Ascend's Swin port calls it. Its
backward is the two products of torch_npu's: ``grad @ b`` for ``a`` and ``grad^T @ a`` for
``b``, each with ``npu_bmmV2`` (computed in fp32, stored once in the inputs' dtype). The
batch dimensions of ``a`` and ``b`` must be equal (the NPU kernel broadcasts none in its
backward)."""

from __future__ import annotations

from typing import Tuple

import torch

from ..._ops.bmm_v2 import npu_bmmV2

__all__: list = []


class MatmulApply(torch.autograd.Function):
    """``MatmulApply.apply(a, b)`` = ``a @ b.transpose(-2, -1)`` for ``(..., m, k)`` and
    ``(..., n, k)`` tensors of the same batch shape."""

    @staticmethod
    def forward(ctx, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:  # noqa: D102
        if a.dim() < 2 or a.shape[:-2] != b.shape[:-2] or a.size(-1) != b.size(-1):
            raise RuntimeError(
                "matmul_transpose: expected (..., m, k) and (..., n, k) tensors with the same "
                f"batch dimensions, got shapes {tuple(a.shape)} and {tuple(b.shape)}"
            )
        ctx.save_for_backward(a, b)
        return torch.matmul(a, b.transpose(-2, -1))

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:  # noqa: D102
        a, b = ctx.saved_tensors
        return npu_bmmV2(grad, b, []), npu_bmmV2(grad.transpose(-2, -1), a, [])
