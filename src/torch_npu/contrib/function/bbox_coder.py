"""``torch_npu.contrib.function``'s box coders, mmdetection's on the NPU's box operators:

- ``npu_bbox_coder_encode_yolo(bboxes, gt_bboxes, stride)``: ``YOLOBBoxCoder.encode`` through
  ``npu_yolo_boxes_encode`` (strides taken as int32);
- ``npu_bbox_coder_encode_xyxy2xywh(bboxes, gt_bboxes, means=None, stds=None,
  is_normalized=False, normalized_scale=10000.)``: ``DeltaXYWHBBoxCoder.encode`` (legacy, sizes
  ``x2 - x1 + 1``) through ``npu_bounding_box_encode``; coordinates normalized to
  ``[0, 1]`` are first scaled back by ``normalized_scale``;
- ``npu_bbox_coder_decode_xywh2xyxy(bboxes, pred_bboxes, means=None, stds=None,
  max_shape=None, wh_ratio_clip=16 / 1000)``: ``DeltaXYWHBBoxCoder.decode`` through
  ``npu_bounding_box_decode``, the corners clipped to ``max_shape`` (``(H, W)``, 9999 each if
  not given).

means default to zeros, stds to ones. Boxes of another dtype than fp32 / fp16 (integer
coordinates) are taken as fp32. The batch sizes must agree and the boxes be ``(..., 4)``
(ValueError otherwise)."""

from __future__ import annotations

from typing import Optional, Sequence

import torch

import torch_npu

__all__ = [
    "npu_bbox_coder_decode_xywh2xyxy",
    "npu_bbox_coder_encode_xyxy2xywh",
    "npu_bbox_coder_encode_yolo",
]


def _as_float_boxes(boxes: torch.Tensor) -> torch.Tensor:
    if boxes.dtype in (torch.float32, torch.float16):
        return boxes
    return boxes.float()


def _check_pair(first: torch.Tensor, second: torch.Tensor, names: str) -> None:
    a, b = names.split()
    if first.size(0) != second.size(0):
        raise ValueError(f"Expected {a}.size(0) == {b}.size(0)")
    if not first.size(-1) == second.size(-1) == 4:
        raise ValueError(f"Expected {a}.size(-1) == {b}.size(-1) == 4")


def npu_bbox_coder_encode_yolo(
    bboxes: torch.Tensor, gt_bboxes: torch.Tensor, stride: torch.Tensor
) -> torch.Tensor:
    _check_pair(bboxes, gt_bboxes, "bboxes gt_bboxes")
    if stride.dtype != torch.int32:
        stride = stride.int()
    return torch_npu.npu_yolo_boxes_encode(
        _as_float_boxes(bboxes), _as_float_boxes(gt_bboxes), stride, performance_mode=False
    )


def npu_bbox_coder_encode_xyxy2xywh(
    bboxes: torch.Tensor,
    gt_bboxes: torch.Tensor,
    means: Optional[Sequence[float]] = None,
    stds: Optional[Sequence[float]] = None,
    is_normalized: bool = False,
    normalized_scale: float = 10000.0,
) -> torch.Tensor:
    means = [0.0] * 4 if means is None else list(means)
    stds = [1.0] * 4 if stds is None else list(stds)
    _check_pair(bboxes, gt_bboxes, "bboxes gt_bboxes")
    bboxes, gt_bboxes = _as_float_boxes(bboxes), _as_float_boxes(gt_bboxes)
    if is_normalized:
        bboxes = bboxes * normalized_scale
        gt_bboxes = gt_bboxes * normalized_scale
    return torch_npu.npu_bounding_box_encode(bboxes, gt_bboxes, *means, *stds)


def npu_bbox_coder_decode_xywh2xyxy(
    bboxes: torch.Tensor,
    pred_bboxes: torch.Tensor,
    means: Optional[Sequence[float]] = None,
    stds: Optional[Sequence[float]] = None,
    max_shape: Optional[Sequence[int]] = None,
    wh_ratio_clip: float = 16 / 1000,
) -> torch.Tensor:
    means = [0.0] * 4 if means is None else list(means)
    stds = [1.0] * 4 if stds is None else list(stds)
    max_shape = [9999, 9999] if max_shape is None else list(max_shape)
    _check_pair(bboxes, pred_bboxes, "bboxes pred_bboxes")
    return torch_npu.npu_bounding_box_decode(
        _as_float_boxes(bboxes),
        _as_float_boxes(pred_bboxes),
        *means,
        *stds,
        max_shape,
        wh_ratio_clip,
    )
