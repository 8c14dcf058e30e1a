"""``torch.device`` that can name the emulated NPU.

torch 2.x names out-of-tree devices itself: its PrivateUse1 device type is renamed ``npu``, as
Huawei's torch_npu does, and ``torch.device("npu:1")`` is torch's own object. torch 1.13's
``torch.device`` knows no "npu" type and cannot be subclassed, so there the emulator puts a class
of its own in its place: ``torch.device("npu:1")`` (or ``("npu", 1)``, or ``type="npu"``) gives
an ``NpuDevice``, every other device is torch's own object, and ``isinstance(x, torch.device)``
holds for both.
"""
from __future__ import annotations

from typing import Any, Optional

import torch

from . import devices
from .devices import NpuDevice

TorchDevice = torch._C.device  # torch's own type, whatever torch.device names later
# torch 2.x: torch.device names "npu" once PrivateUse1 is renamed.
NATIVE = hasattr(getattr(torch, "utils", None), "rename_privateuse1_backend")


class _DeviceType(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, (TorchDevice, NpuDevice))

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, (TorchDevice, NpuDevice))


def _npu_device(type_name: Any, index: Any) -> Optional[NpuDevice]:
    """The NpuDevice that (type, index) names, or None when it names another device."""
    if isinstance(type_name, NpuDevice):
        return type_name
    if isinstance(type_name, TorchDevice) and devices.cuda_means_npu and type_name.type == "cuda":
        return NpuDevice(type_name.index)
    if not isinstance(type_name, str):
        return None
    name, sep, rest = type_name.partition(":")
    if name.strip() not in ("npu", "cuda") or (name.strip() == "cuda" and not devices.cuda_means_npu):
        return None
    if sep:
        if index is not None:
            raise RuntimeError(f"torch.device({type_name!r}, {index!r}): type (string) must not "
                               "include an index because index was passed explicitly")
        if not rest.isdigit():
            raise RuntimeError(f"torch.device: invalid device string {type_name!r}: expected "
                               "'npu' or 'npu:N'")
        index = int(rest)
    return NpuDevice(index)


class device(metaclass=_DeviceType):  # noqa: N801 - it is torch.device
    """torch.device(type, index=None): torch's device, or an ``NpuDevice`` for "npu"/"npu:N"."""

    def __new__(cls, *args: Any, **kwargs: Any):  # type: ignore[misc]
        type_name = kwargs.get("type", args[0] if args else None)
        index = kwargs.get("index", args[1] if len(args) > 1 else None)
        npu = _npu_device(type_name, index)
        if npu is not None:
            return npu
        return TorchDevice(*args, **kwargs)


device.__module__ = "torch"


def _register_accelerator() -> None:
    """torch 2.x asks the PrivateUse1 backend's hooks and device guard whenever it looks for the
    accelerator (``dist.barrier``, ``torch.accelerator``); without them it raises. The emulated
    NPU answers from Python, as torch's own Python backends do."""
    acc = getattr(torch._C, "_acc", None)
    if acc is None:
        return

    class Hooks(acc.PrivateUse1Hooks):
        def is_available(self) -> bool:
            return True

        def has_primary_context(self, device_index: int) -> bool:
            return True

        def is_built(self) -> bool:
            return True

    class Guard(acc.DeviceGuard):
        def type_(self) -> Any:
            return torch._C._autograd.DeviceType.PrivateUse1

    acc.register_python_privateuseone_hook(Hooks())
    acc.register_python_privateuseone_device_guard(Guard())


def install() -> None:
    if NATIVE:
        if torch._C._get_privateuse1_backend_name() != "npu":
            torch.utils.rename_privateuse1_backend("npu")
            _register_accelerator()
        return
    if torch.device is not device:
        device.__doc__ = TorchDevice.__doc__
        torch.device = device  # type: ignore[misc]
