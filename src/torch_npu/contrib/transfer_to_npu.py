"""Ascend's automatic migration of CUDA scripts: importing this module makes CUDA code run on the
(emulated) NPU unchanged.

After ``import torch_npu.contrib.transfer_to_npu``: "cuda"/"cuda:N" devices and
``torch.device("cuda", N)`` name NPUs wherever a device is taken (makers, ``to``, modules,
``torch.load``'s map_location, DDP's device ids); ``.cuda()`` is ``.npu()``; ``torch.cuda.*``
answers for the NPUs (devices, seeds, streams, events, memory, tensor types, ``torch.cuda.amp``);
``torch.autocast("cuda")`` is the NPU's autocast; and the "nccl" backend of
``torch.distributed`` is hccl.
"""
from __future__ import annotations

import functools
import sys
import types
from typing import Any, Callable

import torch
import torch.distributed as dist

import torch_npu  # noqa: F401 - the emulated NPU first
from .. import _wraps
from .._device import devices

# torch.cuda functions and classes that torch.npu answers under the same name.
_CUDA_NAMES = (
    "is_available", "device_count", "set_device", "current_device", "get_device_name",
    "get_device_properties", "synchronize", "is_initialized", "init", "device", "device_of",
    "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state",
    "set_rng_state", "get_rng_state_all", "set_rng_state_all", "default_generators", "Stream",
    "Event", "current_stream", "default_stream", "set_stream", "stream", "memory_allocated",
    "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_cached",
    "max_memory_cached", "reset_peak_memory_stats", "reset_max_memory_allocated",
    "reset_max_memory_cached", "mem_get_info", "memory_stats", "memory_summary", "empty_cache",
    "FloatTensor", "HalfTensor", "DoubleTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
    "ShortTensor", "IntTensor", "LongTensor", "BoolTensor", "amp",
)


def _nvtx() -> types.ModuleType:
    """NVTX ranges mark profiles on a GPU; on the NPU they mark nothing."""
    module = types.ModuleType("torch.cuda.nvtx")
    module.range_push = lambda msg: 0
    module.range_pop = lambda: 0
    module.mark = lambda msg: None

    class range:  # noqa: N801 - torch.cuda.nvtx.range is a context manager
        def __init__(self, msg: str, *args: Any, **kwargs: Any) -> None:
            pass

        def __enter__(self) -> None:
            pass

        def __exit__(self, *exc: Any) -> None:
            pass

    module.range = range
    return module


def _nccl_is_hccl(original: Callable) -> Callable:
    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        if "backend" in kwargs:
            if str(kwargs["backend"]).lower() == "nccl":
                kwargs = dict(kwargs, backend="hccl")
        elif args and isinstance(args[0], str) and args[0].lower() == "nccl":
            args = ("hccl",) + tuple(args[1:])
        return original(*args, **kwargs)

    _wraps.mark(call, original)
    return call


def _install() -> None:
    if devices.cuda_means_npu:
        return
    devices.cuda_means_npu = True
    for name in _CUDA_NAMES:
        if hasattr(torch.npu, name):
            setattr(torch.cuda, name, getattr(torch.npu, name))
    sys.modules["torch.cuda.amp"] = torch.npu.amp
    torch.cuda.nvtx = _nvtx()
    torch.Tensor.cuda = torch.Tensor.npu
    torch.nn.Module.cuda = torch.nn.Module.npu
    if dist.is_available():
        dist.init_process_group = _nccl_is_hccl(dist.init_process_group)
        dist.new_group = _nccl_is_hccl(dist.new_group)
        dist.is_nccl_available = lambda: True


_install()
