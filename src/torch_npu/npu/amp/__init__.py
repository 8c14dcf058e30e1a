"""``torch.npu.amp``: autocast, GradScaler and the custom-Function decorators on the emulated NPU
(also what transfer_to_npu puts in place of ``torch.cuda.amp``)."""
from __future__ import annotations

import torch

from ..._device import devices
from .autocast_mode import autocast, custom_bwd, custom_fwd  # noqa: F401
from .autocast_mode import is_enabled as is_autocast_enabled  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401


class _TorchAutocast:
    """``torch.autocast`` that also takes ``device_type="npu"`` (torch 1.13's refuses it)."""

    def __init__(self, original: type) -> None:
        self._original = original

    def __call__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        if device_type == "npu" or (device_type == "cuda" and devices.cuda_means_npu):
            return autocast(enabled=enabled, dtype=torch.float16 if dtype is None else dtype,
                            cache_enabled=True if cache_enabled is None else cache_enabled)
        return self._original(device_type, dtype=dtype, enabled=enabled,
                              cache_enabled=cache_enabled)

    def __instancecheck__(self, obj: object) -> bool:
        return isinstance(obj, (self._original, autocast))


def install_torch_autocast() -> None:
    if not isinstance(torch.autocast, _TorchAutocast):
        torch.autocast = _TorchAutocast(torch.autocast)  # type: ignore[assignment]
