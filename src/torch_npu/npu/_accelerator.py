"""``torch.accelerator`` (torch >= 2.6) on the emulated NPU.

torch answers it from the accelerator backend's C++ device guard, allocator and stream hooks,
which torch_npu registers on an NPU and a Python backend cannot (torch's Python hooks cover
availability and the device type only). Without this, ``set_device_index`` was lost (every
rank stayed on npu:0), and ``synchronize``, the memory functions and ``set_stream`` raised. Each
function below is ``torch.npu``'s of the same meaning; the rest of ``torch.accelerator``
(``current_accelerator``, ``device_count``, ``is_available``) already answers from the
backend's name and Python hooks.
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from . import memory, utils

_accelerator = getattr(torch, "accelerator", None)


def _index(device: Any, optional: bool) -> int:
    """torch.accelerator's reading of a device argument (an index, "npu:N", a torch.device)."""
    from torch.accelerator._utils import _get_device_index

    return _get_device_index(device, optional=optional)


def set_device_index(device: Any) -> None:
    """Make ``device`` the current NPU (a negative index: no-op, as torch's)."""
    index = _index(device, optional=False)
    if index >= 0:
        utils.set_device(index)


def current_device_index() -> int:
    return utils.current_device()


class device_index:  # noqa: N801 - torch.accelerator's context manager
    """``with torch.accelerator.device_index(i):`` NPU ``i`` is current inside (None: no
    change); the previous one is current again after."""

    def __init__(self, device: Optional[int]) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            self.prev_idx = utils.current_device()
            utils.set_device(self.idx)

    def __exit__(self, *exc_info: object) -> None:
        if self.idx is not None and self.prev_idx >= 0:
            utils.set_device(self.prev_idx)


def synchronize(device: Any = None) -> None:
    utils.synchronize(_index(device, optional=True))


def current_stream(device: Any = None) -> Any:
    return utils.current_stream(_index(device, optional=True))


def set_stream(stream: Any) -> None:
    utils.set_stream(stream)


def _on_device(function: Any) -> Any:
    def call(device: Any = None) -> Any:
        return function(_index(device, optional=True))

    call.__name__ = function.__name__
    call.__doc__ = function.__doc__
    return call


_FUNCTIONS = {
    "set_device_index": set_device_index,
    "set_device_idx": set_device_index,
    "current_device_index": current_device_index,
    "current_device_idx": current_device_index,
    "device_index": device_index,
    "synchronize": synchronize,
    "current_stream": current_stream,
    "set_stream": set_stream,
    "empty_cache": memory.empty_cache,
    "memory_stats": _on_device(memory.memory_stats),
    "memory_allocated": _on_device(memory.memory_allocated),
    "max_memory_allocated": _on_device(memory.max_memory_allocated),
    "memory_reserved": _on_device(memory.memory_reserved),
    "max_memory_reserved": _on_device(memory.max_memory_reserved),
    "reset_peak_memory_stats": _on_device(memory.reset_peak_memory_stats),
    "reset_accumulated_memory_stats": _on_device(memory.reset_accumulated_memory_stats),
    "get_memory_info": _on_device(memory.mem_get_info),
}


def install() -> None:
    """Put the functions into ``torch.accelerator`` and its ``memory`` submodule (where torch
    has them: each torch release has its own set)."""
    if _accelerator is None:
        return
    targets = [_accelerator] + [getattr(_accelerator, "memory", None)]
    for module in filter(None, targets):
        for name, function in _FUNCTIONS.items():
            if hasattr(module, name):
                setattr(module, name, function)
