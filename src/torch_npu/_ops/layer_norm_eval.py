"""``torch_npu.npu_layer_norm_eval(input, normalized_shape, weight=None, bias=None, eps=1e-5)``:
layer normalisation over the trailing ``normalized_shape`` dimensions (population variance),
computed in fp32. torch_npu registers no backward for it; here it is differentiable like
``F.layer_norm``."""

from __future__ import annotations

from typing import Optional, Sequence

import torch
import torch.nn.functional as F

from ._precision import store, upcast
from ._registry import operator


@operator
def npu_layer_norm_eval(
    input: torch.Tensor,
    normalized_shape: Sequence[int],
    weight: Optional[torch.Tensor] = None,
    bias: Optional[torch.Tensor] = None,
    eps: float = 1e-05,
) -> torch.Tensor:
    shape = [int(s) for s in normalized_shape]
    out = F.layer_norm(upcast(input), shape, upcast(weight), upcast(bias), float(eps))
    return store(out, input.dtype)
