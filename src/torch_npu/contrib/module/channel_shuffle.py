"""``torch_npu.contrib.module.ChannelShuffle(in_channels, groups=2, split_shuffle=True)``:
ShuffleNet V2's channel shuffle of the concatenation of two inputs, as Ascend's port writes it
(one ``index_select`` instead of a transpose and ``contiguous``, which are slow on the NPU).

``forward(x1, x2)`` concatenates ``x1`` and ``x2`` along the channels (``(N, C1 + C2, ...)``)
and takes the channels ``0, g, 2g, ..., 1, g + 1, ...`` of the first ``in_channels`` of them,
for ``g = in_channels // groups`` (channel ``j * groups + i`` of the result is channel
``i * g + j`` of the concatenation); with ``split_shuffle`` the result comes as its two halves
along the channels, a pair, else whole. Gradients flow back through the selection to both
inputs (Ascend's hand-written backward gives the same for its two groups)."""

from __future__ import annotations

from typing import Tuple, Union

import torch
import torch.nn as nn

__all__ = ["ChannelShuffle"]


class ChannelShuffle(nn.Module):
    def __init__(self, in_channels: int, groups: int = 2, split_shuffle: bool = True) -> None:
        super().__init__()
        self.split_shuffle = split_shuffle
        self.groups = groups
        self.group_len = in_channels // groups
        order = torch.arange(groups * self.group_len).reshape(groups, self.group_len)
        self.out_channels = order.t().reshape(-1)

    def forward(
        self, x1: torch.Tensor, x2: torch.Tensor
    ) -> Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
        both = torch.cat([x1, x2], dim=1)
        order = self.out_channels.to(both.device)
        if not self.split_shuffle:
            return both.index_select(1, order)
        return both.index_select(1, order[: self.group_len]), both.index_select(
            1, order[self.group_len :]
        )
