"""FSDP on the emulated NPU: what torch_npu changes in torch for it.

torch's FSDP (``FullyShardedDataParallel``, torch 2.x's ``fully_shard``) runs on the emulated
NPU as it is, over hccl; torch_npu adds its loss scaler: ``torch_npu._ShardedGradScaler``, put
in place of ``torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler`` (where accelerate
and scripts take it from) when that module is imported, so that importing torch_npu does not
import FSDP. torch 2.x's DTensor, FSDP2's parameters, reports the NPU its shard is on.
"""

from __future__ import annotations

import sys
from typing import Any

import torch

from . import after_import
from .._device.torch_device import NATIVE as NATIVE_DEVICE

SCALER_MODULE = "torch.distributed.fsdp.sharded_grad_scaler"


def _put_scaler(module: Any) -> None:
    from ..npu.amp import sharded_grad_scaler

    sharded_grad_scaler.install_into_torch(module)


def install() -> None:
    from ..npu.amp import sharded_grad_scaler

    package = sys.modules.get("torch_npu")
    if package is not None:
        package._ShardedGradScaler = sharded_grad_scaler._ShardedGradScaler
    after_import.when_imported(SCALER_MODULE, _put_scaler)
    if NATIVE_DEVICE:
        after_import.when_imported(DTENSOR_MODULE, _dtensor_reports_its_npu)


DTENSOR_MODULE = "torch.distributed.tensor._api"


def _dtensor_reports_its_npu(module: Any) -> None:
    """A DTensor is on the device of its local shard: torch makes the DTensor in C++ from the
    shard's own device, which for the emulated NPU's shard is the host backing it. FSDP2's
    parameters and code that asks a parameter for its device (``model.device``) see the NPU,
    as with torch_npu."""
    from .._device import placement, tensor_methods

    dtensor = module.DTensor
    if getattr(dtensor, "_apexnpu_device", False):
        return
    base_device, base_is_npu = torch.Tensor.device, torch.Tensor.is_npu

    def device(self: Any) -> Any:
        index = placement.npu_of(self._local_tensor)
        return base_device.__get__(self) if index is None else tensor_methods.npu_device(index)

    def is_npu(self: Any) -> bool:
        return placement.npu_of(self._local_tensor) is not None or base_is_npu.__get__(self)

    dtensor.device = property(device, doc=base_device.__doc__)
    dtensor.is_npu = property(is_npu, doc=base_is_npu.__doc__)
    dtensor._apexnpu_device = True
