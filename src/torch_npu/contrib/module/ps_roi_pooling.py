"""``torch_npu.contrib.module.PSROIPool``: R-FCN's position-sensitive RoI pooling layer on
``npu_ps_roi_pooling`` (rois ``(B, 5, R)``); only ``pooled_height == pooled_width ==
group_size`` exists, as in Ascend's layer."""

from __future__ import annotations

import torch
from torch import nn

from ..._ops.ps_roi_pooling import npu_ps_roi_pooling


class PSROIPool(nn.Module):
    def __init__(
        self,
        pooled_height: int = 7,
        pooled_width: int = 7,
        spatial_scale: float = 1 / 16.0,
        group_size: int = 7,
        output_dim: int = 22,
    ) -> None:
        super().__init__()
        if not pooled_height == pooled_width == group_size:
            raise ValueError(
                f"PSROIPool: pooled_height, pooled_width and group_size must be "
                f"equal, got {pooled_height}, {pooled_width} and {group_size}"
            )
        self.pooled_height, self.pooled_width = pooled_height, pooled_width
        self.spatial_scale, self.group_size, self.output_dim = spatial_scale, group_size, output_dim

    def forward(self, features: torch.Tensor, rois: torch.Tensor) -> torch.Tensor:
        return npu_ps_roi_pooling(
            features, rois, self.spatial_scale, self.group_size, self.output_dim
        )

    def extra_repr(self) -> str:
        return (
            f"pooled_height={self.pooled_height}, pooled_width={self.pooled_width}, "
            f"spatial_scale={self.spatial_scale}, group_size={self.group_size}, "
            f"output_dim={self.output_dim}"
        )
