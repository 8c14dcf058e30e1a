"""``torch_npu.contrib.module.ROIAlign``: detectron2's RoIAlign layer on the NPU's operator.

``aligned=True`` (the default, unlike torchvision's) is ``npu_roi_align``'s mode 3, False its
mode 0; the gradient comes from ``npu_roi_alignbk`` with the same mode. The features are computed
in fp32 (``.float()``), as Ascend's layer does; rois are ``(K, 5)`` rows (batch index, x1, y1,
x2, y2).
"""

from __future__ import annotations

from typing import Sequence, Tuple, Union

import torch
from torch import nn
from torch.nn.modules.utils import _pair

from ..._ops.roi_align import npu_roi_align, npu_roi_alignbk


def _mode(aligned: bool) -> int:
    return 3 if aligned else 0


class _RoIAlignFunction(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx,
        features,
        rois,
        output_size,
        spatial_scale,  # noqa: D102
        sampling_ratio,
        aligned,
    ):
        ctx.save_for_backward(rois)
        ctx.output_size = output_size
        ctx.spatial_scale, ctx.sampling_ratio = spatial_scale, sampling_ratio
        ctx.shape, ctx.aligned = features.size(), aligned
        return npu_roi_align(
            features,
            rois,
            spatial_scale,
            output_size[0],
            output_size[1],
            sampling_ratio,
            _mode(aligned),
        )

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        (rois,) = ctx.saved_tensors
        height, width = ctx.output_size
        grad_features = npu_roi_alignbk(
            grad.contiguous(),
            rois,
            ctx.shape,
            width,
            height,
            ctx.spatial_scale,
            ctx.sampling_ratio,
            _mode(ctx.aligned),
        )
        return grad_features, None, None, None, None, None


def roi_align(
    features: torch.Tensor,
    rois: torch.Tensor,
    output_size: Union[int, Sequence[int]],
    spatial_scale: float,
    sampling_ratio: int,
    aligned: bool,
) -> torch.Tensor:
    return _RoIAlignFunction.apply(
        features, rois, _pair(output_size), spatial_scale, sampling_ratio, aligned
    )


class ROIAlign(nn.Module):
    """RoIAlign over NCHW features; ``output_size`` is ``(h, w)`` (or one int)."""

    def __init__(
        self,
        output_size: Union[int, Tuple[int, int]],
        spatial_scale: float,
        sampling_ratio: int,
        aligned: bool = True,
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input_tensor: torch.Tensor, rois: torch.Tensor) -> torch.Tensor:
        if rois.dim() != 2 or rois.size(1) != 5:
            raise ValueError(
                f"ROIAlign: rois must be (K, 5) rows (batch index, x1, y1, x2, y2), "
                f"got shape {tuple(rois.shape)}"
            )
        return roi_align(
            input_tensor.float(),
            rois,
            self.output_size,
            self.spatial_scale,
            self.sampling_ratio,
            self.aligned,
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
            f"sampling_ratio={self.sampling_ratio}, aligned={self.aligned}"
        )
