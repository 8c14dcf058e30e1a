"""``torch_npu.npu.utils`` on the emulated NPU: the overflow queries that loss scalers call
(Huawei's apex asks ``is_support_inf_nan()`` to pick its overflow check), and the device
functions that torch_npu also exports here."""
from __future__ import annotations

import math
from typing import Union

import torch

from .._device import soc
from .._fp16 import overflow_mode
from . import (clear_npu_overflow_flag, current_device, device_count,  # noqa: F401
               get_device_name, get_npu_overflow_flag, is_available, set_device, synchronize)


def is_support_inf_nan() -> bool:
    """Whether the NPU runs in INF/NAN mode (Ascend 910B: fp16 overflow gives inf and NaN) rather
    than saturating and raising the float status (Ascend 910): the chip's default, or what
    ``INF_NAN_MODE_FORCE_DISABLE`` or ``APEXNPU_INF_NAN_MODE`` choose."""
    return overflow_mode.inf_nan()


def get_soc_version() -> int:
    """torch_npu's SocVersion number of the emulated chip (102 for Ascend910A, 220 for
    Ascend910B1, ...; ``APEXNPU_SOC_VERSION`` chooses the chip)."""
    return soc.version()


def npu_check_overflow(grad: Union[float, torch.Tensor]) -> bool:
    """Whether a step overflowed. In INF/NAN mode: whether ``grad`` (a number, or a tensor whose
    sum is taken) is inf or NaN. Otherwise the float status decides (and is cleared when set);
    ``grad`` is not read."""
    if not is_support_inf_nan():
        overflow = bool(get_npu_overflow_flag())
        if overflow:
            clear_npu_overflow_flag()
        return overflow
    if isinstance(grad, torch.Tensor):
        total = float(grad.float().sum())
    elif isinstance(grad, (int, float)):
        total = float(grad)
    else:
        raise RuntimeError(f"npu_check_overflow: expected a float or a tensor, got "
                           f"{type(grad).__name__}")
    return not math.isfinite(total)
