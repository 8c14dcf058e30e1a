"""``torch_npu.npu_apply_rotary_pos_emb(query, key, cos, sin, layout='BSND', rotary_mode='half')
-> (query, key)``: rotary position embedding of query and key in one call,
``x * cos + rotate(x) * sin`` (``half``: ``rotate(x) = cat(-x2, x1)`` of the halves of the last
dimension; ``interleave``: pairs ``(x[2i], x[2i+1])`` become ``(-x[2i+1], x[2i])``), computed in
fp32 and stored once. Layouts BSND, SBND, BNSD (4-D, cos/sin broadcast over the head
dimension) and TND (3-D).

torch_npu documents the result as written into ``query`` and ``key`` and returns them: so here
too, when no gradient is being recorded for them (torch_npu registers no backward; when query or
key requires grad the results are new tensors whose backward raises)."""

from __future__ import annotations

from typing import Tuple

import torch

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator
from .rotary_mul import _rotated

_LAYOUTS = {"BSND": 4, "SBND": 4, "BNSD": 4, "TND": 3}


@operator
def npu_apply_rotary_pos_emb(
    query: torch.Tensor,
    key: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    layout: str = "BSND",
    rotary_mode: str = "half",
) -> Tuple[torch.Tensor, torch.Tensor]:
    name = "npu_apply_rotary_pos_emb"
    if layout not in _LAYOUTS:
        raise RuntimeError(f"{name}: layout must be one of {sorted(_LAYOUTS)}, got {layout!r}")
    if rotary_mode not in ("half", "interleave"):
        raise RuntimeError(
            f"{name}: rotary_mode must be 'half' or 'interleave' ('quarter' is not "
            f"emulated), got {rotary_mode!r}"
        )
    for what, t in (("query", query), ("key", key), ("cos", cos), ("sin", sin)):
        if t.dim() != _LAYOUTS[layout]:
            raise RuntimeError(
                f"{name}: {what} must be {_LAYOUTS[layout]}-D for layout {layout}, "
                f"got shape {tuple(t.shape)}"
            )
        if t.dtype != query.dtype:
            raise RuntimeError(
                f"{name}: query, key, cos and sin must have one dtype; {what} is "
                f"{t.dtype}, query {query.dtype}"
            )
    if query.shape[-1] != key.shape[-1] or query.shape[-1] % 2:
        raise RuntimeError(
            f"{name}: query and key need the same even last dimension, got "
            f"{query.shape[-1]} and {key.shape[-1]}"
        )
    if cos.shape != sin.shape or cos.shape[-1] != query.shape[-1]:
        raise RuntimeError(
            f"{name}: cos {tuple(cos.shape)} and sin {tuple(sin.shape)} must have "
            f"one shape with query's last dimension {query.shape[-1]}"
        )

    def compute(query, key, cos, sin):
        c, s = upcast(cos).float(), upcast(sin).float()
        out = []
        for x in (query, key):
            v = upcast(x).float()
            out.append(store(v * c + _rotated(v, rotary_mode) * s, x.dtype))
        return tuple(out)

    if torch.is_grad_enabled() and any(t.requires_grad for t in (query, key, cos, sin)):
        return without_derivative(name, compute, query, key, cos, sin)
    q_out, k_out = compute(query, key, cos, sin)
    with torch.no_grad():
        query.copy_(q_out)
        key.copy_(k_out)
    return query, key
