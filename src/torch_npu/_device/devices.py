"""The emulated NPU's devices: how many there are, which one is current, and how one is named.

An Atlas 800 node has eight NPUs, so the emulator has eight by default (``APEXNPU_DEVICE_COUNT``
sets another number); all of them are backed by the CPU. As on the NPU, the current device
belongs to the calling thread and starts at 0.

``torch.device("npu:N")`` gives an ``NpuDevice``: torch 1.13's own ``torch.device`` type cannot
name an NPU, so the emulator's functions that take a device (see ``device_args``) read this class
and hand torch the CPU.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Optional

COUNT_VARIABLE = "APEXNPU_DEVICE_COUNT"
DEFAULT_COUNT = 8
MAX_COUNT = 64

_count: Optional[int] = None
_thread = threading.local()


def device_count() -> int:
    """How many emulated NPUs there are (``APEXNPU_DEVICE_COUNT``, default 8)."""
    global _count
    if _count is None:
        text = os.environ.get(COUNT_VARIABLE, "").strip()
        if not text:
            _count = DEFAULT_COUNT
        elif not text.isdigit() or not 1 <= int(text) <= MAX_COUNT:
            raise ValueError(f"{COUNT_VARIABLE}={text!r}: expected a whole number of emulated "
                             f"NPUs from 1 to {MAX_COUNT}")
        else:
            _count = int(text)
    return _count


def current_device() -> int:
    """The calling thread's current NPU (0 until ``set_device``)."""
    return getattr(_thread, "index", 0)


def set_current_device(index: int) -> None:
    _thread.index = index


class NpuDevice:
    """An emulated NPU as ``torch.device("npu:N")`` names it: ``type == "npu"``, ``index`` N or
    None (the current device, resolved where the device is used)."""

    __slots__ = ("_index",)

    def __init__(self, index: Optional[int] = None) -> None:
        if index is not None:
            index = check_index(index, "torch.device")
        object.__setattr__(self, "_index", index)

    @property
    def type(self) -> str:
        return "npu"

    @property
    def index(self) -> Optional[int]:
        return self._index

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"torch.device attribute {name!r} is read-only")

    def __str__(self) -> str:
        return "npu" if self._index is None else f"npu:{self._index}"

    def __repr__(self) -> str:
        if self._index is None:
            return "device(type='npu')"
        return f"device(type='npu', index={self._index})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NpuDevice):
            return self._index == other._index
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("npu", self._index))

    def __reduce__(self):
        import torch

        return (torch.device, (str(self),))


# Set by torch_npu.contrib.transfer_to_npu: CUDA devices then name emulated NPUs.
cuda_means_npu = False


def _npu_type(name: str) -> bool:
    return name == "npu" or (cuda_means_npu and name == "cuda")


def check_index(index: Any, what: str) -> int:
    """``index`` as an NPU index, or a clear error naming ``what`` asked for it."""
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"{what}: an NPU index must be an int, got {index!r}")
    count = device_count()
    if not 0 <= index < count:
        raise RuntimeError(f"{what}: npu:{index} does not exist: the emulated NPU has {count} "
                           f"devices, npu:0 to npu:{count - 1} (set {COUNT_VARIABLE} for more)")
    return index


def parse_npu_string(text: str, what: str) -> Optional[int]:
    """The NPU index a device string names (the current device for a bare "npu"), or None when
    it names no NPU. Malformed NPU strings are errors."""
    name, sep, rest = text.partition(":")
    if not _npu_type(name.strip()):
        return None
    if not sep:
        return current_device()
    if not rest.isdigit():
        raise RuntimeError(f"{what}: invalid device string {text!r}: expected 'npu' or 'npu:N'")
    return check_index(int(rest), what)


def npu_index(device: Any, what: str) -> Optional[int]:
    """The emulated NPU that ``device`` (a string, ``torch.device`` or ``NpuDevice``) names, or
    None when it names another device (or is None). ``what`` names the call in errors."""
    if device is None:
        return None
    if isinstance(device, NpuDevice):
        return current_device() if device.index is None else device.index
    if isinstance(device, str):
        return parse_npu_string(device, what)
    type_name = getattr(device, "type", None)
    if type_name == "npu":  # torch 2.x's own torch.device("npu:N")
        index = getattr(device, "index", None)
        return current_device() if index is None else check_index(index, what)
    if cuda_means_npu and type_name == "cuda" and not isinstance(device, NpuDevice):
        index = getattr(device, "index", None)
        return current_device() if index is None else check_index(index, what)
    return None


def index_of(device: Any, what: str) -> int:
    """The NPU index of a ``torch.npu`` call's device argument: None (current), an int, 'npu',
    'npu:N' or an NPU ``torch.device``."""
    if device is None:
        return current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return check_index(device, what)
    index = npu_index(device, what)
    if index is None:
        raise ValueError(f"{what}: not an NPU device: {device!r} (expected an int, 'npu', "
                         "'npu:N' or torch.device('npu:N'))")
    return index
