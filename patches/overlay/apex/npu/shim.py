"""``torch.npu``, ``Tensor.npu()`` and ``Module.npu()`` on the emulated NPU.

Scripts written for Ascend (``torch.npu.set_device(0)``, ``model.npu()``,
``data.npu(non_blocking=True)``) run unchanged: the emulated NPU is the CPU with the fp16
emulation of ``emulation`` turned on. Installed only when there is no real torch_npu.
"""
from __future__ import annotations

import sys
import types
from typing import Any, Optional, Union

import torch

from . import backend, emulation, float_status

DEVICE_NAME = "Emulated NPU (CPU)"
_FLOAT_STATUS_SIZE = 8

_current_device = [0]


def _device_index(device: Union[None, int, str, torch.device]) -> int:
    """The index of an NPU named as an int, ``"npu"``, ``"npu:N"`` or a torch.device."""
    if device is None:
        return _current_device[0]
    if isinstance(device, int):
        index = device
    elif isinstance(device, torch.device):
        index = device.index if device.index is not None else _current_device[0]
    elif isinstance(device, str) and (device == "npu" or device.startswith("npu:")):
        index = int(device[4:]) if device.startswith("npu:") else _current_device[0]
    else:
        raise ValueError(f"not an NPU device: {device!r} (expected an int, 'npu' or 'npu:N')")
    if index != 0:
        raise ValueError(f"NPU {index} does not exist: the emulated NPU has one device, npu:0")
    return index


def is_npu_device_string(device: Any) -> bool:
    return isinstance(device, str) and (device == "npu" or device.startswith("npu:"))


def _cpu_if_npu(device: Any) -> Any:
    if is_npu_device_string(device):
        _device_index(device)
        return "cpu"
    return device


# --- torch.npu --------------------------------------------------------------------------------

def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def set_device(device: Union[int, str, torch.device]) -> None:
    _current_device[0] = _device_index(device)
    emulation.enable()


def current_device() -> int:
    return _current_device[0]


def get_device_name(device: Union[None, int, str, torch.device] = None) -> str:
    _device_index(device)
    return DEVICE_NAME


def synchronize(device: Union[None, int, str, torch.device] = None) -> None:
    """The emulated NPU runs synchronously; nothing to wait for."""
    _device_index(device)


def is_initialized() -> bool:
    return emulation.is_enabled()


def init() -> None:
    emulation.enable()


def manual_seed(seed: int) -> None:
    torch.manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    torch.manual_seed(seed)


def empty_cache() -> None:
    pass


def get_npu_overflow_flag() -> bool:
    """Whether the float status records an overflow."""
    return float_status.get(_current_device[0])


def clear_npu_overflow_flag() -> None:
    float_status.clear(_current_device[0])


def npu_alloc_float_status() -> torch.Tensor:
    """A float-status buffer, as torch_npu's ``npu_alloc_float_status``."""
    return torch.zeros(_FLOAT_STATUS_SIZE, dtype=torch.float32)


def npu_get_float_status(status: torch.Tensor) -> torch.Tensor:
    """Fill ``status`` from the device flag (element 0 non-zero means overflow) and return it."""
    status.zero_()
    if float_status.get(_current_device[0]):
        status[0] = 1.0
    return status


def npu_clear_float_status(status: torch.Tensor) -> torch.Tensor:
    float_status.clear(_current_device[0])
    status.zero_()
    return status


def _make_npu_module() -> types.ModuleType:
    module = types.ModuleType("torch.npu", "The emulated NPU (apex.npu): CPU tensors, NPU fp16 semantics.")
    for fn in (is_available, device_count, set_device, current_device, get_device_name,
               synchronize, is_initialized, init, manual_seed, manual_seed_all, empty_cache,
               get_npu_overflow_flag, clear_npu_overflow_flag):
        setattr(module, fn.__name__, fn)
    module.npu_alloc_float_status = npu_alloc_float_status
    module.npu_get_float_status = npu_get_float_status
    module.npu_clear_float_status = npu_clear_float_status
    return module


# --- Tensor / Module ----------------------------------------------------------------------------

def tensor_npu(self: torch.Tensor, device: Union[None, int, str, torch.device] = None,
               non_blocking: bool = False, memory_format: Optional[torch.memory_format] = None):
    """``Tensor.npu()``: the tensor itself, as a CPU tensor already is on the emulated NPU."""
    _device_index(device)
    emulation.enable()
    if memory_format is not None:
        return self.contiguous(memory_format=memory_format)
    return self


def module_npu(self: torch.nn.Module, device: Union[None, int, str, torch.device] = None):
    """``Module.npu()``: the module itself (its parameters already are on the emulated NPU)."""
    _device_index(device)
    emulation.enable()
    return self


def _wrap_to(original_to):
    def to(self, *args, **kwargs):
        args = tuple(_cpu_if_npu(a) for a in args)
        if "device" in kwargs:
            kwargs["device"] = _cpu_if_npu(kwargs["device"])
        return original_to(self, *args, **kwargs)

    to.__doc__ = original_to.__doc__
    to.__wrapped__ = original_to
    return to


def _wrap_load(original_load):
    """``torch.load(..., map_location="npu:0")`` loads onto the emulated NPU (the CPU)."""

    def load(f, map_location=None, *args, **kwargs):
        if is_npu_device_string(map_location):
            map_location = _cpu_if_npu(map_location)
        elif isinstance(map_location, dict):
            map_location = {k: _cpu_if_npu(v) for k, v in map_location.items()}
        return original_load(f, map_location, *args, **kwargs)

    load.__doc__ = original_load.__doc__
    load.__wrapped__ = original_load
    return load


_installed = [False]


def install() -> bool:
    """Install the shim unless torch_npu is present or the shim already is; returns whether it did."""
    if backend.is_real_npu() or _installed[0]:
        return False
    if hasattr(torch, "npu"):  # someone else's torch.npu: never replace it
        return False
    module = _make_npu_module()
    torch.npu = module
    sys.modules["torch.npu"] = module
    torch.npu_alloc_float_status = npu_alloc_float_status
    torch.npu_get_float_status = npu_get_float_status
    torch.npu_clear_float_status = npu_clear_float_status
    torch.Tensor.npu = tensor_npu
    torch.nn.Module.npu = module_npu
    torch.Tensor.to = _wrap_to(torch.Tensor.to)
    torch.nn.Module.to = _wrap_to(torch.nn.Module.to)
    torch.load = _wrap_load(torch.load)
    _installed[0] = True
    return True
