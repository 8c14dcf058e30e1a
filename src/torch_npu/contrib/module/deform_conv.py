"""``torch_npu.contrib.module.ModulatedDeformConv`` (``DCNv2``): mmcv's modulated deformable
convolution layer on the NPU's ``npu_deformable_conv2d``.

Offsets come in mmcv's layout, ``(y, x)`` pairs per deformable group and kernel tap, and are
reordered to the NPU's (every x, then every y, then the masks). With ``pack=True`` (the default)
the layer predicts them itself: ``conv_offset`` (zero-initialised) gives ``2 * dg * kh * kw``
offsets and ``dg * kh * kw`` masks through a sigmoid; with ``pack=False`` ``forward`` takes
``(x, offset, mask)``. Computed in fp32 as Ascend's layer does; ``stride``, ``padding`` and
``dilation`` are single ints for both sides. Without ``bias`` the layer adds zeros that are not
a parameter (nor in the state dict), as Ascend's does.
"""

from __future__ import annotations

import math
from typing import Sequence, Tuple, Union

import torch
from torch import nn
from torch.nn.modules.utils import _pair

from ..._ops.deformable_conv2d import npu_deformable_conv2d


class ModulatedDeformConv(nn.Module):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, Tuple[int, int]],
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        groups: int = 1,
        deformable_groups: int = 1,
        bias: bool = True,
        pack: bool = True,
    ) -> None:
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.groups, self.deformable_groups = groups, deformable_groups
        self.with_bias, self.pack = bias, pack
        self.weight = nn.Parameter(
            torch.empty(out_channels, in_channels // groups, *self.kernel_size)
        )
        if bias:
            self.bias = nn.Parameter(torch.empty(out_channels))
        else:
            self.bias = torch.zeros(out_channels)
        taps = self.kernel_size[0] * self.kernel_size[1]
        self.split_num = deformable_groups * 2 * taps
        if pack:
            self.conv_offset = nn.Conv2d(
                in_channels,
                deformable_groups * 3 * taps,
                kernel_size=self.kernel_size,
                stride=_pair(stride),
                padding=_pair(padding),
                bias=True,
            )
        self.init_param()

    def init_param(self) -> None:
        fan_in = self.in_channels * self.kernel_size[0] * self.kernel_size[1]
        bound = 1.0 / math.sqrt(fan_in)
        with torch.no_grad():
            self.weight.uniform_(-bound, bound)
            if self.with_bias:
                self.bias.zero_()
            if self.pack:
                self.conv_offset.weight.zero_()
                self.conv_offset.bias.zero_()

    def forward(self, x: Union[torch.Tensor, Sequence[torch.Tensor]]) -> torch.Tensor:
        if self.pack:
            predicted = self.conv_offset(x)
            offset = predicted[:, : self.split_num]
            mask = torch.sigmoid(predicted[:, self.split_num :])
        else:
            x, offset, mask = x
        x, offset, mask = x.float(), offset.float(), mask.float()
        batch, _, out_h, out_w = offset.shape
        pairs = offset.reshape(batch, self.split_num // 2, 2, out_h, out_w)
        npu_offset = torch.cat([pairs[:, :, 1], pairs[:, :, 0], mask], dim=1)
        bias = self.bias if self.with_bias else self.bias.to(x.device)
        kh, kw = self.kernel_size
        out, _ = npu_deformable_conv2d(
            x,
            self.weight,
            npu_offset,
            bias,
            kernel_size=[kh, kw],
            stride=[1, 1, self.stride, self.stride],
            padding=[self.padding] * 4,
            dilation=[1, 1, self.dilation, self.dilation],
            groups=self.groups,
            deformable_groups=self.deformable_groups,
            modulated=True,
        )
        return out


DCNv2 = ModulatedDeformConv
