"""``torch_npu.npu_min(input, dim, keepdim=False) -> (values, indices)``: ``torch.min`` along
``dim`` with int32 indices, as the NPU returns them; the gradient goes to the positions of the
minima (torch_npu's ``npu_min_backward``). ``dim`` may be a dimension's name, as for
``npu_max``."""

from __future__ import annotations

from typing import Tuple, Union

import torch

from ._registry import operator


@operator
def npu_min(
    input: torch.Tensor,
    dim: Union[int, str],  # noqa: A002 - torch_npu's name
    keepdim: bool = False,
) -> Tuple[torch.Tensor, torch.Tensor]:
    if isinstance(dim, str):
        names = list(getattr(input, "names", None) or ())
        if dim not in names:
            raise RuntimeError(f"npu_min: Name '{dim}' not found in Tensor{tuple(names)}.")
        dim = names.index(dim)
    values, indices = torch.min(input, dim, keepdim)
    return values, indices.to(torch.int32)
