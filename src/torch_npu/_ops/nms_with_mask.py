"""``torch_npu.npu_nms_with_mask(input, iou_threshold)``: the NPU's NMSWithMask, as Ascend's
detectron2, maskrcnn_benchmark and R-FCN ports call it for their NMS.

``input`` is ``(N, 5)``: boxes ``(x1, y1, x2, y2)`` and a score. On Ascend the score is not read:
boxes are taken in input order (a caller wanting the best first sorts beforehand, as R-FCN
does), and a box is dropped when it overlaps an earlier kept box by more than the threshold.
As CANN's kernel computes it, that is ``inter > iou_threshold / (1 + iou_threshold) * (area_a +
area_b)`` (IoU > threshold for boxes of positive area), with areas ``(x2 - x1) * (y2 - y1)``
and the intersection clamped at 0, no ``+ 1``. Returns ``(boxes, idx, mask)``: the input's rows
unchanged (``(N, 5)``, its dtype), ``arange(N)`` as int32 and the uint8 keep mask. The NPU
computes the overlaps in fp16 on coordinates scaled down by 0.054395; the emulator in fp32, so
an overlap within fp16 rounding of the threshold may be decided the other way. (ModelZoo's
comments describe an ``(N, 8)`` input: that is the raw TBE kernel's layout, which torch_npu's
graph fills from ``(N, 5)``.) No gradient, as torch_npu defines none.
"""

from __future__ import annotations

from typing import List, Tuple

import torch

from . import _precision
from ._boxes import intersection
from ._no_derivative import without_derivative
from ._registry import operator


@operator
def npu_nms_with_mask(
    input: torch.Tensor,  # noqa: A002 - torch_npu's parameter name
    iou_threshold: float,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if input.dim() != 2 or input.size(1) != 5 or input.size(0) < 1:
        raise RuntimeError(
            f"npu_nms_with_mask: input must be (N, 5) rows (x1, y1, x2, y2, "
            f"score) with N >= 1, got shape {tuple(input.shape)}"
        )
    if not input.is_floating_point():
        raise RuntimeError(f"npu_nms_with_mask: input must be a floating tensor, got {input.dtype}")
    threshold = float(iou_threshold)
    boxes = without_derivative("npu_nms_with_mask", torch.clone, input)
    idx = torch.arange(input.size(0), dtype=torch.int32, device=input.device)
    kept = _kept(_precision.upcast(input.detach())[:, :4].float(), threshold)
    mask = torch.tensor(kept, dtype=torch.uint8).to(input.device)
    return boxes, idx, mask


_ROWS_PER_BLOCK = 1024  # overlaps are found for this many boxes at a time, to bound memory


def _kept(boxes: torch.Tensor, threshold: float) -> List[int]:
    """1 for each box no earlier kept box overlaps by more than ``threshold``, else 0."""
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    factor = threshold / (1 + threshold)
    count = boxes.size(0)
    later = torch.arange(count, device=boxes.device)
    kept = [1] * count
    for first in range(0, count, _ROWS_PER_BLOCK):
        block = boxes[first : first + _ROWS_PER_BLOCK]
        joined = area[first : first + block.size(0), None] + area[None, :]
        overlaps = intersection(block, boxes) > factor * joined
        overlaps &= later[None, :] > later[first : first + block.size(0), None]
        # (earlier, later) pairs by earlier box: an earlier box's fate is settled before its own
        # pairs come, as in greedy NMS.
        for earlier, later_box in torch.nonzero(overlaps).tolist():
            if kept[first + earlier]:
                kept[later_box] = 0
    return kept
