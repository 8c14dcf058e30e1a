"""``torch_npu.contrib.module.NpuPreGenDropout``: dropout whose bit masks come from one buffer per
probability, generated ahead on a side stream (ESPnet2's transformer and conformer layers).

The model is prepared with ``NpuPreGenDropout.enable_dropout_ensemble(model)``: every
probability of a layer built so far gets a mask buffer, each forward pass of ``model`` starts
reading its buffers from the beginning, and a layer whose probability has no buffer raises, as
Ascend's does. A layer takes the next ``ceil(numel / 128) * 16`` bytes of its buffer and drops
with them (``npu_dropout_do_mask``); given ``[shape, dtype, device]`` instead of a tensor it
returns the mask such a tensor would take next, without taking it. As in Ascend's layer the
masks apply in eval mode too. The emulator fills a buffer as far as it is read (the NPU makes
16 MiB of mask per probability and pass ahead of time), so a pass never runs past its end and
reuses mask bits, which Ascend's does when a pass needs more than the buffer holds.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Union

import torch

from ..._ops.dropout import npu_dropout_do_mask, npu_dropout_gen_mask

_BITS_PER_BYTE = 8
_ALIGN = 128  # elements: masks cover whole 128-element blocks


def _mask_bytes(numel: int) -> int:
    return (numel + _ALIGN - 1) // _ALIGN * _ALIGN // _BITS_PER_BYTE


class _MaskBuffer:
    """The masks of one probability for one forward pass, made as far as they are read."""

    def __init__(self, p: float, device: Any) -> None:
        self.p, self.device = p, device
        self.bits = torch.empty(0, dtype=torch.uint8, device=device)
        self.used = 0

    def slice(self, length: int, take: bool) -> torch.Tensor:
        end = self.used + length
        if end > self.bits.numel():
            more = npu_dropout_gen_mask([(end - self.bits.numel()) * _BITS_PER_BYTE], self.p,
                                        dtype=torch.float32, device=self.device)
            self.bits = torch.cat([self.bits, more])
        mask = self.bits[self.used:end]
        if take:
            self.used = end
        return mask

    def restart(self) -> None:
        self.bits = self.bits[:0]
        self.used = 0


class NpuPreGenDropout(torch.nn.Dropout):
    prob: Set[float] = set()
    task_dict: Dict[float, _MaskBuffer] = {}
    dropout_stream: Optional[Any] = None

    def __init__(self, p: float, module_name: Optional[str] = None) -> None:
        super().__init__(p)
        self.module_name = module_name
        NpuPreGenDropout.prob.add(p)

    def forward(self, x: Union[torch.Tensor, List[Any]]) -> Optional[torch.Tensor]:
        if isinstance(x, torch.Tensor):
            numel, take = x.numel(), True
        elif isinstance(x, list) and len(x) == 3:
            shape = x[0]
            numel, take = int(torch.Size(shape).numel()), False
        else:
            raise RuntimeError(f"NpuPreGenDropout: the input must be a tensor or [shape, dtype, "
                               f"device], got {type(x).__name__}")
        if self.p == 0:
            return x if take else None
        buffer = NpuPreGenDropout.task_dict.get(self.p)
        if buffer is None:
            raise RuntimeError(f"NpuPreGenDropout: probability {self.p} has no masks; "
                               f"NpuPreGenDropout.enable_dropout_ensemble(model) makes them for "
                               f"{sorted(NpuPreGenDropout.task_dict) or 'the layers built'}")
        mask = buffer.slice(_mask_bytes(numel), take)
        if not take:
            return mask
        return npu_dropout_do_mask(x, mask, self.p)[0]

    @classmethod
    def enable_dropout_ensemble(cls, model: torch.nn.Module) -> None:
        if cls.dropout_stream is None:
            cls.dropout_stream = torch.npu.Stream()

        def wait_for_masks(module: torch.nn.Module, inputs: Any) -> None:
            torch.npu.current_stream().wait_stream(cls.dropout_stream)

        def restart_masks(module: torch.nn.Module, inputs: Any, outputs: Any) -> None:
            for buffer in cls.task_dict.values():
                buffer.restart()

        device = f"npu:{torch.npu.current_device()}"
        for p in cls.prob:
            cls.task_dict[p] = _MaskBuffer(p, device)
        model.register_forward_pre_hook(wait_for_masks)
        model.register_forward_hook(restart_masks)
