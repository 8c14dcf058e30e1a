"""``torch_npu.npu_batch_gather_matmul(input, x, weight_b, indices, weight_a=None, layer_idx=0,
scale=1e-3, y_offset=0, y_slice_size=-1)`` (and ``_``, in place): multi-LoRA's BGMV. For each
row ``i`` of ``x`` ``[batch, H1]`` whose adapter ``a = indices[i]`` is not negative,
``y[i, y_offset:y_offset + H2] += scale * (x[i] @ weight_a[a, layer_idx].T) @
weight_b[a, layer_idx].T`` (without ``weight_a``: ``scale * x[i] @ weight_b[a, layer_idx].T``),
``weight_a`` ``[W, L, R, H1]``, ``weight_b`` ``[W, L, H2, R]``; ``y`` is ``input`` (updated in
place by the ``_`` form, a new tensor otherwise). ``y_slice_size`` (-1: all of ``H2``) must be
``H2``, the width the product has. Computed in fp32, stored once. No backward (inference)."""

from __future__ import annotations

from typing import Optional

import torch

from ._no_derivative import without_derivative
from ._precision import store, store_into, upcast
from ._registry import operator


def _update(name, y, x, weight_b, indices, weight_a, layer_idx, scale, y_offset, y_slice_size):
    if x.dim() != 2 or y.dim() != 2 or x.shape[0] != y.shape[0]:
        raise RuntimeError(
            f"{name}: input [batch, y_column] and x [batch, H1] must share the "
            f"batch, got {tuple(y.shape)} and {tuple(x.shape)}"
        )
    if indices.dim() != 1 or indices.shape[0] != x.shape[0]:
        raise RuntimeError(
            f"{name}: indices must be [batch] = [{x.shape[0]}], got {tuple(indices.shape)}"
        )
    if weight_b.dim() != 4 or not 0 <= layer_idx < weight_b.shape[1]:
        raise RuntimeError(
            f"{name}: weight_b must be [W, L, H2, R] with layer_idx < L, got "
            f"{tuple(weight_b.shape)} and {layer_idx}"
        )
    inner = x.shape[1] if weight_a is None else weight_a.shape[2]
    if weight_a is not None and (
        weight_a.dim() != 4
        or weight_a.shape[:2] != weight_b.shape[:2]
        or weight_a.shape[3] != x.shape[1]
    ):
        raise RuntimeError(
            f"{name}: weight_a must be [W, L, R, H1] = [{weight_b.shape[0]}, "
            f"{weight_b.shape[1]}, R, {x.shape[1]}], got "
            f"{tuple(weight_a.shape)}"
        )
    if weight_b.shape[3] != inner:
        raise RuntimeError(f"{name}: weight_b's last dimension {weight_b.shape[3]} must be {inner}")
    width = weight_b.shape[2]
    if y_slice_size not in (-1, width) or not 0 <= y_offset <= y.shape[1] - width:
        raise RuntimeError(
            f"{name}: the update of width H2 = {width} (y_slice_size "
            f"{y_slice_size}) at y_offset {y_offset} must fit y's {y.shape[1]} "
            "columns"
        )
    rows = indices.long()
    if bool((rows >= weight_b.shape[0]).any()):
        raise RuntimeError(f"{name}: indices must be below W = {weight_b.shape[0]}")
    used = rows >= 0
    v = upcast(x).float()
    if weight_a is not None:
        wa = upcast(weight_a).float()[rows.clamp(min=0), layer_idx]  # [batch, R, H1]
        v = torch.bmm(wa, v.unsqueeze(-1)).squeeze(-1)
    wb = upcast(weight_b).float()[rows.clamp(min=0), layer_idx]  # [batch, H2, R]
    delta = float(scale) * torch.bmm(wb, v.unsqueeze(-1)).squeeze(-1)
    out = upcast(y).float().clone()
    out[:, y_offset : y_offset + width] += delta * used.unsqueeze(-1).to(delta.dtype)
    return out


@operator
def npu_batch_gather_matmul(
    input: torch.Tensor,
    x: torch.Tensor,
    weight_b: torch.Tensor,
    indices: torch.Tensor,
    weight_a: Optional[torch.Tensor] = None,
    layer_idx: int = 0,
    scale: float = 1e-3,
    y_offset: int = 0,
    y_slice_size: int = -1,
) -> torch.Tensor:
    def compute(y):
        return store(
            _update(
                "npu_batch_gather_matmul",
                y,
                x,
                weight_b,
                indices,
                weight_a,
                layer_idx,
                scale,
                y_offset,
                y_slice_size,
            ),
            y.dtype,
        )

    return without_derivative("npu_batch_gather_matmul", compute, input)


@operator
def npu_batch_gather_matmul_(
    input: torch.Tensor,
    x: torch.Tensor,
    weight_b: torch.Tensor,
    indices: torch.Tensor,
    weight_a: Optional[torch.Tensor] = None,
    layer_idx: int = 0,
    scale: float = 1e-3,
    y_offset: int = 0,
    y_slice_size: int = -1,
) -> torch.Tensor:
    out = _update(
        "npu_batch_gather_matmul_",
        input.detach(),
        x,
        weight_b,
        indices,
        weight_a,
        layer_idx,
        scale,
        y_offset,
        y_slice_size,
    )
    store_into(input, out)
    return input
