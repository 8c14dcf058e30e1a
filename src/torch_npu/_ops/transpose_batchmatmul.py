"""``torch_npu.npu_transpose_batchmatmul(input, weight, *, bias=None, scale=None, perm_x1=None,
perm_x2=None, perm_y=None, batch_split_factor=1)``: a batched matmul with its operands and
result permuted: ``input`` (3-D) permuted by ``perm_x1`` to ``[B, M, K]``, ``weight`` by
``perm_x2`` to ``[B, K, N]``, ``y = input @ weight + bias`` permuted by ``perm_y`` (default:
identities). Computed in fp32, stored once. ``scale`` (the int8 output quantisation of
``npu_trans_quant_param``) and ``batch_split_factor`` other than 1 are quantised-inference
options and refused. torch_npu registers no backward."""

from __future__ import annotations

from typing import Optional, Sequence

import torch

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator


def _perm(name: str, what: str, perm: Optional[Sequence[int]]) -> list:
    perm = [0, 1, 2] if perm is None else [int(p) for p in perm]
    if sorted(perm) != [0, 1, 2]:
        raise RuntimeError(f"{name}: {what} must be a permutation of [0, 1, 2], got {perm}")
    return perm


@operator
def npu_transpose_batchmatmul(
    input: torch.Tensor,
    weight: torch.Tensor,
    *,
    bias: Optional[torch.Tensor] = None,
    scale: Optional[torch.Tensor] = None,
    perm_x1: Optional[Sequence[int]] = None,
    perm_x2: Optional[Sequence[int]] = None,
    perm_y: Optional[Sequence[int]] = None,
    batch_split_factor: Optional[int] = 1,
) -> torch.Tensor:
    name = "npu_transpose_batchmatmul"
    if scale is not None or (batch_split_factor or 1) != 1:
        raise RuntimeError(
            f"{name}: scale and batch_split_factor (int8 output quantisation) are not emulated"
        )
    if input.dim() != 3 or weight.dim() != 3:
        raise RuntimeError(
            f"{name}: input and weight must be 3-D, got {tuple(input.shape)} and "
            f"{tuple(weight.shape)}"
        )
    p1, p2, py = (
        _perm(name, w, p)
        for w, p in (("perm_x1", perm_x1), ("perm_x2", perm_x2), ("perm_y", perm_y))
    )
    x1, x2 = input.permute(p1), weight.permute(p2)
    if x1.shape[0] != x2.shape[0] or x1.shape[2] != x2.shape[1]:
        raise RuntimeError(
            f"{name}: [B, M, K] {tuple(x1.shape)} and [B, K, N] {tuple(x2.shape)} do not match"
        )
    if bias is not None and tuple(bias.shape) != (x2.shape[2],):
        raise RuntimeError(f"{name}: bias must be ({x2.shape[2]},), got {tuple(bias.shape)}")

    def compute(a, b, *rest):
        y = torch.bmm(upcast(a).float(), upcast(b).float())
        if rest:
            y = y + upcast(rest[0]).float()
        return store(y.permute(py).contiguous(), input.dtype)

    args = (x1, x2) + ((bias,) if bias is not None else ())
    return without_derivative(name, compute, *args)
