"""``torch_npu.npu_mrope(positions, query, key, cos_sin_cache, head_size, *, mrope_section=None,
rotary_mode='half', cache_mode='default') -> (query_out, key_out)``: rotary position embedding
from a cos/sin cache, as vLLM's ``RotaryEmbedding`` (1-D ``positions``) and Qwen2-VL's
multimodal ``MRotaryEmbedding`` (``(3, T)`` positions and ``mrope_section``).

``query`` is ``(T, Nq * head_size)`` and ``key`` ``(T, Nk * head_size)``; the cache row of each
position is ``cat(cos, sin)``, each ``rotary_dim / 2`` wide. With ``mrope_section = [t, h, w]``
(summing to ``rotary_dim / 2``) the first ``t`` cos/sin columns come from the temporal
positions (row 0), the next ``h`` from row 1 and the last ``w`` from row 2. The first
``rotary_dim`` values of each head are rotated (``half``: NeoX's halves; ``interleave``: GPT-J's
pairs), the rest pass unchanged. Computed in fp32, stored once; torch_npu registers no
backward."""

from __future__ import annotations

from typing import List, Optional, Tuple

import torch

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mode: str) -> torch.Tensor:
    """x (T, N, rotary_dim) rotated by cos/sin (T, 1, rotary_dim / 2)."""
    if mode == "half":
        x1, x2 = torch.chunk(x, 2, dim=-1)
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)


@operator
def npu_mrope(
    positions: torch.Tensor,
    query: torch.Tensor,
    key: torch.Tensor,
    cos_sin_cache: torch.Tensor,
    head_size: int,
    *,
    mrope_section: Optional[List[int]] = None,
    rotary_mode: Optional[str] = "half",
    cache_mode: Optional[str] = "default",
) -> Tuple[torch.Tensor, torch.Tensor]:
    name = "npu_mrope"
    rotary_mode = rotary_mode or "half"
    if rotary_mode not in ("half", "interleave"):
        raise RuntimeError(
            f"{name}: rotary_mode must be 'half' or 'interleave', got {rotary_mode!r}"
        )
    if (cache_mode or "default") != "default":
        raise RuntimeError(
            f"{name}: only cache_mode='default' (cos then sin in each cache row) "
            f"is emulated, got {cache_mode!r}"
        )
    if query.dim() != 2 or key.dim() != 2 or cos_sin_cache.dim() != 2:
        raise RuntimeError(
            f"{name}: query, key and cos_sin_cache must be 2-D, got "
            f"{tuple(query.shape)}, {tuple(key.shape)}, "
            f"{tuple(cos_sin_cache.shape)}"
        )
    rotary_dim = cos_sin_cache.shape[1]
    if head_size <= 0 or query.shape[1] % head_size or key.shape[1] % head_size:
        raise RuntimeError(
            f"{name}: query's and key's widths ({query.shape[1]}, {key.shape[1]}) "
            f"must be multiples of head_size {head_size}"
        )
    if rotary_dim % 2 or rotary_dim > head_size:
        raise RuntimeError(
            f"{name}: rotary_dim {rotary_dim} must be even and at most head_size {head_size}"
        )
    sections = [int(s) for s in mrope_section] if mrope_section else [0, 0, 0]
    multimodal = any(sections)
    if multimodal and (positions.dim() != 2 or positions.shape[0] != 3):
        raise RuntimeError(
            f"{name}: mrope_section needs positions of shape (3, T), got {tuple(positions.shape)}"
        )
    if multimodal and sum(sections) != rotary_dim // 2:
        raise RuntimeError(
            f"{name}: mrope_section {sections} must sum to rotary_dim / 2 = {rotary_dim // 2}"
        )
    if not multimodal and positions.dim() != 1:
        raise RuntimeError(
            f"{name}: without mrope_section positions must be 1-D, got {tuple(positions.shape)}"
        )
    if positions.numel() and (
        int(positions.min()) < 0 or int(positions.max()) >= cos_sin_cache.shape[0]
    ):
        raise RuntimeError(f"{name}: positions must lie in [0, {cos_sin_cache.shape[0]})")

    def compute(query, key, cache):
        rows = upcast(cache).float()[positions.long()]  # (T, rd) or (3, T, rd)
        cos, sin = rows[..., : rotary_dim // 2], rows[..., rotary_dim // 2 :]
        if multimodal:
            cos = torch.cat([part[i] for i, part in enumerate(cos.split(sections, -1))], -1)
            sin = torch.cat([part[i] for i, part in enumerate(sin.split(sections, -1))], -1)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        out = []
        for x in (query, key):
            v = upcast(x).float().reshape(x.shape[0], -1, head_size)
            turned = torch.cat(
                (_rotate(v[..., :rotary_dim], cos, sin, rotary_mode), v[..., rotary_dim:]), dim=-1
            )
            out.append(store(turned.reshape(x.shape), x.dtype))
        return tuple(out)

    return without_derivative(name, compute, query, key, cos_sin_cache)
