"""The one seam between apex and the NPU: ``torch_npu``, Huawei's or the emulator's.

apex reaches the device only through torch_npu's public API (``torch.npu``, the float status,
``torch_npu.npu.utils``, storage sizes and formats), so its code path is the same on a real NPU
and on the emulated one. The one thing it asks the emulator is whether NPU memory is host memory
(``torch_npu.__apexnpu_emulator__``): then apex's fused work (optimizers, unscaling, gradient
norms) may run in apex's own compiled kernels, ``apex._apexnpu``, over that memory.
"""

from __future__ import annotations

import importlib
import os

try:
    import torch_npu
except ImportError as error:  # pragma: no cover - depends on the machine
    raise ImportError(
        "apex for Ascend needs torch_npu: install Huawei's torch_npu on an NPU machine, or the "
        "emulated NPU's wheel (torch_npu_emulator, written by `apexnpu build`) anywhere else"
    ) from error


def is_emulated_npu() -> bool:
    """True when torch_npu is apexnpu's emulator: NPU tensors live in host memory."""
    return bool(getattr(torch_npu, "__apexnpu_emulator__", False))


def is_real_npu() -> bool:
    """True when torch_npu is Huawei's: tensors live on the NPU."""
    return not is_emulated_npu()


def device_type() -> str:
    """The torch device type of NPU tensors."""
    return "npu"


def is_npu_tensor(tensor) -> bool:
    """Whether ``tensor`` lives on the NPU."""
    return tensor.device.type == "npu"


def inf_nan_mode() -> bool:
    """Whether the NPU runs in INF/NAN mode (Ascend 910B: fp16 overflow gives inf and NaN, and
    loss scalers look at the values) rather than saturating and raising the float status."""
    utils = getattr(torch_npu.npu, "utils", None)
    return bool(
        utils is not None and hasattr(utils, "is_support_inf_nan") and utils.is_support_inf_nan()
    )


_runtime_module = []  # [module or None] once looked up


def runtime():
    """apex's compiled runtime module ``apex._apexnpu``, or None when it was not built."""
    if not _runtime_module:
        try:
            _runtime_module.append(importlib.import_module("apex._apexnpu"))
        except ImportError:
            _runtime_module.append(None)
    return _runtime_module[0]


KERNEL_PATHS = ("auto", "torch", "runtime")


def requested_kernel_path() -> str:
    """``APEXNPU_OPTIM_PATH``: ``torch`` forces torch operations (the real-NPU path, testable on
    the CPU), ``runtime`` requires the runtime's kernels, ``auto`` (default) uses them on the
    emulated NPU when built. It governs the fused optimizers, unscaling and gradient clipping."""
    path = os.environ.get("APEXNPU_OPTIM_PATH", "auto").strip().lower() or "auto"
    if path not in KERNEL_PATHS:
        raise ValueError(f"APEXNPU_OPTIM_PATH={path!r} is not one of {', '.join(KERNEL_PATHS)}")
    return path


def runtime_kernels():
    """The runtime module when fused work should run in its kernels, else None."""
    path = requested_kernel_path()
    if path == "torch":
        return None
    rt = runtime() if is_emulated_npu() else None
    if rt is None and path == "runtime":
        raise RuntimeError(
            "APEXNPU_OPTIM_PATH=runtime but the runtime apex._apexnpu is not "
            "available here (it runs on the emulated NPU's host memory); build "
            "apex with `apexnpu build` or unset the variable"
        )
    return rt
