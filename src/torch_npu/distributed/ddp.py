"""torch's DistributedDataParallel over a module on the emulated NPU.

Ascend scripts pass the NPU they train on: ``DDP(model, device_ids=[rank], output_device=rank)``.
The emulated NPU is backed by the CPU, where torch's DDP takes no device ids, so once the ids are
checked against the NPU the module is on they are not handed to torch. What torch does with them
on a device is done here instead: each forward moves its inputs (tensors, and those in tuples,
lists and dicts) to that device, so a script may hand the model host batches, as on an NPU.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
from torch.nn.utils.rnn import PackedSequence

from .. import _wraps
from .._device import devices, placement


def _module_npu(module: torch.nn.Module) -> Optional[int]:
    for p in module.parameters():
        index = placement.npu_of(p)
        if index is not None:
            return index
    return None


def _check_ids(device_ids: Any, output_device: Any, npu: int) -> None:
    what = "DistributedDataParallel"
    for name, value in (("device_ids", list(device_ids or ())), ("output_device", output_device)):
        for item in value if isinstance(value, list) else [value]:
            if item is None:
                continue
            index = devices.index_of(item, f"{what}({name}=...)")
            if index != npu:
                raise ValueError(
                    f"{what}: {name} names npu:{index} but the module's parameters "
                    f"are on npu:{npu}; move the module with .npu({index}) or pass "
                    f"device_ids=[{npu}]"
                )


def _wrap_init(original):
    def __init__(self, module, device_ids=None, output_device=None, *args, **kwargs):
        npu = _module_npu(module)
        inputs_to = None
        if npu is not None:
            _check_ids(device_ids, output_device, npu)
            if device_ids:
                inputs_to = f"npu:{npu}"
            device_ids, output_device = None, None
        original(self, module, device_ids, output_device, *args, **kwargs)
        self._apexnpu_inputs_to = inputs_to

    __init__.__doc__ = original.__doc__
    _wraps.mark(__init__, original)
    return __init__


def _to_device(value: Any, device: str) -> Any:
    """``value`` with its tensors on ``device``, through the containers torch's DDP walks
    (tuples, named tuples, lists, dicts); anything else as it is."""
    if isinstance(value, (torch.Tensor, PackedSequence)):
        return value.to(device)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*(_to_device(v, device) for v in value))
    if isinstance(value, tuple):
        return tuple(_to_device(v, device) for v in value)
    if isinstance(value, list):
        return [_to_device(v, device) for v in value]
    if isinstance(value, dict):
        return type(value)((k, _to_device(v, device)) for k, v in value.items())
    return value


def _wrap_forward(original):
    def forward(self, *inputs, **kwargs):
        device = getattr(self, "_apexnpu_inputs_to", None)
        if device is not None:
            inputs = _to_device(inputs, device)
            kwargs = {k: _to_device(v, device) for k, v in kwargs.items()}
        return original(self, *inputs, **kwargs)

    forward.__doc__ = original.__doc__
    _wraps.mark(forward, original)
    return forward


def _bucket_npu(bucket: Any) -> Optional[int]:
    for p in bucket.parameters():
        index = placement.npu_of(p)
        if index is not None:
            return index
    return None


def _on_the_buckets_npu(original):
    """``GradBucket.buffer``/``gradients``: DDP's C++ makes a bucket on the backing memory, the
    host; on the NPU it is NPU memory, so a comm hook sees it there (its casts, e.g. the fp16
    compression hook's, then round as the NPU does, and its future's result is on the NPU)."""

    def method(self):
        out = original(self)
        npu = _bucket_npu(self)
        if npu is not None:
            for t in out if isinstance(out, list) else [out]:
                placement.put(t, npu)
        return out

    method.__doc__ = original.__doc__
    _wraps.mark(method, original)
    return method


def install() -> None:
    ddp = torch.nn.parallel.DistributedDataParallel
    if not _wraps.is_wrapper(ddp.__init__):
        ddp.__init__ = _wrap_init(ddp.__init__)
    if not _wraps.is_wrapper(ddp.forward):
        ddp.forward = _wrap_forward(ddp.forward)
    bucket = getattr(torch.distributed, "GradBucket", None)
    if bucket is not None and not _wraps.is_wrapper(bucket.buffer):
        bucket.buffer = _on_the_buckets_npu(bucket.buffer)
        bucket.gradients = _on_the_buckets_npu(bucket.gradients)
