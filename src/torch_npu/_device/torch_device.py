"""``torch.device`` that can name the emulated NPU.

torch 2.x names out-of-tree devices itself: its PrivateUse1 device type is renamed ``npu``, as
Huawei's torch_npu does, and ``torch.device("npu:1")`` is torch's own object. torch 1.13's
``torch.device`` knows no "npu" type and cannot be subclassed, so there the emulator puts a class
of its own in its place: ``torch.device("npu:1")`` (or ``("npu", 1)``, or ``type="npu"``) gives
an ``NpuDevice``, every other device is torch's own object, and ``isinstance(x, torch.device)``
holds for both. As torch_npu 1.x's device parser, it also reads a device from one argument
(``torch.device(d)``, ``torch.device(device=d)``): an int is an NPU index, None the default
device (the host, or "npu" after ``set_default_tensor_type(torch.npu.FloatTensor)``),
and torch's "xla" device, which torch_npu 1.x put under its NPU, an NPU; ``torch.new_device`` is
the same constructor. A raw "xla" ``torch._C.device`` is not a ``torch.device`` there.
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from . import devices, tensor_types
from .devices import NpuDevice

TorchDevice = torch._C.device  # torch's own type, whatever torch.device names later
# torch 2.x: torch.device names "npu" once PrivateUse1 is renamed.
NATIVE = hasattr(getattr(torch, "utils", None), "rename_privateuse1_backend")


class _DeviceType(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        if isinstance(obj, TorchDevice):
            return obj.type != "xla"
        return isinstance(obj, NpuDevice)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, (TorchDevice, NpuDevice))


def _npu_device(type_name: Any, index: Any) -> Optional[NpuDevice]:
    """The NpuDevice that (type, index) names, or None when it names another device."""
    if isinstance(type_name, NpuDevice):
        return type_name
    if isinstance(type_name, TorchDevice) and (
        type_name.type == "xla" or (devices.cuda_means_npu and type_name.type == "cuda")
    ):
        return NpuDevice(type_name.index)
    if not isinstance(type_name, str):
        return None
    name, sep, rest = type_name.partition(":")
    name = name.strip()
    if name not in ("npu", "cuda") or (name == "cuda" and not devices.cuda_means_npu):
        return None
    if sep:
        if index is not None:
            raise RuntimeError(
                f"torch.device({type_name!r}, {index!r}): type (string) must not "
                "include an index because index was passed explicitly"
            )
        if not rest.isdigit():
            raise RuntimeError(
                f"torch.device: invalid device string {type_name!r}: expected 'npu' or 'npu:N'"
            )
        index = int(rest)
    return NpuDevice(index)


class device(metaclass=_DeviceType):  # noqa: N801 - it is torch.device
    """torch.device(type, index=None): torch's device, or an ``NpuDevice`` for "npu"/"npu:N"."""

    def __new__(cls, *args: Any, **kwargs: Any):  # type: ignore[misc]
        if set(kwargs) == {"device"} and not args:
            args, kwargs = (kwargs["device"],), {}
        if len(args) == 1 and not kwargs:
            read = _one_argument(args[0])
            if read is not None:
                return read
        type_name = kwargs.get("type", args[0] if args else None)
        index = kwargs.get("index", args[1] if len(args) > 1 else None)
        npu = _npu_device(type_name, index)
        if npu is not None:
            return npu
        return TorchDevice(*args, **kwargs)


device.__module__ = "torch"


def _one_argument(value: Any) -> Any:
    """The device one argument names when it is not a device type's name: an int (an NPU
    index), None (the default device) or a device object; None for a type name."""
    if value is None:
        if tensor_types.default_is_npu():
            return NpuDevice(None)
        return TorchDevice("cpu")
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise RuntimeError("Device index must not be negative")
        return NpuDevice(value)
    if isinstance(value, NpuDevice):
        return value
    if isinstance(value, TorchDevice):
        return _npu_device(value, None) or value
    return None


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
        torch.new_device = device  # type: ignore[attr-defined]
