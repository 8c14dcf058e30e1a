"""Dropout with a byte mask, as BERT on the NPU uses it: ``torch.nn.DropoutWithByteMask(p=0.5,
inplace=False, max_seed=1023)`` (also ``torch_npu.contrib.module.DropoutWithByteMask``),
``torch.nn.functional.dropout_with_byte_mask(input, p=0.5, training=True, inplace=False)``,
``torch_npu.dropout_with_byte_mask(input, p, train)`` and
``torch_npu._dropout_with_byte_mask(input, p) -> (result, mask)``.

The mask is uint8 of the input's shape, 1 where an element is kept (probability ``1 - p``); kept
elements are scaled by ``1 / (1 - p)``. The gradient is ``grad * mask / (1 - p)``
(``_dropout_with_byte_mask_backward``). With ``p == 0`` or not training the input is returned as
it is; with ``p == 1`` the result is zeros.
"""

from __future__ import annotations

from typing import Tuple

import torch

from .. import _dropout_masks
from ._precision import store, upcast
from ._registry import operator


@operator
def _dropout_with_byte_mask(input: torch.Tensor, p: float) -> Tuple[torch.Tensor, torch.Tensor]:
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not input.is_floating_point():
        raise RuntimeError("dropout only supports floating-point dtypes")
    keep = _dropout_masks.keep_draws(input.numel(), p, input.device).reshape(input.shape)
    mask = keep.to(torch.uint8)
    result = upcast(input) * (keep.to(torch.float32) * _dropout_masks.keep_scale(p))
    return store(result, input.dtype), mask


@operator
def _dropout_with_byte_mask_backward(
    grad_output: torch.Tensor, mask: torch.Tensor, p: float
) -> torch.Tensor:
    if mask.dtype != torch.uint8:
        raise RuntimeError("mask should be torch.uint8 dtype")
    scaled = upcast(grad_output) * (mask.to(torch.float32) * _dropout_masks.keep_scale(p))
    return store(scaled, grad_output.dtype)


@operator
def dropout_with_byte_mask(input: torch.Tensor, p: float, train: bool) -> torch.Tensor:
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return input * torch.zeros_like(input)
    return _dropout_with_byte_mask(input, p)[0]


def functional_dropout_with_byte_mask(
    input: torch.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> torch.Tensor:
    """``torch.nn.functional.dropout_with_byte_mask`` (torch_npu's contrib functional)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if inplace:
        raise ValueError("dropout_with_byte_mask has no in-place computing.")
    return dropout_with_byte_mask(input, p, training)


class DropoutWithByteMask(torch.nn.Module):
    """``torch.nn.DropoutWithByteMask``: ``torch.nn.Dropout`` with the NPU's byte mask.
    ``max_seed`` is accepted and unused, as in torch_npu."""

    def __init__(self, p: float = 0.5, inplace: bool = False, max_seed: int = 2**10 - 1):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace
        self.max_seed = max_seed

    def forward(self, input1: torch.Tensor) -> torch.Tensor:
        return functional_dropout_with_byte_mask(input1, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
