"""torch_npu's convolutions, as torch's (NCHW / NCDHW, ``weight`` (out, in / groups, k...)),
computed in fp32 (the cube accumulates in fp32) and stored once in the input's dtype, with
gradients for input, weight and bias (torch_npu's ``npu_convolution_backward``):

- ``npu_conv2d(input, weight, bias, stride, padding, dilation, groups)``, ``npu_conv3d(...)``
  (the same arguments), ``npu_convolution(...)`` (2-D or 3-D by the input's rank);
- ``npu_conv_transpose2d(input, weight, bias, padding, output_padding, stride, dilation,
  groups)`` and ``npu_convolution_transpose(...)`` (the same arguments, 2-D or 3-D), the
  transposed convolutions (``weight`` (in, out / groups, k...)).

``stride``, ``padding``, ``dilation`` and ``output_padding`` give one value per spatial
dimension (or one for all)."""

from __future__ import annotations

from typing import List, Optional, Sequence

import torch
import torch.nn.functional as F

from ._precision import store, upcast
from ._registry import operator


def _per_dim(name: str, what: str, values: Sequence[int], dims: int) -> List[int]:
    values = [int(v) for v in (values if isinstance(values, (list, tuple)) else [values])]
    if len(values) == 1:
        values = values * dims
    if len(values) != dims:
        raise RuntimeError(
            f"{name}: {what} needs {dims} values (one per spatial dimension), got {values}"
        )
    return values


def _check(name: str, input: torch.Tensor, weight: torch.Tensor, dims: Sequence[int]) -> int:
    if input.dim() not in dims or weight.dim() != input.dim():
        raise RuntimeError(
            f"{name}: input and weight must both be "
            f"{' or '.join(f'{d}-D' for d in dims)}, got "
            f"{tuple(input.shape)} and {tuple(weight.shape)}"
        )
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"{name}: input ({input.dtype}) and weight ({weight.dtype}) must have one dtype"
        )
    return input.dim() - 2


def _conv(name, input, weight, bias, stride, padding, dilation, groups, dims):
    n = _check(name, input, weight, dims)
    fn = F.conv2d if n == 2 else F.conv3d
    y = fn(
        upcast(input).float(),
        upcast(weight).float(),
        None if bias is None else upcast(bias).float(),
        _per_dim(name, "stride", stride, n),
        _per_dim(name, "padding", padding, n),
        _per_dim(name, "dilation", dilation, n),
        int(groups),
    )
    return store(y, input.dtype)


def _conv_transpose(
    name, input, weight, bias, padding, output_padding, stride, dilation, groups, dims
):
    n = _check(name, input, weight, dims)
    fn = F.conv_transpose2d if n == 2 else F.conv_transpose3d
    y = fn(
        upcast(input).float(),
        upcast(weight).float(),
        None if bias is None else upcast(bias).float(),
        _per_dim(name, "stride", stride, n),
        _per_dim(name, "padding", padding, n),
        _per_dim(name, "output_padding", output_padding, n),
        int(groups),
        _per_dim(name, "dilation", dilation, n),
    )
    return store(y, input.dtype)


@operator
def npu_conv2d(
    input: torch.Tensor,
    weight: torch.Tensor,
    bias: Optional[torch.Tensor],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> torch.Tensor:
    return _conv("npu_conv2d", input, weight, bias, stride, padding, dilation, groups, (4,))


@operator
def npu_conv3d(
    input: torch.Tensor,
    weight: torch.Tensor,
    bias: Optional[torch.Tensor],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> torch.Tensor:
    return _conv("npu_conv3d", input, weight, bias, stride, padding, dilation, groups, (5,))


@operator
def npu_convolution(
    input: torch.Tensor,
    weight: torch.Tensor,
    bias: Optional[torch.Tensor],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> torch.Tensor:
    return _conv("npu_convolution", input, weight, bias, stride, padding, dilation, groups, (4, 5))


@operator
def npu_conv_transpose2d(
    input: torch.Tensor,
    weight: torch.Tensor,
    bias: Optional[torch.Tensor],
    padding: Sequence[int],
    output_padding: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> torch.Tensor:
    return _conv_transpose(
        "npu_conv_transpose2d",
        input,
        weight,
        bias,
        padding,
        output_padding,
        stride,
        dilation,
        groups,
        (4,),
    )


@operator
def npu_convolution_transpose(
    input: torch.Tensor,
    weight: torch.Tensor,
    bias: Optional[torch.Tensor],
    padding: Sequence[int],
    output_padding: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> torch.Tensor:
    return _conv_transpose(
        "npu_convolution_transpose",
        input,
        weight,
        bias,
        padding,
        output_padding,
        stride,
        dilation,
        groups,
        (4, 5),
    )
