"""``torch_npu.npu_grouped_matmul_add(input, x, weight, group_list, *, transpose_x=True,
transpose_weight=False, group_type=2, group_list_type=0)`` (and ``_``, in place): grouped
matmuls split along K, accumulated into ``input`` ``[g, M, N]`` (fp32): for group ``i``, rows
``[k_i, k_{i+1})`` of ``x`` ``[K, M]`` and ``weight`` ``[K, N]`` give
``out[i] = input[i] + x[k_i:k_{i+1}].T @ weight[k_i:k_{i+1}]`` (the weight gradient of a
grouped matmul). ``group_list`` (int64) holds the groups' cumulative ends (``group_list_type``
0) or sizes (1). Only the documented layout (``transpose_x``, no ``transpose_weight``, K-axis
groups) exists. Computed in fp32; no backward."""

from __future__ import annotations

from typing import Optional

import torch

from ._no_derivative import without_derivative
from ._precision import upcast
from ._registry import operator


def _accumulate(
    name, y, x, weight, group_list, transpose_x, transpose_weight, group_type, group_list_type
):
    if not transpose_x or transpose_weight or group_type != 2:
        raise RuntimeError(
            f"{name}: only transpose_x=True, transpose_weight=False and "
            "group_type=2 (K-axis groups) are supported, as torch_npu documents"
        )
    if y.dtype != torch.float32 or y.dim() != 3:
        raise RuntimeError(f"{name}: input must be fp32 [g, M, N], got {y.dtype} {tuple(y.shape)}")
    if (
        x.dim() != 2
        or weight.dim() != 2
        or x.shape[0] != weight.shape[0]
        or x.dtype != weight.dtype
    ):
        raise RuntimeError(
            f"{name}: x [K, M] and weight [K, N] must share K and dtype, got "
            f"{tuple(x.shape)} {x.dtype} and {tuple(weight.shape)} "
            f"{weight.dtype}"
        )
    groups = [int(v) for v in group_list.cpu()]
    if group_list_type not in (0, 1, None):
        raise RuntimeError(
            f"{name}: group_list_type must be 0 (cumulative) or 1 (sizes), got {group_list_type}"
        )
    ends = groups if not group_list_type else list(torch.tensor(groups).cumsum(0).tolist())
    if (
        len(ends) != y.shape[0]
        or any(b < a for a, b in zip([0] + ends, ends))
        or (ends and (ends[0] < 0 or ends[-1] > x.shape[0]))
    ):
        raise RuntimeError(
            f"{name}: group_list {groups} must give {y.shape[0]} groups ending "
            f"in order within K = {x.shape[0]}"
        )
    if tuple(y.shape[1:]) != (x.shape[1], weight.shape[1]):
        raise RuntimeError(
            f"{name}: input must be [g, M, N] = [{len(ends)}, {x.shape[1]}, "
            f"{weight.shape[1]}], got {tuple(y.shape)}"
        )
    a, b = upcast(x).float(), upcast(weight).float()
    out = y.clone()
    for i, (start, end) in enumerate(zip([0] + ends[:-1], ends)):
        out[i] += a[start:end].t() @ b[start:end]
    return out


@operator
def npu_grouped_matmul_add(
    input: torch.Tensor,
    x: torch.Tensor,
    weight: torch.Tensor,
    group_list: torch.Tensor,
    *,
    transpose_x: bool = True,
    transpose_weight: bool = False,
    group_type: int = 2,
    group_list_type: Optional[int] = 0,
) -> torch.Tensor:
    return without_derivative(
        "npu_grouped_matmul_add",
        lambda y: _accumulate(
            "npu_grouped_matmul_add",
            y,
            x,
            weight,
            group_list,
            transpose_x,
            transpose_weight,
            group_type,
            group_list_type,
        ),
        input,
    )


@operator
def npu_grouped_matmul_add_(
    input: torch.Tensor,
    x: torch.Tensor,
    weight: torch.Tensor,
    group_list: torch.Tensor,
    *,
    transpose_x: bool = True,
    transpose_weight: bool = False,
    group_type: int = 2,
    group_list_type: Optional[int] = 0,
) -> torch.Tensor:
    out = _accumulate(
        "npu_grouped_matmul_add_",
        input.detach(),
        x,
        weight,
        group_list,
        transpose_x,
        transpose_weight,
        group_type,
        group_list_type,
    )
    with torch.no_grad():
        input.copy_(out)
    return input
