"""torch_npu's MoE routing operators (inference kernels: no backward, one through them raises):

- ``npu_moe_gating_top_k_softmax(x, finished=None, k=1) -> (y, expert_idx, row_idx)``: softmax
  over the last axis (fp32, stored once in x's dtype), its k largest values ``y`` by falling
  value (ties: the lower expert first) and their experts (int32); ``row_idx[i, j] = j * rows +
  i`` (int32, rows = all of x but the last axis). Rows marked ``finished`` get expert ``E``
  (the expert count: no expert), as the kernel marks them.
- ``npu_moe_gating_top_k_softmax_v2(x, *, k=1, finished=None, renorm=0, output_softmax=False)
  -> (y, expert_idx, softmax)``: renorm 0 as v1 (``softmax`` the fp32 softmax when
  ``output_softmax``, else empty); renorm 1 takes the top k logits first and softmaxes them.
- ``npu_moe_init_routing(x, row_idx, expert_idx, active_num) -> (expanded_x, expanded_row_idx,
  expanded_expert_idx)``: the (expert, row_idx) pairs sorted by expert then row_idx;
  ``expanded_row_idx[sorted_row_idx[i]] = i``; ``expanded_x[i] = x[sorted_row_idx[i] % rows]``
  for the first ``min(rows, active_num) * k`` rows.
- ``npu_moe_init_routing_v2(x, expert_idx, *, scale=None, offset=None, active_num=-1,
  expert_capacity=-1, expert_num=-1, drop_pad_mode=0, expert_tokens_num_type=0,
  expert_tokens_num_flag=False, quant_mode=-1, active_expert_range=[], row_idx_type=0)
  -> (expanded_x, expanded_row_idx, expert_token_cumsum_or_count, expanded_scale)``: the
  assignments ``j = row * k + slot`` whose expert lies in ``active_expert_range`` (default
  ``[0, expert_num)``) sorted stably by expert, at most ``active_num`` (> 0) of them;
  ``expanded_x[p] = x[order[p] // k]``, the rest zeros; ``expanded_row_idx`` gathers
  (``row_idx_type`` 0: ``[order[p]] = p``, -1 where dropped) or scatters (1: ``[p] =
  order[p]``, -1 past the kept ones); the token counts per expert of the range as a cumsum
  (type 0), counts (1) or (expert, count) pairs of the experts with tokens, then a (0, 0) end
  and zeros (2; shape (expert_num, 2)), int64; ``expanded_scale[p] = scale[order[p] // k]``
  (zeros without scale). Quantisation (``quant_mode`` other than -1, ``offset``) and the
  drop-pad mode raise.
- ``npu_moe_finalize_routing(expanded_permuted_rows, skip1, skip2, bias, scales,
  expanded_src_to_dst_row, export_for_source_row, drop_pad_mode=0, k=1)``: ``out[i] = skip1[i]
  + skip2[i] + sum_k scales[i, k] * (expanded[src_to_dst[i + k * rows]] + bias[expert[i, k]])``
  (scales None: 1), fp32, stored once; the drop-pad modes raise.
- ``npu_moe_compute_expert_tokens(sorted_expert_for_source_row, num_expert)``: for each expert
  the end (exclusive) of its rows in the sorted list, int32.
"""

from __future__ import annotations

from typing import Optional, Sequence

import torch

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator


def _sorted_desc(values: torch.Tensor, k: int):
    order = torch.sort(values, dim=-1, descending=True, stable=True)[1][..., :k]
    return torch.gather(values, -1, order), order


def _gating(name: str, x: torch.Tensor, finished, k: int, renorm: int):
    if x.dim() not in (2, 3):
        raise RuntimeError(f"{name}: x must be 2-D or 3-D, got {tuple(x.shape)}")
    experts = x.shape[-1]
    if not 0 < int(k) <= experts:
        raise RuntimeError(f"{name}: k={k} is not in (0, {experts}]")
    x32 = upcast(x).float()
    if renorm:
        top, idx = _sorted_desc(x32, int(k))
        y = torch.softmax(top, dim=-1)
        probs = None
    else:
        probs = torch.softmax(x32, dim=-1)
        y, idx = _sorted_desc(probs, int(k))
    idx = idx.to(torch.int32)
    if finished is not None:
        if tuple(finished.shape) != tuple(x.shape[:-1]):
            raise RuntimeError(
                f"{name}: finished of shape {tuple(finished.shape)} is not x's "
                f"{tuple(x.shape[:-1])}"
            )
        idx = idx.masked_fill(finished.to(torch.bool).unsqueeze(-1), experts)
    return store(y, x.dtype), idx, probs


