"""``torch_npu.npu_linear(input, weight, bias=None)``: ``input @ weight.T + bias`` (BERT's
``NpuLinear``), computed in fp32; its backward gives input, weight and bias gradients as
``npu_linear_backward`` does."""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F

from ._precision import store, upcast
from ._registry import operator


@operator
def npu_linear(
    input: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None
) -> torch.Tensor:
    """``input`` (2-D, (M, K)) times ``weight`` (N, K) transposed, plus ``bias`` (N,)."""
    if input.dim() != 2 or weight.dim() != 2:
        raise RuntimeError(
            f"npu_linear: expected 2-D input and weight, got {input.dim()}-D and {weight.dim()}-D"
        )
    out = F.linear(upcast(input), upcast(weight), upcast(bias))
    return store(out, input.dtype)
