"""``torch_npu.contrib.function.npu_single_level_responsible_flags(featmap_size, gt_bboxes,
stride, num_base_anchors)``: mmdetection's ``YOLOAnchorGenerator.single_level_responsible_flags``
through the NPU's ``npu_anchor_response_flags``: a uint8 flag per anchor of one feature level,
1 for the anchors of the grid cells that hold a ground truth box's centre. Boxes that are not
fp32 or fp16 (integer coordinates) are taken as fp32 first, as the operator takes floats."""

from __future__ import annotations

from typing import Sequence

import torch

import torch_npu

__all__ = ["npu_single_level_responsible_flags"]


def _as_float_boxes(boxes: torch.Tensor) -> torch.Tensor:
    if boxes.dtype in (torch.float32, torch.float16):
        return boxes
    return boxes.float()


def npu_single_level_responsible_flags(
    featmap_size: Sequence[int],
    gt_bboxes: torch.Tensor,
    stride: Sequence[int],
    num_base_anchors: int,
) -> torch.Tensor:
    return torch_npu.npu_anchor_response_flags(
        _as_float_boxes(gt_bboxes), featmap_size, stride, num_base_anchors
    )
