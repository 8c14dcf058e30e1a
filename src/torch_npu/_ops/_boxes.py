"""Pairwise geometry of ``(x1, y1, x2, y2)`` boxes shared by the box operators."""

from __future__ import annotations

import torch


def intersection(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """(M, N): the overlap area of each box of ``a`` (M, 4) with each of ``b`` (N, 4), 0 where
    they do not meet (no +1: corners are coordinates, not pixel indices)."""
    width = (
        torch.minimum(a[:, None, 2], b[None, :, 2]) - torch.maximum(a[:, None, 0], b[None, :, 0])
    ).clamp(min=0)
    height = (
        torch.minimum(a[:, None, 3], b[None, :, 3]) - torch.maximum(a[:, None, 1], b[None, :, 1])
    ).clamp(min=0)
    return width * height
