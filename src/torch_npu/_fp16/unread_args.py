"""Arguments an operation reads for their sizes and strides only, or writes without reading.

The fast path gives such fp16 arguments an fp32 tensor of the right layout with unset values
(``fp32_copies.fp32_like``) instead of converting them: the op's result cannot depend on values
it never reads, so the bits are those of the general path.
- ``max_pool2d_with_indices_backward(grad_output, self, ...)``: ``self`` gives the gradient's
  shape and memory format; the values come from ``grad_output`` at ``indices``.
- ``copy_``, ``zero_``, ``fill_``: the destination is overwritten everywhere.
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet

import torch

aten = torch.ops.aten

# op -> positions of its arguments whose values it never reads
UNREAD: Dict[Any, FrozenSet[int]] = {
    aten.max_pool2d_with_indices_backward.default: frozenset({1}),
    aten.copy_.default: frozenset({0}),
    aten.zero_.default: frozenset({0}),
    aten.fill_.Scalar: frozenset({0}),
    aten.fill_.Tensor: frozenset({0}),
}
