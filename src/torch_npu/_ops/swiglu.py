"""``torch_npu.npu_swiglu(input, dim=-1)``: SwiGLU, ``swish(A) * B = A * sigmoid(A) * B`` where
``A`` and ``B`` are the first and second halves of ``input`` along ``dim``, computed in fp32.
Its gradient is autograd's through that fp32 computation (no separate backward operator)."""

from __future__ import annotations

import torch

from ._precision import store, upcast
from ._registry import operator


@operator
def npu_swiglu(input: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if input.shape[dim] % 2:
        raise RuntimeError(f"npu_swiglu: dimension {dim} of size {input.shape[dim]} is not even")
    a, b = torch.chunk(upcast(input), 2, dim=dim)
    return store(a * torch.sigmoid(a) * b, input.dtype)
