"""``torch_npu.contrib.module.Mish``, ``SiLU`` and its alias ``Swish``: the activation layers of
Ascend's ports written before torch had them, on the NPU operators ``npu_mish`` and
``npu_silu`` (fp16 and bf16 computed in fp32 and rounded once, with their backward). Like
torch_npu's they warn once that they are deprecated: torch's ``nn.Mish`` and ``nn.SiLU``
replace them."""

from __future__ import annotations

import warnings

import torch
from torch import nn

from ..._ops.mish import npu_mish
from ..._ops.silu import npu_silu

__all__ = ["Mish", "SiLU", "Swish"]


def _deprecated(name: str, replacement: str) -> None:
    warnings.warn(
        f"torch_npu.contrib.module.{name} is deprecated. Please use {replacement} as "
        f"a replacement.",
        FutureWarning,
        stacklevel=3,
    )


class Mish(nn.Module):
    """``x * tanh(softplus(x))`` element-wise."""

    def __init__(self) -> None:
        super().__init__()
        _deprecated("Mish", "torch.nn.Mish")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return npu_mish(x)


class SiLU(nn.Module):
    """``x * sigmoid(x)`` element-wise."""

    def __init__(self) -> None:
        super().__init__()
        _deprecated("SiLU", "torch.nn.SiLU")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return npu_silu(x)


Swish = SiLU
