"""torch_npu's float-status operators: ``npu_alloc_float_status(input)``,
``npu_get_float_status(input, mode=0)`` and ``npu_clear_float_status(input, mode=0)``, reading
and clearing the emulated NPU's overflow flag (``_fp16.float_status``) as torch_npu's kernels do.

- alloc: a new fp32 tensor of 8 zeros on the NPU (the buffer Ascend 910 reads the status into).
- get: on Ascend 910 (mode 0) the status is written into ``input`` (element 0 non-zero after an
  overflow, the rest 0) and ``input`` is returned; on the 910B and later, and in the debug mode
  (1), the status comes in a new int32 tensor of 8 (NPUGetFloatStatusV2).
- clear: clears the flag and returns a new tensor of 8 zeros of ``input``'s dtype; ``input``
  is not changed.

``mode`` is 0 (the overflow status) or 1 (the debug status, the same flag on the emulator);
anything else raises op-plugin's error. Scripts read element 0: non-zero means an overflow
happened since the last clear.
"""

from __future__ import annotations

import torch

from .._device import devices, placement, soc
from .._fp16 import float_status
from ._registry import operator

SIZE = 8
_MODES = (0, 1)  # ORIGINAL_MODE, DEBUG_MODE


def _check_mode(mode: int) -> None:
    if mode not in _MODES:
        raise RuntimeError(
            f"mode only supported for ORIGINAL_MODE(0) DEBUG_MODE(1), but got mode:{mode}"
        )


def _new(input: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:  # noqa: A002
    """8 zeros of ``dtype`` on ``input``'s NPU (the current one for a host tensor)."""
    index = placement.npu_of(input)
    return placement.put(
        torch.zeros(SIZE, dtype=dtype), devices.current_device() if index is None else index
    )


def _status(out: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        out.zero_()
        if float_status.get():
            out[0] = 1
    return out


@operator
def npu_alloc_float_status(input: torch.Tensor) -> torch.Tensor:  # noqa: A002
    return _new(input, torch.float32)


@operator
def npu_get_float_status(input: torch.Tensor, mode: int = 0) -> torch.Tensor:  # noqa: A002
    _check_mode(mode)
    if mode == 0 and soc.version() < soc.ASCEND910B1:
        return _status(input)
    return _status(_new(input, torch.int32))


@operator
def npu_clear_float_status(input: torch.Tensor, mode: int = 0) -> torch.Tensor:  # noqa: A002
    _check_mode(mode)
    float_status.clear()
    return _new(input, input.dtype)
