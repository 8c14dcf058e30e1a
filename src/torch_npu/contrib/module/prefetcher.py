"""``torch_npu.contrib.module.Prefetcher``: moves the next ``(input, target)`` batch of a loader to
the NPU on a side stream while the current one trains; ``next()`` hands it over (``(None, None)``
after the last). Pass a ``stream`` when making prefetchers repeatedly, as Ascend's advises."""

from __future__ import annotations

from typing import Any, Iterable, Optional, Tuple

import torch


class Prefetcher:
    def __init__(self, loader: Iterable[Any], stream: Optional[Any] = None) -> None:
        self.loader = iter(loader)
        self.stream = stream if stream is not None else torch.npu.Stream()
        self.next_input: Optional[torch.Tensor] = None
        self.next_target: Optional[torch.Tensor] = None
        self.preload()

    def preload(self) -> None:
        try:
            batch_input, batch_target = next(self.loader)
        except StopIteration:
            self.next_input = self.next_target = None
            return
        with torch.npu.stream(self.stream):
            self.next_input = batch_input.npu(non_blocking=True)
            self.next_target = batch_target.npu(non_blocking=True)

    def next(self) -> Tuple[Optional[torch.Tensor], Optional[torch.Tensor]]:
        torch.npu.current_stream().wait_stream(self.stream)
        batch = self.next_input, self.next_target
        if batch[1] is not None:
            self.preload()
        return batch
