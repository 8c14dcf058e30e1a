"""``torch_npu.contrib.function.roll(x, shifts, dims)``: Swin Transformer's cyclic shift of
windows, as Ascend's port calls it (one ``index_select`` over ``H * W`` on the NPU, faster there
than ``torch.roll``). ``x`` is ``(N, H, W, C)``, ``shifts`` and ``dims`` pairs; the rows and
columns (dims 1 and 2) are rolled by ``shifts`` -- Ascend's function rolls those two whatever
``dims`` names, and so does this one. The values and gradients are ``torch.roll``'s; a wrong
rank or pair length raises ValueError."""

from __future__ import annotations

from typing import Sequence

import torch

from ...utils._error_code import ErrCode, ops_error

__all__ = ["roll"]


def roll(x: torch.Tensor, shifts: Sequence[int], dims: Sequence[int]) -> torch.Tensor:
    if x.dim() != 4:
        raise ValueError("Expected x.dim() == 4" + ops_error(ErrCode.VALUE))
    if len(shifts) != 2:
        raise ValueError("Expected len(shifts) == 2" + ops_error(ErrCode.VALUE))
    if len(dims) != 2:
        raise ValueError("Expected len(dims) == 2" + ops_error(ErrCode.VALUE))
    return torch.roll(x, shifts=tuple(shifts), dims=(1, 2))
