"""``torch.npu.amp``: autocast, GradScaler, the custom-Function decorators and apex's
``amp_decorate`` / ``amp_parameters`` (O2 for torch-native AMP code), as one module (also what
transfer_to_npu puts in place of ``torch.cuda.amp``)."""
from __future__ import annotations

import types

import torch

from . import amp_decorate as _amp_decorate
from . import autocast as _autocast
from . import grad_scaler as _grad_scaler


def make_module() -> types.ModuleType:
    module = types.ModuleType("torch.npu.amp", "Automatic mixed precision on the (emulated) NPU.")
    module.autocast = _autocast.autocast
    module.GradScaler = _grad_scaler.GradScaler
    module.custom_fwd = _autocast.custom_fwd
    module.custom_bwd = _autocast.custom_bwd
    module.is_autocast_enabled = _autocast.is_enabled
    module.amp_decorate = _amp_decorate.amp_decorate
    module.amp_parameters = _amp_decorate.amp_parameters
    return module


class _TorchAutocast:
    """``torch.autocast`` that also takes ``device_type="npu"`` (torch 1.13's refuses it)."""

    def __init__(self, original: type) -> None:
        self._original = original

    def __call__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        if device_type == "npu" or (device_type == "cuda" and _cuda_means_npu()):
            return _autocast.autocast(enabled=enabled,
                                      dtype=torch.float16 if dtype is None else dtype,
                                      cache_enabled=True if cache_enabled is None
                                      else cache_enabled)
        return self._original(device_type, dtype=dtype, enabled=enabled,
                              cache_enabled=cache_enabled)

    def __instancecheck__(self, obj: object) -> bool:
        return isinstance(obj, (self._original, _autocast.autocast))


def _cuda_means_npu() -> bool:
    from . import devices

    return devices.cuda_means_npu


def install_torch_autocast() -> None:
    if not isinstance(torch.autocast, _TorchAutocast):
        torch.autocast = _TorchAutocast(torch.autocast)  # type: ignore[assignment]
