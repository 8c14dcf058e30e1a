"""Combined buffers of the NpuFused optimizers: parameters, gradients and state of many tensors
re-pointed into one flat buffer each, so that a step is a few passes over whole buffers.

All parameters of one dtype (fp32 or fp16), over every parameter group, share one combined
parameter buffer and one combined gradient buffer (``get_combined_params`` /
``get_combined_grads`` return them, fp32 first, as torch_npu's do). Inside, each parameter group's
parameters of one dtype and one step count form a *bucket*, a contiguous part that a step
updates at once. Every tensor takes ``ceil(numel/16)*16 + 32`` elements (the layout of Ascend's
``npu_combine_tensors``); the gaps stay zero, so whole-buffer updates leave them zero.
"""

from __future__ import annotations

import operator
from typing import Dict, List, Optional, Sequence, Tuple

import torch

from .._device.formats import _contiguous_strides

DTYPES = (torch.float32, torch.float16)  # the order of get_combined_params/grads
ALIGN, PAD = 16, 32


def slot_size(numel: int) -> int:
    """Elements one tensor of ``numel`` elements takes in a combined buffer."""
    return (numel + ALIGN - 1) // ALIGN * ALIGN + PAD


def repoint(dst: torch.Tensor, flat: torch.Tensor, offset: int) -> None:
    """Make ``dst`` (same object, same shape) a view of ``flat`` at element ``offset``.

    Through ``dst.data``: ``set_`` on a parameter would replace its gradient accumulator, and
    hooks on the old one (torch DDP's) would go quiet.
    """
    storage = flat.untyped_storage() if hasattr(flat, "untyped_storage") else flat.storage()
    with torch.no_grad():
        dst.data = flat.new_empty(0).set_(
            storage, flat.storage_offset() + offset, dst.size(), _contiguous_strides(dst.size())
        )


class Bucket:
    """One parameter group's parameters of one dtype and one step count: a contiguous part of
    the dtype's combined buffers, and the state buffers of the same layout."""

    def __init__(self, group_index: int, params: Sequence[torch.Tensor], steps: int):
        self.group_index = group_index
        self.params = list(params)
        self.dtype = self.params[0].dtype
        self.steps = steps  # steps taken so far by every parameter of the bucket
        self.offsets: List[int] = []  # relative to the bucket's start
        position = 0
        for p in self.params:
            self.offsets.append(position)
            position += slot_size(p.numel())
        self.numel = position
        self.start = 0  # where the bucket starts in the dtype's combined buffers
        self.param: Optional[torch.Tensor] = None
        self.grad: Optional[torch.Tensor] = None
        self.state: Dict[str, torch.Tensor] = {}
        self.kernel = None  # the runtime's fused optimizer for this bucket, once made
        self._ptrs: Tuple[List[int], List[int]] = ([], [])

    @property
    def segments(self) -> List[Tuple[int, int]]:
        """(offset, numel) of each parameter inside the bucket."""
        return [(o, p.numel()) for o, p in zip(self.offsets, self.params)]

    def attach(self, param_flat: torch.Tensor, grad_flat: torch.Tensor) -> None:
        """Copy values in and re-point the parameters and gradients into the given parts."""
        self.param, self.grad = param_flat, grad_flat
        with torch.no_grad():
            for p, offset in zip(self.params, self.offsets):
                n = p.numel()
                param_flat[offset : offset + n].copy_(p.data.reshape(-1))
                grad_flat[offset : offset + n].copy_(p.grad.reshape(-1))
                repoint(p, param_flat, offset)
                repoint(p.grad, grad_flat, offset)
        self._ptrs = ([p.data_ptr() for p in self.params], [p.grad.data_ptr() for p in self.params])

    def intact(self, params: Sequence[torch.Tensor]) -> bool:
        """Whether ``params`` are this bucket's, with data and gradients still in its buffers."""
        if len(params) != len(self.params) or any(map(operator.is_not, params, self.params)):
            return False
        if any(p.grad is None for p in params):
            return False
        return [p.data_ptr() for p in params] == self._ptrs[0] and [
            p.grad.data_ptr() for p in params
        ] == self._ptrs[1]

    def combine_state(
        self, state: Dict, name: str, fill: Optional[float]
    ) -> Optional[torch.Tensor]:
        """The bucket's combined ``name`` buffer, made from the parameters' state (missing
        entries filled with ``fill``; None when every entry is missing and ``fill`` is None)."""
        existing = [state[p].get(name) for p in self.params]
        if fill is None and all(e is None for e in existing):
            return None
        flat = torch.zeros(self.numel, dtype=self.dtype, device=self.params[0].device)
        with torch.no_grad():
            for p, offset, value in zip(self.params, self.offsets, existing):
                slot = flat[offset : offset + p.numel()]
                if value is not None:
                    slot.copy_(value.reshape(-1))
                elif fill is not None:
                    slot.fill_(fill)
                state[p][name] = slot.view(p.shape)
        self.state[name] = flat
        return flat


def bucket_key(params: Sequence[torch.Tensor], steps: Sequence[int]):
    """Parameters split by (dtype, steps taken), in order of first appearance."""
    keys: Dict[Tuple[torch.dtype, int], List[torch.Tensor]] = {}
    for p, s in zip(params, steps):
        keys.setdefault((p.dtype, s), []).append(p)
    return keys


def combine(
    buckets: Sequence[Bucket],
) -> Tuple[List[Optional[torch.Tensor]], List[Optional[torch.Tensor]]]:
    """Lay the buckets out in one parameter and one gradient buffer per dtype; returns
    ([fp32 params, fp16 params], [fp32 grads, fp16 grads]) (None where a dtype has none)."""
    params_out: List[Optional[torch.Tensor]] = [None, None]
    grads_out: List[Optional[torch.Tensor]] = [None, None]
    for i, dtype in enumerate(DTYPES):
        mine = [b for b in buckets if b.dtype == dtype]
        if not mine:
            continue
        total = 0
        for b in mine:
            b.start = total
            total += b.numel
        device = mine[0].params[0].device
        params_out[i] = torch.zeros(total, dtype=dtype, device=device)
        grads_out[i] = torch.zeros(total, dtype=dtype, device=device)
        for b in mine:
            b.attach(
                params_out[i][b.start : b.start + b.numel],
                grads_out[i][b.start : b.start + b.numel],
            )
    return params_out, grads_out
