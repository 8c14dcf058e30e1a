"""``torch_npu.contrib.function.npu_iou`` (and its alias ``npu_ptiou``): the deprecated contrib
front of the ``npu_iou`` operator that SSD ports call to match boxes with priors.

``npu_iou(boxes1, boxes2, mode="ptiou", is_normalized=False, normalized_scale=100.)`` gives the
(N, M) overlaps of the N boxes of ``boxes1`` with the M of ``boxes2`` (x1, y1, x2, y2): both
are taken as fp32, multiplied by ``normalized_scale`` when ``is_normalized`` (the operator
widens each side by 0.01, which would swamp coordinates in [0, 1]), and passed to
``torch_npu.npu_iou`` ("iou") or ``torch_npu.npu_ptiou`` ("ptiou") with ``boxes2`` as the
operator's boxes and ``boxes1`` as its ground truth, so row i is box i of ``boxes1``. Like
torch_npu's, it warns once that it is deprecated. The giou/diou/ciou fronts need operators the
emulator does not have, so they are absent.
"""
from __future__ import annotations

import warnings

import torch

from ..._ops.iou import npu_iou as _iou_operator
from ..._ops.iou import npu_ptiou as _ptiou_operator

__all__ = ["npu_iou", "npu_ptiou"]

_OPERATORS = {"iou": _iou_operator, "ptiou": _ptiou_operator}


def npu_iou(boxes1: torch.Tensor, boxes2: torch.Tensor, mode: str = "ptiou",
            is_normalized: bool = False, normalized_scale: float = 100.) -> torch.Tensor:
    warnings.warn("torch_npu.contrib.npu_iou is deprecated. Please use torch_npu.npu_iou or "
                  "torch_npu.npu_ptiou as a replacement.", FutureWarning, stacklevel=2)
    if mode not in _OPERATORS:
        raise ValueError(f"Expected mode in [iou, ptiou], got {mode!r}")
    boxes1, boxes2 = boxes1.float(), boxes2.float()
    if is_normalized:
        boxes1, boxes2 = boxes1 * normalized_scale, boxes2 * normalized_scale
    return _OPERATORS[mode](boxes2, boxes1)


npu_ptiou = npu_iou
