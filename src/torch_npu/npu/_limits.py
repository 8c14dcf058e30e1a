"""Per-device settings torch_npu passes to the runtime: core limits, the operator timeout and
the compatible-implementation switch.

The emulated NPU runs every operation on the host, so none of them changes a result; each is
checked as torch_npu checks it and kept, so a script reads back what it set.
"""

from __future__ import annotations

from typing import Dict

from .._device import devices
from ..utils._error_code import ErrCode, pta_error

__all__ = [
    "are_compatible_impl_enabled",
    "get_device_limit",
    "set_device_limit",
    "set_op_timeout_ms",
    "use_compatible_impl",
]

_limits: Dict[int, Dict[str, int]] = {}
_settings = {"op_timeout_ms": 0, "compatible_impl": False}
_UINT32_MAX = 2**32 - 1


def _device(device: object) -> int:
    """``device`` checked as torch_npu checks it: an int (not a bool) naming an NPU."""
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(
            f"device must be an int, but got {type(device).__name__}" + pta_error(ErrCode.TYPE)
        )
    if not 0 <= device < devices.device_count():
        raise AssertionError("Invalid device id" + pta_error(ErrCode.VALUE))
    return device


def get_device_limit(device: int) -> Dict[str, int]:
    """``{'cube_core_num': n, 'vector_core_num': m}``: the cores operators on ``device`` may
    use, the chip's own counts until ``set_device_limit`` lowers them."""
    from ._properties import _NPUDeviceProperties

    index = _device(device)
    devices.lazy_init()
    if index not in _limits:
        properties = _NPUDeviceProperties(index)
        _limits[index] = {
            "cube_core_num": properties.cube_core_num,
            "vector_core_num": properties.vector_core_num,
        }
    return dict(_limits[index])


def set_device_limit(device: int, cube_num: int = -1, vector_num: int = -1) -> None:
    """Limit the cube and vector cores of ``device`` (-1 leaves one as it is)."""
    limits = get_device_limit(device)
    for key, value in (("cube_core_num", cube_num), ("vector_core_num", vector_num)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{key} must be an int, but got {type(value).__name__}")
        if value != -1:
            if value <= 0:
                raise ValueError(f"{key} must be positive (or -1 to keep it), but got {value}")
            limits[key] = value
    _limits[device] = limits


def set_op_timeout_ms(timeout: int) -> None:
    """The time an operator may run before the runtime reports it (an unsigned 32-bit count
    of milliseconds, as torch_npu's binding takes it)."""
    if isinstance(timeout, bool) or not isinstance(timeout, int):
        raise TypeError(
            f"set_op_timeout_ms(): timeout must be an int, got {type(timeout).__name__}"
        )
    if timeout < 0:
        raise OverflowError("can't convert negative value to unsigned int")
    if timeout > _UINT32_MAX:
        raise OverflowError("Overflow when unpacking long")
    _settings["op_timeout_ms"] = timeout


def use_compatible_impl(is_enable: bool) -> None:
    """Ask for the operators' implementations compatible with other devices' results."""
    _settings["compatible_impl"] = bool(is_enable)


def are_compatible_impl_enabled() -> bool:
    return bool(_settings["compatible_impl"])
