"""torch's grouping of tensors by device and dtype, with NPU tensors grouped by their NPU.

torch 2.x's foreach and fused optimizers and ``clip_grad_norm_`` group their tensors with
``torch._C._group_tensors_by_device_and_dtype`` and then move per-group values to the group's
device: the GradScaler's ``grad_scale`` and ``found_inf`` given to a fused optimizer, a tensor
learning rate. That grouping reads the device in C++, where an emulated NPU tensor is its host
memory, so the values were moved to the host and the fused kernel then met host tensors beside
NPU ones. Here the groups are keyed, and split where needed, by the NPU each tensor is on, as
torch_npu's real devices key them. torch 1.13 groups in Python by ``Tensor.device`` and needs
nothing.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, List, Optional, Tuple

import torch

from . import placement

_NAME = "_group_tensors_by_device_and_dtype"


def _split(
    lists: List[List[Any]],
    indices: List[int],
    by_npu: Dict[Optional[int], List[int]],
    with_indices: bool,
    device: torch.device,
    dtype: torch.dtype,
    out: Dict[Tuple[torch.device, torch.dtype], Any],
) -> None:
    """Add one host group's parts to ``out``, one per NPU (and one for host tensors)."""
    for npu, positions in by_npu.items():
        key_device = device if npu is None else torch.device("npu", npu)
        part = [[column[j] for j in positions] if column else [] for column in lists]
        out[(key_device, dtype)] = (part, [indices[j] for j in positions] if with_indices else [])


def _wrap(original: Any) -> Any:
    @functools.wraps(original)
    def group_tensors_by_device_and_dtype(tensorlistlist: Any, with_indices: bool = False) -> Any:
        groups = original(tensorlistlist, True)
        out: Dict[Tuple[torch.device, torch.dtype], Any] = {}
        for (device, dtype), (lists, indices) in groups.items():
            leading = lists[0] if lists else []
            by_npu: Dict[Optional[int], List[int]] = {}
            if device.type == "cpu":
                for j, tensor in enumerate(leading):
                    by_npu.setdefault(placement.npu_of(tensor), []).append(j)
            if len(by_npu) <= 1:
                npu = next(iter(by_npu), None)
                key_device = device if npu is None else torch.device("npu", npu)
                out[(key_device, dtype)] = (lists, indices if with_indices else [])
            else:
                _split(lists, indices, by_npu, with_indices, device, dtype, out)
        return out

    group_tensors_by_device_and_dtype._apexnpu_npu_groups = True  # type: ignore[attr-defined]
    return group_tensors_by_device_and_dtype


def install() -> None:
    """Group by NPU from now on (idempotent; nothing to do where torch lacks the function)."""
    original = getattr(torch._C, _NAME, None)
    if original is None or getattr(original, "_apexnpu_npu_groups", False):
        return
    setattr(torch._C, _NAME, _wrap(original))
