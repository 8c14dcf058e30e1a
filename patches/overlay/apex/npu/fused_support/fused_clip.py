"""Gradient-norm clipping over combined gradient buffers.

A gradient set is a list of parts, ``(buffer, [(offset, numel), ...])``: the elements of real
gradients in each buffer (the padding between them is left out, as Ascend's grad masks leave it
out). ``clip_parts`` computes one norm over all of them and scales them by
``max_norm / (norm + 1e-6)`` when that is below 1, as ``torch.nn.utils.clip_grad_norm_`` does;
on the emulated NPU the runtime's kernel does both in one pass per buffer.
"""

from __future__ import annotations

from typing import List, Sequence, Tuple

import torch

from .. import backend
from ..amp import loss_scaling

Part = Tuple[torch.Tensor, Sequence[Tuple[int, int]]]
SUPPORTED_DTYPES = (torch.float32, torch.float16)


def total_norm(tensors: Sequence[torch.Tensor], norm_type: float) -> torch.Tensor:
    """The ``norm_type`` norm of all ``tensors`` together (as ``clip_grad_norm_`` computes it)."""
    if norm_type == float("inf"):
        norms: List[torch.Tensor] = [t.detach().abs().max().float() for t in tensors]
        return norms[0] if len(norms) == 1 else torch.stack(norms).max()
    norms = [torch.norm(t.detach().float(), norm_type) for t in tensors]
    return torch.norm(torch.stack(norms), norm_type)


def whole(tensors: Sequence[torch.Tensor]) -> List[Part]:
    """Each tensor as one part of itself."""
    return [(t, [(0, t.numel())]) for t in tensors]


@torch.no_grad()
def clip_parts(parts: Sequence[Part], max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    """Clip the gradients in ``parts`` to ``max_norm`` together; returns their total norm."""
    max_norm, norm_type = float(max_norm), float(norm_type)
    parts = [(buf, list(segments)) for buf, segments in parts if segments]
    if not parts:
        return torch.tensor(0.0)
    rt = backend.runtime_kernels()
    if (
        rt is not None
        and norm_type in (2.0, float("inf"))
        and all(buf.is_contiguous() and buf.dtype in SUPPORTED_DTYPES for buf, _ in parts)
    ):
        buffers = [
            (buf.data_ptr(), loss_scaling.runtime_dtype_code(rt, buf.dtype), segments)
            for buf, segments in parts
        ]
        return torch.tensor(rt.clip_grad_norm(buffers, max_norm, norm_type))
    views = [
        buf.reshape(-1)[offset : offset + n] for buf, segments in parts for offset, n in segments
    ]
    norm = total_norm(views, norm_type)
    coef = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
    for view in views:
        view.mul_(coef.to(view.dtype))
    return norm
