"""The NPU's float status (overflow flag), as apex's loss scalers read it through torch_npu.

In saturation mode (Ascend 910) an fp16 result beyond ±65504 is stored clamped and the device
raises its status; the scalers read and clear it here. In INF/NAN mode (Ascend 910B) the scalers
look at the gradients' values instead and never touch the status: torch_npu refuses to read it
there (``get_npu_overflow_flag`` raises "Unsupported api when soc_version >= Ascend910B1") and
warns that clearing it is useless, so both are no-ops here.
"""

from __future__ import annotations

import torch

from .. import backend


def get() -> bool:
    """Whether the device's float status records an overflow (never, in INF/NAN mode)."""
    if backend.inf_nan_mode():
        return False
    return bool(torch.npu.get_npu_overflow_flag())


def clear() -> bool:
    """Clear the device's float status; returns whether it was set."""
    was_set = get()
    if was_set:
        torch.npu.clear_npu_overflow_flag()
    return was_set
