"""``torch_npu.npu_moe_token_permute`` and ``npu_moe_token_unpermute``: Megatron's MoE token
dispatch and combine as one kernel each, with their backward.

``npu_moe_token_permute(tokens, indices, num_out_tokens=None, padded_mode=False)
-> (permuted_tokens, sorted_indices)``: ``indices`` (tokens, topk) (or 1-D, topk 1) name each
token's experts; the assignments ``i = t * topk + j`` sorted stably by expert give the rows,
grouped by expert, and ``sorted_indices`` (int32) is CANN's ``argsort(argsort(flatten(
indices)))``: where assignment i went, ``permuted_tokens[sorted_indices[i]] = tokens[i //
topk]``. ``num_out_tokens`` > 0 keeps that many rows (at most all); 0 or None all; < 0 drops
that many from the end. The gradient of ``tokens`` sums the gradients of its copies.

``npu_moe_token_unpermute(permuted_tokens, sorted_indices, probs=None, padded_mode=False,
restore_shape=None)``: the inverse, each token the sum over its topk copies (``topk`` = probs'
second axis, else 1) weighted by ``probs``: ``out[t] = sum_j probs[t, j] *
permuted_tokens[sorted_indices[t * topk + j]]`` (an index past the permuted rows, or
negative, adds nothing). Computed in fp32 and stored once; gradients for ``permuted_tokens``
and ``probs``.

``padded_mode=True`` (capacity-padded dispatch) is not emulated (raises).

``npu_moe_token_permute_with_routing_map(tokens, routing_map, *, probs=None,
num_out_tokens=None, drop_and_pad=False) -> (permuted_tokens, permuted_probs, sorted_indices)``:
``routing_map`` (tokens, experts) bool/int8 marks each token's experts. Without drop_and_pad
(every token routed to ``top_k = num_out_tokens // tokens`` experts; default 1): the tokens of
expert 0 in token order, then expert 1's... (``token_ids``); ``permuted_probs`` the matching
``probs[token, expert]``; ``sorted_indices`` = the stable argsort of ``token_ids``, so
``permuted_tokens[sorted_indices[i]] = tokens[i // top_k]``. With drop_and_pad: ``capacity =
num_out_tokens // experts`` slots per expert, its routed tokens first in token order then
unrouted ones as padding (Megatron's stable descending argsort of the map's rows; the
documentation's ``argsort(routing_map.T)`` leaves that order open), ``sorted_indices`` the
slots' token ids. Gradients for tokens and probs.

``npu_moe_token_unpermute_with_routing_map(permuted_tokens, sorted_indices, restore_shape, *,
probs=None, routing_map=None, drop_and_pad=False)``: the inverse sum into ``restore_shape``
(tokens, hidden): without drop_and_pad token ``t`` adds the rows ``sorted_indices[t * top_k +
j]`` (-1: an unused slot) times their ``probs`` taken through ``routing_map`` as the permute
took them; with drop_and_pad slot ``i`` adds to token ``sorted_indices[i]`` times
``probs[token, i // capacity]``. fp32, stored once; gradients for permuted_tokens and probs.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import torch

from ._precision import store, upcast
from ._registry import operator


@operator
def npu_moe_token_permute(
    tokens: torch.Tensor,
    indices: torch.Tensor,
    num_out_tokens: Optional[int] = None,
    padded_mode: bool = False,
) -> Tuple[torch.Tensor, torch.Tensor]:
    name = "npu_moe_token_permute"
    if padded_mode:
        raise NotImplementedError(f"{name}: padded_mode=True is not emulated")
    if tokens.dim() != 2:
        raise RuntimeError(
            f"{name}: tokens must be 2-D (tokens, hidden), got {tuple(tokens.shape)}"
        )
    if indices.dim() not in (1, 2) or indices.shape[0] != tokens.shape[0]:
        raise RuntimeError(
            f"{name}: indices must be (tokens,) or (tokens, topk) for "
            f"{tokens.shape[0]} tokens, got {tuple(indices.shape)}"
        )
    if indices.is_floating_point():
        raise RuntimeError(f"{name}: indices must be integers, got {indices.dtype}")
    topk = indices.shape[1] if indices.dim() == 2 else 1
    flat = indices.reshape(-1).to(torch.long)
    total = flat.numel()
    wanted = int(num_out_tokens or 0)
    kept = min(wanted, total) if wanted > 0 else max(total + wanted, 0)
    order = torch.sort(flat, stable=True)[1]  # row p of the result copies assignment order[p]
    # sorted_indices is the inverse: where each assignment (token t, slot j) went
    sorted_indices = torch.empty_like(order)
    sorted_indices[order] = torch.arange(total, device=order.device)
    permuted = store(upcast(tokens)[order[:kept] // topk], tokens.dtype)
    return permuted, sorted_indices.to(torch.int32)


@operator
def npu_moe_token_unpermute(
    permuted_tokens: torch.Tensor,
    sorted_indices: torch.Tensor,
    probs: Optional[torch.Tensor] = None,
    padded_mode: bool = False,
    restore_shape: Optional[Sequence[int]] = None,
) -> torch.Tensor:
    name = "npu_moe_token_unpermute"
    if padded_mode:
        raise NotImplementedError(f"{name}: padded_mode=True is not emulated")
    if permuted_tokens.dim() != 2 or sorted_indices.dim() != 1:
        raise RuntimeError(
            f"{name}: permuted_tokens must be 2-D and sorted_indices 1-D, got "
            f"{tuple(permuted_tokens.shape)}, {tuple(sorted_indices.shape)}"
        )
    if probs is not None and probs.dim() != 2:
        raise RuntimeError(f"{name}: probs must be (tokens, topk), got {tuple(probs.shape)}")
    topk = probs.shape[1] if probs is not None else 1
    total = sorted_indices.numel()
    if total % topk or permuted_tokens.shape[0] > total:
        raise RuntimeError(
            f"{name}: {total} sorted indices for topk {topk} and "
            f"{permuted_tokens.shape[0]} permuted rows"
        )
    count = permuted_tokens.shape[0]
    rows = upcast(permuted_tokens)
    where = sorted_indices.to(torch.long)
    kept = (where >= 0) & (where < count)  # rows cut by num_out_tokens count as zeros
    placed = rows.new_zeros(total, rows.shape[1])
    placed = placed.index_put((kept.nonzero().reshape(-1),), rows[where[kept]])
    placed = placed.reshape(total // topk, topk, rows.shape[1])
    if probs is not None:
        if probs.shape[0] != total // topk:
            raise RuntimeError(
                f"{name}: probs has {probs.shape[0]} rows for {total // topk} tokens"
            )
        placed = placed * upcast(probs).unsqueeze(-1)
    return store(placed.sum(dim=1), permuted_tokens.dtype)


def _routing_map(name: str, routing_map: torch.Tensor, tokens: int) -> torch.Tensor:
    if routing_map.dim() != 2 or routing_map.shape[0] != tokens:
        raise RuntimeError(
            f"{name}: routing_map must be (tokens, experts) for {tokens} tokens, "
            f"got {tuple(routing_map.shape)}"
        )
    return routing_map.to(torch.bool)


@operator
def npu_moe_token_permute_with_routing_map(
    tokens: torch.Tensor,
    routing_map: torch.Tensor,
    *,
    probs: Optional[torch.Tensor] = None,
    num_out_tokens: Optional[int] = None,
    drop_and_pad: bool = False,
):
    name = "npu_moe_token_permute_with_routing_map"
    if tokens.dim() != 2:
        raise RuntimeError(
            f"{name}: tokens must be 2-D (tokens, hidden), got {tuple(tokens.shape)}"
        )
    count, experts = tokens.shape[0], routing_map.shape[-1]
    chosen = _routing_map(name, routing_map, count).t()  # (experts, tokens)
    wanted = count if num_out_tokens is None else int(num_out_tokens)
    if probs is not None and tuple(probs.shape) != tuple(routing_map.shape):
        raise RuntimeError(
            f"{name}: probs must have routing_map's shape "
            f"{tuple(routing_map.shape)}, got {tuple(probs.shape)}"
        )
    if drop_and_pad:
        capacity = wanted // experts
        # each expert's routed tokens first, in token order, then unrouted ones as padding
        order = torch.sort(chosen.to(torch.int32), dim=-1, descending=True, stable=True)[1]
        token_ids = order[:, :capacity].reshape(-1)
        sorted_indices = token_ids
        prob_index = (
            torch.arange(experts, device=tokens.device).reshape(-1, 1) * count + order[:, :capacity]
        ).reshape(-1)
    else:
        top_k = wanted // count if count else 0
        if bool((chosen.sum(dim=0) != top_k).any()):
            raise RuntimeError(
                f"{name}: every token must be routed to num_out_tokens // tokens "
                f"= {top_k} experts without drop_and_pad"
            )
        columns = torch.arange(count, device=tokens.device).expand(experts, count)
        token_ids = columns.masked_select(chosen)  # grouped by expert, in token order
        sorted_indices = torch.sort(token_ids, stable=True)[1]
        prob_index = None
    permuted = store(upcast(tokens)[token_ids], tokens.dtype)
    permuted_probs = None
    if probs is not None:
        flat = upcast(probs).t().reshape(-1)
        picked = flat[prob_index] if drop_and_pad else flat[chosen.reshape(-1)]
        permuted_probs = store(picked, probs.dtype)
    return permuted, permuted_probs, sorted_indices.to(torch.int32)


@operator
def npu_moe_token_unpermute_with_routing_map(
    permuted_tokens: torch.Tensor,
    sorted_indices: torch.Tensor,
    restore_shape: Sequence[int],
    *,
    probs: Optional[torch.Tensor] = None,
    routing_map: Optional[torch.Tensor] = None,
    drop_and_pad: bool = False,
) -> torch.Tensor:
    name = "npu_moe_token_unpermute_with_routing_map"
    if permuted_tokens.dim() != 2 or sorted_indices.dim() != 1 or len(restore_shape) != 2:
        raise RuntimeError(
            f"{name}: permuted_tokens 2-D, sorted_indices 1-D and restore_shape "
            "(tokens, hidden) are needed"
        )
    count, hidden = (int(v) for v in restore_shape)
    rows = upcast(permuted_tokens)
    index = sorted_indices.to(torch.long)
    if drop_and_pad:
        # slot i holds token sorted_indices[i] for expert i // capacity
        experts = probs.shape[1] if probs is not None else None
        if probs is not None:
            capacity = index.numel() // experts
            expert_of = torch.arange(index.numel(), device=index.device) // capacity
            rows = rows * upcast(probs)[index, expert_of].unsqueeze(-1)
        out = rows.new_zeros(count, hidden).index_add(0, index, rows)
        return store(out, permuted_tokens.dtype)
    # sorted_indices[t * top_k + j] is where token t's j-th copy lies in permuted_tokens
    if probs is not None:
        if routing_map is None:
            raise RuntimeError(f"{name}: probs needs routing_map")
        chosen = _routing_map(name, routing_map, count).t()
        weights = upcast(probs).t().reshape(-1)[chosen.reshape(-1)]
        rows = rows * weights.unsqueeze(-1)
    valid = index >= 0
    owner = torch.arange(index.numel(), device=index.device) // max(index.numel() // count, 1)
    out = rows.new_zeros(count, hidden).index_add(0, owner[valid], rows[index[valid]])
    return store(out, permuted_tokens.dtype)
