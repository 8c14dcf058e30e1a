"""Merging attention computed in parts (sequence parallelism), as documented:

- ``npu_attention_update(lse, local_out, update_type) -> (out, lse_out)``: ``sp`` partial
  results, ``lse[i]`` (M,) fp32 and ``local_out[i]`` (M, D): ``lse_out = log(sum_i exp(lse_i))``
  (computed from their maximum) and ``out = sum_i local_out_i * exp(lse_i - lse_out)``; ``out``
  in ``local_out``'s dtype, ``lse_out`` fp32 (torch_npu: meaningful with ``update_type`` 1);
- ``npu_ring_attention_update(prev_attn_out, prev_softmax_max, prev_softmax_sum, cur_attn_out,
  cur_softmax_max, cur_softmax_sum, *, actual_seq_qlen=None, input_layout='SBH',
  input_softmax_layout='') -> (attn_out, softmax_max, softmax_sum)``: two flash-attention
  results merged by their softmax statistics, ``m = max(m1, m2)``,
  ``s = s1 exp(m1 - m) + s2 exp(m2 - m)``, ``out = o1 exp(m1 - m) s1 / s + o2 exp(m2 - m) s2 / s``;
  SBH: outputs ``(S, B, N * D)`` with statistics ``(B, N, S, 8)``; TND: ``(T, N, D)`` with
  ``(T, N, 8)`` (the layouts ``npu_fusion_attention`` returns).

Computed in fp32, outputs stored once. torch_npu registers no backward for either."""

from __future__ import annotations

from typing import List, Optional, Tuple

import torch

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator


@operator
def npu_attention_update(
    lse: List[torch.Tensor], local_out: List[torch.Tensor], update_type: int
) -> Tuple[torch.Tensor, torch.Tensor]:
    name = "npu_attention_update"
    if not lse or len(lse) != len(local_out):
        raise RuntimeError(
            f"{name}: lse and local_out must be lists of one length, got "
            f"{len(lse)} and {len(local_out)}"
        )
    if update_type not in (0, 1):
        raise RuntimeError(f"{name}: update_type must be 0 or 1, got {update_type}")
    rows = lse[0].shape
    for a, o in zip(lse, local_out):
        if (
            a.dim() != 1
            or a.shape != rows
            or o.dim() != 2
            or o.shape[0] != rows[0]
            or o.shape != local_out[0].shape
        ):
            raise RuntimeError(
                f"{name}: every lse must be (M,) and every local_out (M, D) alike, "
                f"got {tuple(a.shape)} and {tuple(o.shape)}"
            )

    def compute(*tensors):
        parts = [upcast(t).float() for t in tensors]
        lses, outs = torch.stack(parts[: len(lse)]), torch.stack(parts[len(lse) :])
        top = lses.max(0).values
        total = top + torch.log(torch.exp(lses - top).sum(0))
        out = (outs * torch.exp(lses - total).unsqueeze(-1)).sum(0)
        return store(out, local_out[0].dtype), total

    return without_derivative(name, compute, *lse, *local_out)


@operator
def npu_ring_attention_update(
    prev_attn_out: torch.Tensor,
    prev_softmax_max: torch.Tensor,
    prev_softmax_sum: torch.Tensor,
    cur_attn_out: torch.Tensor,
    cur_softmax_max: torch.Tensor,
    cur_softmax_sum: torch.Tensor,
    *,
    actual_seq_qlen: Optional[torch.Tensor] = None,
    input_layout: str = "SBH",
    input_softmax_layout: str = "",
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    name = "npu_ring_attention_update"
    if input_layout not in ("SBH", "TND"):
        raise RuntimeError(
            f"{name}: input_layout only supports 'SBH' or 'TND', got {input_layout!r}"
        )
    if input_softmax_layout not in ("", input_layout):
        raise RuntimeError(
            f"{name}: input_softmax_layout {input_softmax_layout!r} is emulated "
            f"only as '' or the input layout's"
        )
    if prev_attn_out.shape != cur_attn_out.shape or prev_attn_out.dtype != cur_attn_out.dtype:
        raise RuntimeError(
            f"{name}: prev_attn_out and cur_attn_out must have the same shape and dtype"
        )
    stats = (prev_softmax_max, prev_softmax_sum, cur_softmax_max, cur_softmax_sum)
    if any(s.shape != prev_softmax_max.shape or s.dtype != torch.float32 for s in stats):
        raise RuntimeError(f"{name}: the softmax tensors must be fp32 of one shape")
    if input_layout == "SBH":
        if prev_attn_out.dim() != 3 or prev_softmax_max.dim() != 4:
            raise RuntimeError(
                f"{name}: SBH needs (S, B, H) outputs and (B, N, S, 8) softmax statistics"
            )
        s, b, h = prev_attn_out.shape
        heads = prev_softmax_max.shape[1]
        if prev_softmax_max.shape[:3] != (b, heads, s) or h % heads:
            raise RuntimeError(
                f"{name}: statistics {tuple(prev_softmax_max.shape)} do not fit "
                f"outputs {tuple(prev_attn_out.shape)}"
            )
    else:
        if prev_attn_out.dim() != 3 or prev_softmax_max.shape[:2] != prev_attn_out.shape[:2]:
            raise RuntimeError(f"{name}: TND needs (T, N, D) outputs and (T, N, 8) statistics")

    def factor(x):
        """(B, N, S, 8) or (T, N, 8) statistics as a multiplier of the outputs' layout."""
        if input_layout == "TND":
            return x[..., :1]
        b, heads, s = x.shape[:3]
        d = prev_attn_out.shape[2] // heads
        return x[..., 0].permute(2, 0, 1).unsqueeze(-1).expand(s, b, heads, d).reshape(s, b, -1)

    def compute(o1, m1, s1, o2, m2, s2):
        o1, o2 = upcast(o1).float(), upcast(o2).float()
        m = torch.maximum(m1, m2)
        w1, w2 = s1 * torch.exp(m1 - m), s2 * torch.exp(m2 - m)
        total = w1 + w2
        out = o1 * factor(w1 / total) + o2 * factor(w2 / total)
        return store(out, prev_attn_out.dtype), m, total

    return without_derivative(
        name,
        compute,
        prev_attn_out,
        prev_softmax_max,
        prev_softmax_sum,
        cur_attn_out,
        cur_softmax_max,
        cur_softmax_sum,
    )
