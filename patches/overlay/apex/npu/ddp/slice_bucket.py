"""combine_ddp's slices as DDP gradient buckets, so torch's communication hooks run on them.

A hook reads ``buffer()`` (the slice, a view of a combined buffer), ``gradients()`` (each
parameter's gradient in it, shaped as the parameter: PowerSGD compresses them layer by layer),
``index()`` (the slice's place in the fixed order: PowerSGD keeps its memories by it) and
``is_last()`` (PowerSGD counts an iteration there); the fp16 wrapper swaps the buffer with
``set_buffer``. ``start`` runs a hook and ``SliceWork.wait`` writes its result into the slice.
"""

from __future__ import annotations

from typing import Any, Callable, List, Sequence, Tuple

import torch


class SliceBucket:
    def __init__(
        self,
        view: torch.Tensor,
        segments: Sequence[Tuple[int, torch.Tensor]],
        index: int,
        last: bool,
    ) -> None:
        """``segments``: (offset in ``view``, parameter) of each gradient in the slice."""
        self._buffer = view
        self._segments = list(segments)
        self._index = index
        self._last = last

    def buffer(self) -> torch.Tensor:
        return self._buffer

    def set_buffer(self, buffer: torch.Tensor) -> None:
        self._buffer = buffer

    def gradients(self) -> List[torch.Tensor]:
        return [
            self._buffer[offset : offset + p.numel()].view(p.shape) for offset, p in self._segments
        ]

    def parameters(self) -> List[torch.Tensor]:
        return [p for _, p in self._segments]

    def index(self) -> int:
        return self._index

    def is_last(self) -> bool:
        return self._last


class SliceWork:
    """A started hook; ``wait`` puts the averaged values into the slice."""

    def __init__(self, view: torch.Tensor, future: Any) -> None:
        self.view = view
        self.future = future

    def wait(self) -> None:
        result = self.future.wait()
        if isinstance(result, (list, tuple)):
            result = result[0]
        if result is not self.view:
            with torch.no_grad():
                self.view.copy_(result)


def start(hook: Callable[[Any, Any], Any], state: Any, bucket: SliceBucket) -> SliceWork:
    view = bucket.buffer()
    with torch.no_grad():
        return SliceWork(view, hook(state, bucket))