@operator
def npu_moe_gating_top_k_softmax(
    x: torch.Tensor, finished: Optional[torch.Tensor] = None, k: int = 1
):
    name = "npu_moe_gating_top_k_softmax"

    def compute(x, finished):
        y, idx, _ = _gating(name, x, finished, k, 0)
        rows = idx.numel() // int(k)
        row_idx = (
            torch.arange(int(k), device=x.device, dtype=torch.int32).reshape(-1, 1) * rows
            + torch.arange(rows, device=x.device, dtype=torch.int32)
        ).t()
        return y, idx, row_idx.reshape(idx.shape).contiguous()

    return without_derivative(name, compute, x, finished)


@operator
def npu_moe_gating_top_k_softmax_v2(
    x: torch.Tensor,
    *,
    k: int = 1,
    finished: Optional[torch.Tensor] = None,
    renorm: int = 0,
    output_softmax: bool = False,
):
    name = "npu_moe_gating_top_k_softmax_v2"
    if int(renorm) not in (0, 1):
        raise RuntimeError(f"{name}: renorm must be 0 or 1, got {renorm}")

    def compute(x, finished):
        y, idx, probs = _gating(name, x, finished, k, int(renorm))
        if probs is None or not output_softmax:
            probs = torch.zeros(0, dtype=torch.float32, device=x.device)
        return y, idx, probs

    return without_derivative(name, compute, x, finished)


@operator
def npu_moe_init_routing(
    x: torch.Tensor, row_idx: torch.Tensor, expert_idx: torch.Tensor, active_num: int
):
    name = "npu_moe_init_routing"
    if (
        x.dim() != 2
        or expert_idx.dim() != 2
        or row_idx.shape != expert_idx.shape
        or expert_idx.shape[0] != x.shape[0]
    ):
        raise RuntimeError(
            f"{name}: x (rows, H) {tuple(x.shape)}, row_idx and expert_idx "
            f"(rows, k) {tuple(row_idx.shape)}, {tuple(expert_idx.shape)}"
        )
    if int(active_num) < 0:
        raise RuntimeError(f"{name}: active_num must not be negative, got {active_num}")

    def compute(x, row_idx, expert_idx):
        rows, k = expert_idx.shape
        experts = expert_idx.reshape(-1).to(torch.long)
        sources = row_idx.reshape(-1).to(torch.long)
        # sort by expert, then by row_idx: one key holding both
        order = torch.argsort(experts * (rows * k + 1) + sources)
        sorted_rows = sources[order]
        expanded_row_idx = torch.empty_like(sorted_rows)
        expanded_row_idx[sorted_rows] = torch.arange(rows * k, device=x.device)
        kept = min(rows, int(active_num)) * k
        expanded_x = x[sorted_rows[:kept] % rows]
        return (
            expanded_x.contiguous(),
            expanded_row_idx.to(torch.int32),
            experts[order].to(torch.int32),
        )

    return without_derivative(name, compute, x, row_idx, expert_idx)


