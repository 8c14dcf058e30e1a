"""``torch_npu.contrib.function.npu_fast_condition_index_put(x, condition, value)``: what
``x[condition] = value`` would give, as a new tensor (``x`` is left as it is), through a
``torch.where`` the NPU runs faster than a boolean ``index_put``. ``condition`` must be bool
(TypeError otherwise); its shape broadcasts against ``x``'s. The fill is ``value`` added to
zeros of ``x``'s dtype, so a float value on an integer ``x`` gives a float result, as
torch_npu's does. mmdetection's max-IoU assigner (Ascend's Cascade Mask R-CNN) calls it."""

from __future__ import annotations

from typing import Union

import torch

__all__ = ["npu_fast_condition_index_put"]


def npu_fast_condition_index_put(
    x: torch.Tensor, condition: torch.Tensor, value: Union[int, float, bool]
) -> torch.Tensor:
    if condition.dtype != torch.bool:
        raise TypeError(
            f"npu_fast_condition_index_put: expected condition.dtype in "
            f"[torch.bool], got {condition.dtype}"
        )
    return torch.where(condition, torch.zeros_like(x) + value, x)
