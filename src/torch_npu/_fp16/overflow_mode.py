"""How the emulated NPU meets fp16 overflow: as Ascend 910 or as Ascend 910B.

- ``saturation`` (the default, Ascend 910): an fp16 result beyond ±65504 is stored clamped to
  it, NaN as +0, and the float status records the overflow. Loss scalers read the status.
- ``inf_nan`` (Ascend 910B's INF/NAN mode, ``APEXNPU_INF_NAN_MODE=1``): fp16 results overflow to
  inf and NaN as on a GPU and the status is not used; loss scalers look at the values.
  ``torch_npu.npu.utils.is_support_inf_nan()`` answers which mode runs. The fp16 arithmetic
  takes the general path in this mode (the fast path's one-pass kernels saturate).
"""
from __future__ import annotations

import os
from typing import List, Optional

VARIABLE = "APEXNPU_INF_NAN_MODE"
_inf_nan: List[Optional[bool]] = [None]


def inf_nan() -> bool:
    """Whether the emulated NPU runs in INF/NAN mode (``APEXNPU_INF_NAN_MODE``, read once)."""
    value = _inf_nan[0]
    if value is None:
        text = os.environ.get(VARIABLE, "0").strip() or "0"
        if text not in ("0", "1"):
            raise ValueError(f"{VARIABLE}={text!r}: expected 0 (saturation, as Ascend 910) or 1 "
                             "(INF/NAN mode, as Ascend 910B)")
        value = _inf_nan[0] = text == "1"
    return value


def select(inf_nan_mode: bool) -> bool:
    """Switch the mode in place (for tests); returns the previous one."""
    previous = inf_nan()
    _inf_nan[0] = bool(inf_nan_mode)
    return previous
