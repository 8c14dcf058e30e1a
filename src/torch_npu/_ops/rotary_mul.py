"""``torch_npu.npu_rotary_mul(input, r1, r2, rotary_mode='half', rotate=None)``: rotary position
embedding, ``x * r1 + rotate(x) * r2`` (``r1`` = cos, ``r2`` = sin, broadcast to ``x``), computed
in fp32. ``rotary_mode='half'``: ``rotate(x) = cat(-x2, x1)`` of the two halves of the last
dimension; ``'interleave'``: pairs ``(x[2i], x[2i+1])`` become ``(-x[2i+1], x[2i])``; a ``rotate``
matrix gives ``rotate(x) = x @ rotate``. Gradients for ``input``, ``r1`` and ``r2``
(``npu_rotary_mul_backward``); torch_npu has no backward with ``rotate``."""

from __future__ import annotations

from typing import Optional

import torch

from ._precision import store, upcast
from ._registry import operator


def _rotated(x: torch.Tensor, mode: str) -> torch.Tensor:
    if mode == "half":
        x1, x2 = torch.chunk(x, 2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)
    if mode == "interleave":
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((-x2, x1), dim=-1).flatten(-2)
    raise RuntimeError(f"npu_rotary_mul: rotary_mode must be 'half' or 'interleave', got {mode!r}")


@operator
def npu_rotary_mul(
    input: torch.Tensor,
    r1: torch.Tensor,
    r2: torch.Tensor,
    rotary_mode: str = "half",
    rotate: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    if input.shape[-1] % 2:
        raise RuntimeError(f"npu_rotary_mul: the last dimension ({input.shape[-1]}) must be even")
    x = upcast(input)
    turned = torch.matmul(x, upcast(rotate)) if rotate is not None else _rotated(x, rotary_mode)
    return store(x * upcast(r1) + turned * upcast(r2), input.dtype)