@operator
def npu_moe_init_routing_v2(
    x: torch.Tensor,
    expert_idx: torch.Tensor,
    *,
    scale: Optional[torch.Tensor] = None,
    offset: Optional[torch.Tensor] = None,
    active_num: int = -1,
    expert_capacity: int = -1,
    expert_num: int = -1,
    drop_pad_mode: int = 0,
    expert_tokens_num_type: int = 0,
    expert_tokens_num_flag: bool = False,
    quant_mode: int = -1,
    active_expert_range: Sequence[int] = (),
    row_idx_type: int = 0,
):
    name = "npu_moe_init_routing_v2"
    if int(quant_mode) != -1 or offset is not None:
        raise NotImplementedError(
            f"{name}: quantisation (quant_mode={quant_mode}, offset) is not "
            "emulated; quant_mode -1 is"
        )
    if int(drop_pad_mode) != 0:
        raise NotImplementedError(f"{name}: drop_pad_mode={drop_pad_mode} is not emulated; 0 is")
    if x.dim() != 2 or expert_idx.dim() != 2 or expert_idx.shape[0] != x.shape[0]:
        raise RuntimeError(
            f"{name}: x (rows, H) {tuple(x.shape)} and expert_idx (rows, k) "
            f"{tuple(expert_idx.shape)}"
        )
    if int(expert_tokens_num_type) not in (0, 1, 2) or int(row_idx_type) not in (0, 1):
        raise RuntimeError(f"{name}: expert_tokens_num_type must be 0-2 and row_idx_type 0-1")
    if active_expert_range:
        start, end = (int(v) for v in active_expert_range)
        if not 0 <= start < end:
            raise RuntimeError(
                f"{name}: active_expert_range {list(active_expert_range)} is not "
                "an increasing pair of non-negative experts"
            )
    elif int(expert_num) > 0:
        start, end = 0, int(expert_num)
    else:
        raise RuntimeError(f"{name}: expert_num (> 0) or active_expert_range is needed")
    if scale is not None and (scale.dim() != 1 or scale.shape[0] != x.shape[0]):
        raise RuntimeError(f"{name}: scale must have shape (rows,) = ({x.shape[0]},)")

    def compute(x, expert_idx, scale):
        rows, k = expert_idx.shape
        experts = expert_idx.reshape(-1).to(torch.long)
        valid = (experts >= start) & (experts < end)
        key = torch.where(valid, experts, torch.full_like(experts, end))
        order = torch.sort(key, stable=True)[1]
        available = int(valid.sum())
        counts = torch.bincount(experts[valid] - start, minlength=end - start)
        if int(active_num) > 0:
            available = min(available, int(active_num))
        kept = order[:available]
        expanded_x = x.new_zeros(rows * k, x.shape[1])
        expanded_x[:available] = x[kept // k]
        expanded_row_idx = torch.full((rows * k,), -1, dtype=torch.int32, device=x.device)
        if int(row_idx_type) == 0:
            expanded_row_idx[kept] = torch.arange(available, dtype=torch.int32, device=x.device)
        else:
            expanded_row_idx[:available] = kept.to(torch.int32)
        if int(expert_tokens_num_type) == 0:
            tokens = torch.cumsum(counts, 0)
        elif int(expert_tokens_num_type) == 1:
            tokens = counts
        else:
            width = int(expert_num) if int(expert_num) > 0 else end - start
            tokens = torch.zeros(width, 2, dtype=torch.int64, device=x.device)
            used = (counts > 0).nonzero().reshape(-1)
            tokens[: used.numel(), 0] = used + start
            tokens[: used.numel(), 1] = counts[used]
        expanded_scale = torch.zeros(rows * k, dtype=torch.float32, device=x.device)
        if scale is not None:
            expanded_scale[:available] = scale.float()[kept // k]
        return expanded_x, expanded_row_idx, tokens.to(torch.int64), expanded_scale

    return without_derivative(name, compute, x, expert_idx, scale)


@operator
def npu_moe_finalize_routing(
    expanded_permuted_rows: torch.Tensor,
    skip1: Optional[torch.Tensor],
    skip2: Optional[torch.Tensor],
    bias: Optional[torch.Tensor],
    scales: Optional[torch.Tensor],
    expanded_src_to_dst_row: torch.Tensor,
    export_for_source_row: Optional[torch.Tensor],
    drop_pad_mode: Optional[int] = 0,
    k: Optional[int] = 1,
):
    name = "npu_moe_finalize_routing"
    if drop_pad_mode not in (None, 0):
        raise NotImplementedError(f"{name}: drop_pad_mode={drop_pad_mode} is not emulated; 0 is")
    if bias is not None and export_for_source_row is None:
        raise RuntimeError(f"{name}: bias needs export_for_source_row (each row's experts)")
    if expanded_permuted_rows.dim() != 2:
        raise RuntimeError(
            f"{name}: expanded_permuted_rows must be (rows * k, H), got "
            f"{tuple(expanded_permuted_rows.shape)}"
        )

    def compute(expanded, skip1, skip2, bias, scales, src_to_dst, experts):
        top = scales.shape[1] if scales is not None else int(k or 1)
        rows = src_to_dst.numel() // top
        dst = src_to_dst.to(torch.long).reshape(top, rows).t()  # [i, k] = entry i + k * rows
        picked = upcast(expanded)[dst]  # (rows, k, H)
        if bias is not None:
            picked = picked + upcast(bias)[experts.to(torch.long)]
        if scales is not None:
            picked = picked * upcast(scales).unsqueeze(-1)
        out = picked.sum(dim=1)
        for skip in (skip1, skip2):
            if skip is not None:
                out = out + upcast(skip)
        return store(out, expanded.dtype)

    return without_derivative(
        name,
        compute,
        expanded_permuted_rows,
        skip1,
        skip2,
        bias,
        scales,
        expanded_src_to_dst_row,
        export_for_source_row,
    )


@operator
def npu_moe_compute_expert_tokens(
    sorted_expert_for_source_row: torch.Tensor, num_expert: int
) -> torch.Tensor:
    name = "npu_moe_compute_expert_tokens"
    if sorted_expert_for_source_row.dim() != 1:
        raise RuntimeError(f"{name}: sorted_expert_for_source_row must be 1-D")
    if not 0 < int(num_expert) <= 2048:
        raise RuntimeError(f"{name}: num_expert={num_expert} is not in (0, 2048]")
    values = sorted_expert_for_source_row.to(torch.long)
    if values.numel() > 1 and bool((values[1:] < values[:-1]).any()):
        raise RuntimeError(f"{name}: sorted_expert_for_source_row is not sorted")
    experts = torch.arange(int(num_expert), device=values.device)
    ends = torch.searchsorted(values.contiguous(), experts, right=True)
    return ends.to(sorted_expert_for_source_row.dtype)
