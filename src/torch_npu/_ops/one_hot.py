"""``torch_npu.npu_one_hot(input, num_classes=-1, depth=1, on_value=1, off_value=0)``: an fp32
tensor of ``input``'s shape with a last dimension of ``depth`` added, ``on_value`` where the
position equals the class in ``input`` and ``off_value`` elsewhere (classes outside
``[0, depth)`` give a row of ``off_value``). ``input`` is read as int32, as the NPU casts it.
``num_classes`` is the one-hot axis; torch_npu sizes the result for the last one (-1) only,
so the emulator takes that one alone. No gradient: the input is classes."""

from __future__ import annotations

from typing import Union

import torch

from ._registry import operator

Number = Union[int, float, bool]


@operator
def npu_one_hot(
    input: torch.Tensor,
    num_classes: int = -1,
    depth: int = 1,  # noqa: A002
    on_value: Number = 1,
    off_value: Number = 0,
) -> torch.Tensor:
    if num_classes not in (-1, input.dim()):
        raise NotImplementedError(
            f"npu_one_hot: num_classes (the one-hot axis) {num_classes} is not supported by the "
            "emulated NPU; torch_npu sizes the result for the last axis (-1) only"
        )
    if depth < 0:
        raise RuntimeError(f"npu_one_hot: depth must be >= 0, got {depth}")
    classes = input.to(torch.int32).unsqueeze(-1)
    positions = torch.arange(depth, dtype=torch.int32, device=input.device)
    hit = classes == positions
    on = torch.full((), float(on_value), dtype=torch.float32, device=input.device)
    off = torch.full((), float(off_value), dtype=torch.float32, device=input.device)
    return torch.where(hit, on, off)
