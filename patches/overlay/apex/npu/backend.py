"""The one seam between a real Ascend NPU (``torch_npu``) and the emulated NPU on the CPU."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Optional

_torch_npu = None  # the real torch_npu module once imported
_torch_npu_missing = False  # no real torch_npu (asked once: find_spec stats sys.path)


def _load_torch_npu() -> Optional[object]:
    global _torch_npu, _torch_npu_missing
    if _torch_npu is not None:
        return _torch_npu
    if os.environ.get("APEXNPU_FORCE_EMULATION") == "1" or _torch_npu_missing:
        return None
    module = sys.modules.get("torch_npu")
    if module is None:
        if importlib.util.find_spec("torch_npu") is None:
            _torch_npu_missing = True
            return None
        module = importlib.import_module("torch_npu")
    if getattr(module, "__apexnpu_emulator__", False):
        # The emulator's own torch_npu: it sets the mark before it loads this package.
        _torch_npu_missing = True
        return None
    _torch_npu = module
    return _torch_npu


def is_real_npu() -> bool:
    """True when Huawei's torch_npu is importable: tensors live on the NPU and torch's own ops
    run. The emulator's torch_npu does not count."""
    return _load_torch_npu() is not None


def real_torch_npu() -> Optional[object]:
    """Huawei's torch_npu module, or None on the emulated NPU."""
    return _load_torch_npu()


def is_emulated_npu() -> bool:
    """True when the NPU is emulated on the CPU (no real torch_npu)."""
    return not is_real_npu()


def device_type() -> str:
    """The torch device type that NPU tensors report: ``"npu"``, real or emulated."""
    return "npu"


_runtime_module = []  # [module or None] once looked up


def runtime():
    """The compiled runtime module ``apex._apexnpu``, or None when it was not built."""
    if not _runtime_module:
        try:
            _runtime_module.append(importlib.import_module("apex._apexnpu"))
        except ImportError:
            _runtime_module.append(None)
    return _runtime_module[0]


def is_npu_tensor(tensor) -> bool:
    """Whether ``tensor`` lives on the NPU. On the emulated NPU the host memory backing it
    counts too: scripts that never call ``.npu()`` still run with the NPU's arithmetic."""
    device = tensor.device.type
    return device == "npu" or (device == "cpu" and is_emulated_npu())


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
        raise RuntimeError("APEXNPU_OPTIM_PATH=runtime but the runtime apex._apexnpu is not "
                           "available; build apex with `apexnpu build` or unset the variable")
    return rt
