"""torch_npu for the emulated Ascend NPU, shipped by apexnpu as its own wheel.

On a machine without Huawei's torch_npu, ``import torch_npu`` gives Ascend training scripts the
API they expect (``torch.npu``, ``npu:N`` devices, ``Tensor.npu()``, ``is_npu``, the
``torch.npu.*Tensor`` types, hccl, ``torch.npu.amp``, ``torch_npu.npu.utils``, the profiler
entry points), backed by the CPU with the NPU's fp16 arithmetic. It needs nothing but torch (1.13
or 2.x); the compiled kernels in ``torch_npu._apexnpu`` make it faster. Never install this wheel
beside the real torch_npu: both own the import name ``torch_npu``.
"""

# ruff: noqa: E402  (imports placed after setup code)
# Marks the emulator: its NPU memory is host memory (apex's fused CPU kernels may run on it).
__apexnpu_emulator__ = True

import os

import torch  # noqa: E402, F401  (loaded before the emulator changes it)

from . import _emulator  # noqa: E402

_emulator.install()

from . import _ops, contrib, distributed, npu, optim, profiler, utils  # noqa: E402,F401
from ._device.formats import (
    Format,
    get_npu_format,
    get_storage_size,
    npu_format_cast,
    npu_format_cast_,
)
from .npu.utils import _erase_stream as erase_stream  # noqa: E402

# torch_npu.<operator>: every operator of _ops (torch_npu.npu_giou, torch_npu.fast_gelu, ...).
globals().update(_ops.OPERATORS)

_ops.install()


def _transfer_to_npu_if_asked() -> None:
    """``TORCH_TRANSFER_TO_NPU=1`` applies ``torch_npu.contrib.transfer_to_npu`` as torch_npu
    is imported, as torch_npu 2.x does; "0" (the default) leaves CUDA calls alone, and any
    other value is refused."""
    value = os.environ.get("TORCH_TRANSFER_TO_NPU", "0")
    if value == "1":
        from .contrib import transfer_to_npu  # noqa: F401 - importing it applies it
    elif value != "0":
        raise ValueError(
            f"Invalid value for TORCH_TRANSFER_TO_NPU: {value}. Only '0' or '1' is supported."
        )


__all__ = [
    "npu",
    "Format",
    "get_storage_size",
    "npu_format_cast",
    "npu_format_cast_",
    "get_npu_format",
    "erase_stream",
    "profiler",
    "utils",
    "contrib",
    "distributed",
    "optim",
] + sorted(_ops.OPERATORS)

_transfer_to_npu_if_asked()
