"""``torch_npu.npu_max(input, dim, keepdim=False) -> (values, indices)``: ``torch.max`` along
``dim`` with int32 indices, as the NPU returns them; the gradient goes to the positions of the
maxima (torch's, the same as torch_npu's ``npu_max_backward``). ``dim`` may be a dimension's
name (torch_npu 1.x's ``npu_max.names_dim``), read from ``input.names``."""

from __future__ import annotations

from typing import Tuple, Union

import torch

from ._registry import operator


@operator
def npu_max(
    input: torch.Tensor,
    dim: Union[int, str],  # noqa: A002 - torch_npu's name
    keepdim: bool = False,
) -> Tuple[torch.Tensor, torch.Tensor]:
    if isinstance(dim, str):
        names = list(getattr(input, "names", None) or ())
        if dim not in names:
            raise RuntimeError(f"npu_max: Name '{dim}' not found in Tensor{tuple(names)}.")
        dim = names.index(dim)
    values, indices = torch.max(input, dim, keepdim)
    return values, indices.to(torch.int32)
