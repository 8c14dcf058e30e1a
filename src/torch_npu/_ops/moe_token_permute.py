"""``torch_npu.npu_moe_token_permute`` and ``npu_moe_token_unpermute``: Megatron's MoE token
dispatch and combine as one kernel each, with their backward.

``npu_moe_token_permute(tokens, indices, num_out_tokens=None, padded_mode=False)
-> (permuted_tokens, sorted_indices)``: ``indices`` (tokens, topk) (or 1-D, topk 1) name each
token's experts; ``sorted_indices`` (int32) is the stable argsort of the flattened indices and
``permuted_tokens[p] = tokens[sorted_indices[p] // topk]``, grouped by expert. ``num_out_tokens``
> 0 keeps that many rows (at most all); 0 or None all; < 0 drops that many from the end. The
gradient of ``tokens`` sums the gradients of its copies.

``npu_moe_token_unpermute(permuted_tokens, sorted_indices, probs=None, padded_mode=False,
restore_shape=None)``: the inverse, each token the sum over its topk copies (``topk`` = probs'
second axis, else 1) weighted by ``probs``: ``out[t] = sum_j probs[t, j] * row(t * topk + j)``,
``row(sorted_indices[p]) = permuted_tokens[p]`` (rows past the permuted ones: zero). Computed
in fp32 and stored once; gradients for ``permuted_tokens`` and ``probs``.

``padded_mode=True`` (capacity-padded dispatch) is not emulated (raises).
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import torch

from ._precision import store, upcast


def npu_moe_token_permute(tokens: torch.Tensor, indices: torch.Tensor,
                          num_out_tokens: Optional[int] = None,
                          padded_mode: bool = False) -> Tuple[torch.Tensor, torch.Tensor]:
    name = "npu_moe_token_permute"
    if padded_mode:
        raise NotImplementedError(f"{name}: padded_mode=True is not emulated")
    if tokens.dim() != 2:
        raise RuntimeError(f"{name}: tokens must be 2-D (tokens, hidden), got "
                           f"{tuple(tokens.shape)}")
    if indices.dim() not in (1, 2) or indices.shape[0] != tokens.shape[0]:
        raise RuntimeError(f"{name}: indices must be (tokens,) or (tokens, topk) for "
                           f"{tokens.shape[0]} tokens, got {tuple(indices.shape)}")
    if indices.is_floating_point():
        raise RuntimeError(f"{name}: indices must be integers, got {indices.dtype}")
    topk = indices.shape[1] if indices.dim() == 2 else 1
    flat = indices.reshape(-1).to(torch.long)
    total = flat.numel()
    wanted = int(num_out_tokens or 0)
    kept = min(wanted, total) if wanted > 0 else max(total + wanted, 0)
    sorted_indices = torch.sort(flat, stable=True)[1]
    rows = sorted_indices[:kept] // topk
    permuted = store(upcast(tokens)[rows], tokens.dtype)
    return permuted, sorted_indices.to(torch.int32)


def npu_moe_token_unpermute(permuted_tokens: torch.Tensor, sorted_indices: torch.Tensor,
                            probs: Optional[torch.Tensor] = None, padded_mode: bool = False,
                            restore_shape: Optional[Sequence[int]] = None) -> torch.Tensor:
    name = "npu_moe_token_unpermute"
    if padded_mode:
        raise NotImplementedError(f"{name}: padded_mode=True is not emulated")
    if permuted_tokens.dim() != 2 or sorted_indices.dim() != 1:
        raise RuntimeError(f"{name}: permuted_tokens must be 2-D and sorted_indices 1-D, got "
                           f"{tuple(permuted_tokens.shape)}, {tuple(sorted_indices.shape)}")
    if probs is not None and probs.dim() != 2:
        raise RuntimeError(f"{name}: probs must be (tokens, topk), got {tuple(probs.shape)}")
    topk = probs.shape[1] if probs is not None else 1
    total = sorted_indices.numel()
    if total % topk or permuted_tokens.shape[0] > total:
        raise RuntimeError(f"{name}: {total} sorted indices for topk {topk} and "
                           f"{permuted_tokens.shape[0]} permuted rows")
    count = permuted_tokens.shape[0]
    rows = upcast(permuted_tokens)
    placed = rows.new_zeros(total, rows.shape[1]).index_copy(
        0, sorted_indices[:count].to(torch.long), rows)
    placed = placed.reshape(total // topk, topk, rows.shape[1])
    if probs is not None:
        if probs.shape[0] != total // topk:
            raise RuntimeError(f"{name}: probs has {probs.shape[0]} rows for "
                               f"{total // topk} tokens")
        placed = placed * upcast(probs).unsqueeze(-1)
    return store(placed.sum(dim=1), permuted_tokens.dtype)
