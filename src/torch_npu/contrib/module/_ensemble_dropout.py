"""``torch_npu.contrib.module._ensemble_dropout.NpuPreGenDropout`` (also a name of
``torch_npu.contrib.module``): dropout whose bit masks come from one buffer per
probability, generated ahead on a side stream (ESPnet2's transformer and conformer layers).

The model is prepared with ``NpuPreGenDropout.enable_dropout_ensemble(model)``: every
probability of a layer built so far gets a mask buffer, each forward pass of ``model`` starts
reading its buffers from the beginning, and a layer whose probability has no buffer raises, as
Ascend's does. A layer takes the next ``ceil(numel / 128) * 16`` bytes of its buffer and drops
with them (``npu_dropout_do_mask``); given ``[shape, dtype, device]`` instead of a tensor it
returns the mask such a tensor would take next, without taking it. As in Ascend's layer the
masks apply in eval mode too. The emulator makes each mask when it is read (the NPU makes 16 MiB
of mask per probability and pass ahead of time), so a pass never runs past the buffer's end and
reuses mask bits, which Ascend's does when a pass needs more than the buffer holds.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Union

import torch

from ... import _dropout_masks
from ..._ops.dropout import npu_dropout_do_mask, npu_dropout_gen_mask
from ...utils._error_code import ErrCode, ops_error

__all__ = []

_BITS_PER_BYTE = 8


def _mask_bytes(numel: int) -> int:
    """The bytes of the bit mask ``npu_dropout_gen_mask`` makes for ``numel`` elements."""
    return _dropout_masks.aligned(numel) // _BITS_PER_BYTE


class _PreGenDropoutTask:
    """The masks of one probability for one forward pass (torch_npu's name and arguments), made
    as they are read: ``idx`` bytes taken so far, and the mask last shown without being taken,
    which the next take of its length gets."""

    def __init__(self, device: Any, p: float) -> None:
        self.device, self.p = device, p
        self.idx = 0
        self.shown: Optional[torch.Tensor] = None

    def slice(self, length: int, take: bool) -> torch.Tensor:
        mask = self.shown
        if mask is None or mask.numel() != length:
            mask = npu_dropout_gen_mask(
                [length * _BITS_PER_BYTE], self.p, dtype=torch.float32, device=self.device
            )
        if take:
            self.idx += length
            self.shown = None
        else:
            self.shown = mask
        return mask

    def restart(self) -> None:
        self.idx = 0
        self.shown = None


class NpuPreGenDropout(torch.nn.Dropout):
    prob: Set[float] = set()
    task_dict: Dict[float, _PreGenDropoutTask] = {}
    dropout_stream: Optional[Any] = None

    def __init__(self, p: float, module_name: Optional[str] = None) -> None:
        super().__init__(p)
        self.module_name = module_name
        NpuPreGenDropout.prob.add(p)

    def forward(self, x: Union[torch.Tensor, List[Any]]) -> Optional[torch.Tensor]:
        if isinstance(x, torch.Tensor):
            numel, take = x.numel(), True
        elif isinstance(x, list) and len(x) == 3:
            numel, take = _dropout_masks.numel_of(x[0]), False
        else:
            raise RuntimeError(
                f"NpuPreGenDropout: the input must be a tensor or [shape, dtype, "
                f"device], got {type(x).__name__}" + ops_error(ErrCode.TYPE)
            )
        if self.p == 0:
            return x if take else None
        buffer = NpuPreGenDropout.task_dict.get(self.p)
        if buffer is None:
            raise RuntimeError(
                f"NpuPreGenDropout: probability {self.p} has no masks; "
                f"NpuPreGenDropout.enable_dropout_ensemble(model) makes them for "
                f"{sorted(NpuPreGenDropout.task_dict) or 'the layers built'}"
                + ops_error(ErrCode.VALUE)
            )
        mask = buffer.slice(_mask_bytes(numel), take)
        if not take:
            return mask
        return npu_dropout_do_mask(x, mask, self.p)[0]

    @classmethod
    def enable_dropout_ensemble(cls, model: torch.nn.Module) -> None:
        device = f"npu:{torch.npu.current_device()}"
        for p in cls.prob:
            cls.task_dict[p] = _PreGenDropoutTask(device, p)
        hook_mask_making(cls, model, lambda task: task.restart())


def hook_mask_making(owner: Any, model: torch.nn.Module, after_forward: Any) -> None:
    """Make ``model``'s forward wait for the masks ``owner``'s side stream makes (its
    ``dropout_stream``, made once), and call ``after_forward(task)`` on each of ``owner``'s
    ``task_dict`` values once the forward is done, as torch_npu's ensemble dropouts do."""
    if owner.dropout_stream is None:
        owner.dropout_stream = torch.npu.Stream()

    def wait_for_masks(module: torch.nn.Module, inputs: Any) -> None:
        torch.npu.current_stream().wait_stream(owner.dropout_stream)

    def each_task(module: torch.nn.Module, inputs: Any, outputs: Any) -> None:
        for task in owner.task_dict.values():
            after_forward(task)

    model.register_forward_pre_hook(wait_for_masks)
    model.register_forward_hook(each_task)
