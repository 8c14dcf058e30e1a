"""``torch_npu.npu_iou(bboxes, gtboxes, mode=0)`` (``npu_ptiou`` is the same operator): the
overlap of every ground-truth box with every box, a ``(len(gtboxes), len(bboxes))`` tensor whose
row ``i`` is ground-truth box ``i``. Boxes are ``(x1, y1, x2, y2)``. Mode 0 gives IoU
(intersection over union), mode 1 IoF (intersection over the ground-truth box's area).

Following op-plugin's kernel (the NPU's ``Iou`` with ``eps=0.01``, inputs cast to fp16, the result
cast back to the input's dtype): each box's area is ``(x2 - x1 + eps) * (y2 - y1 + eps)``, the
intersection's is not widened, so two equal 10x10 boxes overlap by 0.9961. The NPU computes in
fp16 step by step; the emulator computes in fp32 on the fp16-rounded boxes and rounds once, which
lands on op-plugin's expected values for Ascend 910 and 910B or one fp16 step beside them (within
the relative 1e-3 its test allows). No gradient: torch_npu defines none (a backward through it
raises)."""

from __future__ import annotations

import torch

from . import _precision
from ._boxes import intersection
from ._no_derivative import without_derivative
from ._registry import operator

EPS = 0.01
_MODES = (0, 1)  # IoU, IoF


@operator(aliases=("npu_ptiou",))
def npu_iou(bboxes: torch.Tensor, gtboxes: torch.Tensor, mode: int = 0) -> torch.Tensor:
    for name, boxes in (("bboxes", bboxes), ("gtboxes", gtboxes)):
        if boxes.dim() != 2 or boxes.size(1) != 4:
            raise RuntimeError(
                f"npu_iou: {name} must be (N, 4) boxes (x1, y1, x2, y2), got "
                f"shape {tuple(boxes.shape)}"
            )
    if mode not in _MODES:
        raise RuntimeError(f"npu_iou: mode must be 0 (IoU) or 1 (IoF), got {mode}")
    return without_derivative("npu_iou", lambda b, t: _overlaps(b, t, mode), bboxes, gtboxes)


def _overlaps(bboxes: torch.Tensor, gtboxes: torch.Tensor, mode: int) -> torch.Tensor:
    boxes, truth = bboxes.half().float(), gtboxes.half().float()
    overlap = intersection(truth, boxes)  # (M, N)
    truth_area = _area(truth)[:, None]
    if mode == 0:
        overlap = overlap / (_area(boxes)[None, :] + truth_area - overlap)
    else:
        overlap = overlap / truth_area
    return _precision.store(overlap, torch.float16).to(bboxes.dtype)


def _area(boxes: torch.Tensor) -> torch.Tensor:
    return (boxes[..., 2] - boxes[..., 0] + EPS) * (boxes[..., 3] - boxes[..., 1] + EPS)


npu_ptiou = npu_iou
