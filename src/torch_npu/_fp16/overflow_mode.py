"""How the emulated NPU meets fp16 overflow: as Ascend 910 or as Ascend 910B.

- ``saturation`` (the 910 family, the default chip): an fp16 result beyond ±65504 is stored
  clamped to it, NaN as +0, and the float status records the overflow. Loss scalers read the
  status.
- ``inf_nan`` (INF/NAN mode, the default of the 910B family): fp16 results overflow to inf and
  NaN as on a GPU and the status is not used; loss scalers look at the values.
  ``torch_npu.npu.utils.is_support_inf_nan()`` answers which mode runs. The fp16 arithmetic
  takes the general path in this mode (the fast path's one-pass kernels saturate).

The chip (``soc``) gives the mode, with torch_npu's own switches on a 910B:
``INF_NAN_MODE_FORCE_DISABLE=1`` saturates there, and ``INF_NAN_MODE_ENABLE=0`` alone is an error,
as on the NPU. ``APEXNPU_INF_NAN_MODE`` (0 or 1), when set, overrides the chip. As torch_npu,
the mode is fixed when the NPUs are first used, so a script may set the switches after
``import torch_npu``.
"""

from __future__ import annotations

import os
from typing import List, Optional

from .._device import devices, soc

VARIABLE = "APEXNPU_INF_NAN_MODE"
_inf_nan: List[Optional[bool]] = [None]


def _switch(variable: str, default: str) -> bool:
    text = os.environ.get(variable, default).strip() or default
    if text not in ("0", "1"):
        raise ValueError(f"{variable}={text!r}: expected 0 or 1")
    return text == "1"


def _chip_mode() -> bool:
    """The chip's mode under torch_npu's INF_NAN_MODE_ENABLE / INF_NAN_MODE_FORCE_DISABLE."""
    enable = _switch("INF_NAN_MODE_ENABLE", "1")
    if not soc.inf_nan_by_default():
        return False
    force_disable = _switch("INF_NAN_MODE_FORCE_DISABLE", "0")
    if not enable and not force_disable:
        raise RuntimeError(
            "INF_NAN_MODE_ENABLE shouldn't be set to 0 on the current device "
            f"({soc.name()}). If you want to disable inf-nan mode, please export "
            "INF_NAN_MODE_FORCE_DISABLE=1"
        )
    return not force_disable


def inf_nan() -> bool:
    """Whether the emulated NPU runs in INF/NAN mode (read once the NPUs are in use)."""
    value = _inf_nan[0]
    if value is None:
        text = os.environ.get(VARIABLE, "").strip()
        if text and text not in ("0", "1"):
            raise ValueError(
                f"{VARIABLE}={text!r}: expected 0 (saturation, as Ascend 910) or 1 "
                "(INF/NAN mode, as Ascend 910B), or unset for the chip's mode"
            )
        value = text == "1" if text else _chip_mode()
        if devices.is_initialized():
            _inf_nan[0] = value
    return value


def select(inf_nan_mode: bool) -> bool:
    """Switch the mode in place (for tests); returns the previous one."""
    previous = inf_nan()
    _inf_nan[0] = bool(inf_nan_mode)
    return previous
