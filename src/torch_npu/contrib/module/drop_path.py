"""``torch_npu.contrib.module.NpuDropPath(drop_prob)``: the drop path (stochastic depth) of
Swin Transformer's residual blocks, as Ascend's port runs it: the per-sample random numbers come
from a queue that a side stream fills ahead of each forward pass of the model, instead of being
drawn in the layer.

``NpuDropPath.enable_droppath_ensemble(model)`` makes ``NpuDropPath.droppath_stream`` (one NPU
stream for every layer) and two forward pre-hooks on ``model``: the current stream waits for the
side stream, then, on the side stream and without gradients, each kind of input the layers met
(its shape, device and dtype) gets as many ``torch.rand((batch, 1, ..., 1))`` tensors queued as
layers asked for it. In training a layer takes the oldest queued tensor of its input's kind and
returns ``x / keep_prob * floor(keep_prob + r)`` (a sample is kept with probability
``keep_prob = 1 - drop_prob``); with none queued (the first pass, or a model without the hooks)
it counts the request and returns ``x`` unchanged. With ``drop_prob`` 0 or in eval mode it
returns ``x``. The queues are shared by all layers (``NpuDropPath.task_dict``)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.nn as nn

from ...utils._error_code import ErrCode, ops_error

__all__ = ["NpuDropPath"]


class _DropPathTask:
    """The random tensors queued for one kind of input, and how many the layers asked for."""

    def __init__(self, shape, device, dtype, ndim, drop_prob) -> None:
        self.shape = shape
        self.device = device
        self.dtype = dtype
        self.ndim = ndim
        self.drop_prob = drop_prob
        self.request_count = 0
        self.rand_queue: List[torch.Tensor] = []


def _drop(x: torch.Tensor, random: torch.Tensor, keep_prob: float) -> torch.Tensor:
    keep = torch.floor(random + keep_prob)
    return x.div(keep_prob) * keep


class NpuDropPath(nn.Module):
    task_dict: Dict[Tuple[Any, ...], _DropPathTask] = {}
    droppath_stream: Optional[Any] = None

    def __init__(self, drop_prob: Optional[float] = None) -> None:
        super().__init__()
        self.drop_prob = drop_prob
        self.keep_prob = 1 - drop_prob

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.drop_prob == 0.0 or not self.training:
            return x
        if not isinstance(x, torch.Tensor):
            raise RuntimeError("input type error!" + ops_error(ErrCode.TYPE))
        key = (x.shape, x.device, x.dtype, x.ndim)
        task = NpuDropPath.task_dict.get(key)
        if task is None:
            task = _DropPathTask(x.shape, x.device, x.dtype, x.ndim, self.drop_prob)
            NpuDropPath.task_dict[key] = task
        if task.rand_queue:
            return _drop(x, task.rand_queue.pop(0), self.keep_prob)
        task.request_count += 1
        return x

    @classmethod
    def enable_droppath_ensemble(cls, model: nn.Module) -> None:
        if cls.droppath_stream is None:
            cls.droppath_stream = torch.npu.Stream()

        def wait_for_side_stream(module, inputs):
            torch.npu.current_stream().wait_stream(cls.droppath_stream)

        def fill_queues(module, inputs):
            with torch.npu.stream(cls.droppath_stream), torch.no_grad():
                for task in cls.task_dict.values():
                    shape = (task.shape[0],) + (1,) * (task.ndim - 1)
                    while len(task.rand_queue) < task.request_count:
                        task.rand_queue.append(
                            torch.rand(shape, dtype=task.dtype, device=task.device)
                        )

        model.register_forward_pre_hook(wait_for_side_stream)
        model.register_forward_pre_hook(fill_queues)
