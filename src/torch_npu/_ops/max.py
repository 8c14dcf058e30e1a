"""``torch_npu.npu_max(self, dim, keepdim=False) -> (values, indices)``: ``torch.max`` along
``dim`` with int32 indices, as the NPU returns them; the gradient goes to the positions of the
maxima (torch's, the same as torch_npu's ``npu_max_backward``)."""
from __future__ import annotations

from typing import Tuple

import torch


def npu_max(self: torch.Tensor, dim: int, keepdim: bool = False) -> Tuple[torch.Tensor, torch.Tensor]:
    values, indices = torch.max(self, dim, keepdim)
    return values, indices.to(torch.int32)
