"""The emulator's compiled kernels: ``torch_npu._apexnpu``, the apexnpu runtime carried in this
wheel (the float status, fp16 stores with the NPU's saturation, fp16 operations in one pass,
unscaling). Without it the emulator computes the same bits with torch operations, slower.
"""

from __future__ import annotations

import importlib
import os

KERNEL_PATHS = ("auto", "torch", "runtime")
_module: list = []  # [module or None] once looked up


def runtime():
    """The compiled runtime module, or None when this copy of the package has none."""
    if not _module:
        try:
            _module.append(importlib.import_module("torch_npu._apexnpu"))
        except ImportError:
            _module.append(None)
    return _module[0]


def requested_kernel_path() -> str:
    """``APEXNPU_OPTIM_PATH``: ``torch`` forces torch operations, ``runtime`` requires the
    compiled kernels, ``auto`` (default) uses them when present."""
    path = os.environ.get("APEXNPU_OPTIM_PATH", "auto").strip().lower() or "auto"
    if path not in KERNEL_PATHS:
        raise ValueError(f"APEXNPU_OPTIM_PATH={path!r} is not one of {', '.join(KERNEL_PATHS)}")
    return path


_parsed: dict = {}  # raw APEXNPU_OPTIM_PATH value -> requested_kernel_path()'s answer


def runtime_kernels():
    """The runtime module when work should run in its kernels, else None. Every fp16 operation
    asks, so the variable (read each time: tests set it in the process) is parsed once per
    value."""
    raw = os.environ.get("APEXNPU_OPTIM_PATH")
    path = _parsed.get(raw)
    if path is None:
        path = _parsed[raw] = requested_kernel_path()
    if path == "torch":
        return None
    rt = runtime()
    if rt is None and path == "runtime":
        raise RuntimeError(
            "APEXNPU_OPTIM_PATH=runtime but this torch_npu emulator carries no "
            "compiled runtime (torch_npu._apexnpu); install the emulator's wheel "
            "that `apexnpu build` made, or unset the variable"
        )
    return rt
