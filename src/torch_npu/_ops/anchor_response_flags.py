"""``torch_npu.npu_anchor_response_flags(input, featmap_size, stride, num_base_anchors)``: the
responsible-anchor flags of one feature level of YOLOv3 (mmdetection's
``YOLOAnchorGenerator.single_level_responsible_flags``, which it replaces on the NPU, as
torch_npu's own test computes its reference): the grid
cell holding each ground truth box's centre, ``(floor(cx / stride_w), floor(cy / stride_h))``,
is flagged, and each cell's flag is repeated for its ``num_base_anchors`` anchors: a uint8
``(feat_h * feat_w * num_base_anchors,)``. Boxes are ``(x1, y1, x2, y2)`` rows; a centre outside
the map is refused."""

from __future__ import annotations

from typing import Sequence

import torch

from ._precision import upcast
from ._registry import operator


@operator
def npu_anchor_response_flags(
    input: torch.Tensor, featmap_size: Sequence[int], stride: Sequence[int], num_base_anchors: int
) -> torch.Tensor:
    name = "npu_anchor_response_flags"
    if input.dim() != 2 or input.shape[1] != 4:
        raise RuntimeError(f"{name}: input must be (num_gts, 4) boxes, got {tuple(input.shape)}")
    feat_h, feat_w = (int(v) for v in featmap_size)
    stride_w, stride_h = (float(v) for v in stride)
    boxes = upcast(input).detach().float()
    grid_x = torch.floor((boxes[:, 0] + boxes[:, 2]) * 0.5 / stride_w).long()
    grid_y = torch.floor((boxes[:, 1] + boxes[:, 3]) * 0.5 / stride_h).long()
    outside = (grid_x < 0) | (grid_x >= feat_w) | (grid_y < 0) | (grid_y >= feat_h)
    if bool(outside.any()):
        raise RuntimeError(
            f"{name}: a box centre lies outside the {feat_h}x{feat_w} feature map "
            f"of stride {tuple(stride)}"
        )
    flags = torch.zeros(feat_h * feat_w, dtype=torch.uint8, device=input.device)
    flags[(grid_y * feat_w + grid_x).to(input.device)] = 1
    return flags[:, None].expand(feat_h * feat_w, int(num_base_anchors)).reshape(-1).clone()
