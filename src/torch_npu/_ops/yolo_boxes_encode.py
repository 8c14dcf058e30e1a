"""``torch_npu.npu_yolo_boxes_encode(input, gt_bboxes, stride, performance_mode=False)``: the
targets YOLOv3 regresses (mmdetection's ``YOLOBBoxCoder.encode``, which the NPU's
YoloBoxesEncode replaces): for anchors and ground truth boxes ``(N, 4)`` as ``(x1, y1, x2,
y2)`` and each anchor's ``stride`` ``(N,)`` (int32),

- ``tx = clamp((gx - px) / stride + 0.5, eps, 1 - eps)``, the same for ``ty`` with the y
  centres (the ground truth centre's place in the anchor's cell),
- ``tw = log(max(gw / pw, eps))``, ``th = log(max(gh / ph, eps))``,

with ``eps = 1e-6`` and sizes ``x2 - x1`` (no +1). At most 20480 anchors, as on the NPU; the
boxes are floats of one dtype (torch_npu documents fp16 and fp32). Results come in the boxes'
dtype, computed in fp32 and rounded once; ``performance_mode`` (the
NPU's faster, less precise fp16 path) changes nothing here. No gradient: torch_npu defines
none."""

from __future__ import annotations

import torch

from . import _precision
from ._no_derivative import without_derivative
from ._registry import operator

EPS = 1e-6
MAX_ANCHORS = 20480


def _centres_and_sizes(boxes: torch.Tensor):
    x1, y1, x2, y2 = boxes.float().unbind(-1)
    return (x1 + x2) * 0.5, (y1 + y2) * 0.5, x2 - x1, y2 - y1


@operator
def npu_yolo_boxes_encode(
    input: torch.Tensor,
    gt_bboxes: torch.Tensor,
    stride: torch.Tensor,
    performance_mode: bool = False,
) -> torch.Tensor:
    name = "npu_yolo_boxes_encode"
    for what, boxes in (("anchor_boxes", input), ("gt_bboxes", gt_bboxes)):
        if boxes.dim() != 2 or boxes.size(1) != 4:
            raise RuntimeError(f"{name}: {what} must be (N, 4) boxes, got {tuple(boxes.shape)}")
    count = input.size(0)
    if count > MAX_ANCHORS:
        raise RuntimeError(f"{name}: at most {MAX_ANCHORS} anchor boxes, got {count}")
    if gt_bboxes.size(0) != count or stride.dim() != 1 or stride.size(0) != count:
        raise RuntimeError(
            f"{name}: anchor_boxes {tuple(input.shape)}, gt_bboxes {tuple(gt_bboxes.shape)} "
            f"and stride {tuple(stride.shape)} must have the same N"
        )
    if input.dtype != gt_bboxes.dtype or not input.is_floating_point():
        raise RuntimeError(
            f"{name}: anchor_boxes and gt_bboxes must be floats of one dtype, got "
            f"{input.dtype} and {gt_bboxes.dtype}"
        )
    if stride.dtype != torch.int32:
        raise RuntimeError(f"{name}: stride must be int32, got {stride.dtype}")

    def encode(anchors: torch.Tensor, truth: torch.Tensor, steps: torch.Tensor) -> torch.Tensor:
        px, py, pw, ph = _centres_and_sizes(anchors)
        gx, gy, gw, gh = _centres_and_sizes(truth)
        steps = steps.float()
        tx = ((gx - px) / steps + 0.5).clamp(EPS, 1 - EPS)
        ty = ((gy - py) / steps + 0.5).clamp(EPS, 1 - EPS)
        tw = torch.log((gw / pw).clamp(min=EPS))
        th = torch.log((gh / ph).clamp(min=EPS))
        return _precision.store(torch.stack([tx, ty, tw, th], -1), anchors.dtype)

    return without_derivative(name, encode, input, gt_bboxes, stride)
