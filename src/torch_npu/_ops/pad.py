"""``torch_npu.npu_pad(input, paddings)``: zeros around ``input``, ``paddings`` read as
(before, after) pairs from the first dimension on, as the NPU's Pad reads them (missing ones
are 0, extra ones ignored; ``torch.nn.functional.pad`` starts from the last dimension).
torch_npu defines no gradient for it: torch's autograd fallback decides, as on the NPU
(see _no_derivative)."""

from __future__ import annotations

from typing import List, Sequence

import torch
import torch.nn.functional as F

from ._no_derivative import without_derivative
from ._registry import operator


def _torch_order(paddings: Sequence[int], dims: int) -> List[int]:
    pairs = (list(paddings) + [0] * (2 * dims))[: 2 * dims]
    if any(p < 0 for p in pairs):
        raise RuntimeError(f"npu_pad: paddings must be >= 0, got {list(paddings)}")
    order: List[int] = []
    for d in reversed(range(dims)):
        order += pairs[2 * d : 2 * d + 2]
    return order


@operator
def npu_pad(input: torch.Tensor, paddings: Sequence[int]) -> torch.Tensor:  # noqa: A002
    order = _torch_order(paddings, input.dim())
    return without_derivative("npu_pad", lambda x: F.pad(x, order), input)
