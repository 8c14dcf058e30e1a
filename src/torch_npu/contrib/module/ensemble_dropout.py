"""``torch_npu.contrib.module.NpuCachedDropout`` (alias ``NpuFairseqDropout``): Fairseq's dropout
with bit masks made after each forward pass of the model, for the next one.

Each layer asks for masks by what it drops: ``(shape, dtype, device, p)``. The first time a
shape is seen, and whenever no mask of it is waiting, the layer passes its input through
unchanged and counts one more request; after ``enable_dropout_ensemble(model)``, each forward
pass of ``model`` ends by making (``npu_dropout_gen_mask``) as many masks of every shape as were
requested, which the next pass takes in order (``npu_dropout_do_mask``). So a static-shape model
drops from its second pass on; a shape met once is never dropped until it is met again. As in
torch_npu, the masks apply in eval mode too, and given ``[shape, dtype, device]`` instead of a
tensor the layer hands out (and takes) the next mask, or None when there is none.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

import torch

from ..._ops.dropout import npu_dropout_do_mask, npu_dropout_gen_mask
from ...utils._error_code import ErrCode, ops_error
from ._ensemble_dropout import NpuPreGenDropout  # noqa: F401 - torch_npu's module names it
from ._ensemble_dropout import hook_mask_making

__all__ = ["NpuCachedDropout", "NpuFairseqDropout"]


class _DropOutTask:
    """The masks waiting for one ``(shape, dtype, device, p)``: ``request_count`` is how many a
    forward pass asks for, ``mask_queue`` the ``(mask, event)`` pairs made for the next one."""

    def __init__(self, shape: Any, dtype: torch.dtype, device: Any, p: float) -> None:
        self.shape, self.dtype, self.device, self.p = shape, dtype, device, p
        self.request_count = 0
        self.mask_queue: List[Tuple[torch.Tensor, Any]] = []

    def refill(self) -> None:
        while len(self.mask_queue) < self.request_count:
            mask = npu_dropout_gen_mask(
                list(self.shape), self.p, dtype=self.dtype, device=self.device
            )
            self.mask_queue.append((mask, None))


class NpuCachedDropout(torch.nn.Dropout):
    task_dict: Dict[Tuple[Any, ...], _DropOutTask] = {}
    dropout_stream: Optional[Any] = None

    def __init__(self, p: float, module_name: Optional[str] = None) -> None:
        super().__init__(p)
        self.module_name = module_name

    def forward(self, x: Union[torch.Tensor, List[Any]]) -> Optional[torch.Tensor]:
        if isinstance(x, torch.Tensor):
            key, passed = (x.shape, x.dtype, x.device, self.p), x
        elif isinstance(x, list) and len(x) == 3:
            shape, dtype, device = x
            key, passed = (torch.Size(shape), dtype, device, self.p), None
        else:
            raise RuntimeError(
                f"NpuCachedDropout: the input must be a tensor or [shape, dtype, "
                f"device], got {type(x).__name__}" + ops_error(ErrCode.TYPE)
            )
        if self.p == 0:
            return passed
        task = NpuCachedDropout.task_dict.get(key)
        if task is None:
            task = NpuCachedDropout.task_dict[key] = _DropOutTask(*key)
        if not task.mask_queue:
            task.request_count += 1
            return passed
        mask, _ = task.mask_queue.pop(0)
        if passed is None:
            return mask
        return npu_dropout_do_mask(x, mask, self.p)[0]

    @classmethod
    def enable_dropout_ensemble(cls, model: torch.nn.Module) -> None:
        hook_mask_making(cls, model, lambda task: task.refill())


NpuFairseqDropout = NpuCachedDropout
