"""Which code runs a fused step: the runtime's kernels or torch operations on combined tensors.

``APEXNPU_OPTIM_PATH`` = ``torch`` forces torch operations (the real-NPU path, testable on the
CPU), ``runtime`` requires the runtime kernels, ``auto`` (default) uses the runtime kernels on the
emulated NPU when ``apex._apexnpu`` provides them.
"""
from __future__ import annotations

import os
from typing import List, Sequence

import torch

PATHS = ("auto", "torch", "runtime")


def requested_path() -> str:
    path = os.environ.get("APEXNPU_OPTIM_PATH", "auto").strip().lower() or "auto"
    if path not in PATHS:
        raise ValueError(f"APEXNPU_OPTIM_PATH={path!r} is not one of {', '.join(PATHS)}")
    return path


def runtime_kernels():
    """The runtime module when fused steps should use its kernels, else None."""
    path = requested_path()
    if path == "torch":
        return None
    from apex.npu import backend

    rt = backend.runtime() if backend.is_emulated_npu() else None
    if rt is None and path == "runtime":
        raise RuntimeError("APEXNPU_OPTIM_PATH=runtime but the runtime apex._apexnpu is not "
                           "available; build apex with `apexnpu build` or unset the variable")
    return rt


def total_norm(tensors: Sequence[torch.Tensor], norm_type: float) -> torch.Tensor:
    """The ``norm_type`` norm of all ``tensors`` together (as ``clip_grad_norm_`` computes it)."""
    if norm_type == float("inf"):
        norms: List[torch.Tensor] = [t.detach().abs().max().float() for t in tensors]
        return norms[0] if len(norms) == 1 else torch.stack(norms).max()
    norms = [torch.norm(t.detach().float(), norm_type) for t in tensors]
    return torch.norm(torch.stack(norms), norm_type)
