"""torch_npu's shape operators, each returning a new contiguous tensor (the NPU materialises
them) with the input's values; torch_npu registers no backward for them, so a backward through
them raises:

- ``npu_broadcast(input, size)``: ``input`` expanded to ``size`` (new leading dimensions, size-1
  dimensions repeated), as ``Tensor.expand``;
- ``npu_transpose(input, perm, require_contiguous=True)``: ``input.permute(perm)``;
- ``npu_slice(input, offsets, size)``: the block of ``size`` starting at ``offsets`` (a size of
  -1: the rest of that dimension), as TensorFlow's Slice;
- ``npu_reshape(input, shape, can_refresh=False)``: ``input`` with a new shape (one -1 inferred);
  ``can_refresh`` (the NPU refreshing the input's own shape in place) changes nothing here.
"""

from __future__ import annotations

from typing import List, Sequence

import torch

from ._no_derivative import without_derivative
from ._registry import operator


def _ints(name: str, what: str, values: Sequence[int]) -> List[int]:
    try:
        return [int(v) for v in values]
    except TypeError as exc:
        raise RuntimeError(f"{name}: {what} must be a list of ints, got {values!r}") from exc


@operator
def npu_broadcast(input: torch.Tensor, size: Sequence[int]) -> torch.Tensor:
    size = _ints("npu_broadcast", "size", size)
    if len(size) < input.dim() or any(
        s not in (1, t) for s, t in zip(input.shape[::-1], size[::-1])
    ):
        raise RuntimeError(
            f"npu_broadcast: shape {tuple(input.shape)} cannot be broadcast to {tuple(size)}"
        )
    return without_derivative("npu_broadcast", lambda x: x.expand(size).contiguous(), input)


@operator
def npu_transpose(
    input: torch.Tensor, perm: Sequence[int], require_contiguous: bool = True
) -> torch.Tensor:
    perm = _ints("npu_transpose", "perm", perm)
    if sorted(p % max(input.dim(), 1) for p in perm) != list(range(input.dim())):
        raise RuntimeError(
            f"npu_transpose: perm {perm} is not a permutation of the {input.dim()} dimensions"
        )
    return without_derivative("npu_transpose", lambda x: x.permute(perm).contiguous(), input)


@operator
def npu_slice(input: torch.Tensor, offsets: Sequence[int], size: Sequence[int]) -> torch.Tensor:
    offsets, size = _ints("npu_slice", "offsets", offsets), _ints("npu_slice", "size", size)
    if len(offsets) != input.dim() or len(size) != input.dim():
        raise RuntimeError(
            f"npu_slice: offsets {offsets} and size {size} need one entry per "
            f"dimension of the {input.dim()}-D input"
        )
    index = []
    for d, (start, length, full) in enumerate(zip(offsets, size, input.shape)):
        length = full - start if length == -1 else length
        if start < 0 or length < 0 or start + length > full:
            raise RuntimeError(
                f"npu_slice: dimension {d}: offset {start} and size {length} exceed its size {full}"
            )
        index.append(slice(start, start + length))
    return without_derivative("npu_slice", lambda x: x[tuple(index)].contiguous(), input)


@operator
def npu_reshape(
    input: torch.Tensor, shape: Sequence[int], can_refresh: bool = False
) -> torch.Tensor:
    shape = _ints("npu_reshape", "shape", shape)
    return without_derivative("npu_reshape", lambda x: x.reshape(shape).clone(), input)
