"""Which code runs a fused step: the runtime's kernels or torch operations on combined tensors.

``APEXNPU_OPTIM_PATH`` = ``torch`` forces torch operations (the real-NPU path, testable on the
CPU), ``runtime`` requires the runtime kernels, ``auto`` (default) uses the runtime kernels on the
emulated NPU when ``apex._apexnpu`` provides them.
"""
from __future__ import annotations

from typing import List, Sequence

import torch

from apex.npu.backend import KERNEL_PATHS as PATHS  # noqa: F401 - re-exported
from apex.npu.backend import requested_kernel_path as requested_path  # noqa: F401
from apex.npu.backend import runtime_kernels  # noqa: F401


def total_norm(tensors: Sequence[torch.Tensor], norm_type: float) -> torch.Tensor:
    """The ``norm_type`` norm of all ``tensors`` together (as ``clip_grad_norm_`` computes it)."""
    if norm_type == float("inf"):
        norms: List[torch.Tensor] = [t.detach().abs().max().float() for t in tensors]
        return norms[0] if len(norms) == 1 else torch.stack(norms).max()
    norms = [torch.norm(t.detach().float(), norm_type) for t in tensors]
    return torch.norm(torch.stack(norms), norm_type)
