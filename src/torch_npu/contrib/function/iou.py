"""``torch_npu.contrib.function.npu_iou`` (and its alias ``npu_ptiou``): the deprecated contrib
front of the ``npu_iou`` operator that SSD ports call to match boxes with priors.

``npu_iou(boxes1, boxes2, mode="ptiou", is_normalized=False, normalized_scale=100.)`` gives the
(N, M) overlaps of the N boxes of ``boxes1`` with the M of ``boxes2`` (x1, y1, x2, y2): both
are taken as fp32, multiplied by ``normalized_scale`` when ``is_normalized`` (the operator
widens each side by 0.01, which would swamp coordinates in [0, 1]), and passed to
``torch_npu.npu_iou`` ("iou") or ``torch_npu.npu_ptiou`` ("ptiou") with ``boxes2`` as the
operator's boxes and ``boxes1`` as its ground truth, so row i is box i of ``boxes1``.

The deprecated fronts of the loss operators, for boxes paired one to one (xywh):
- ``npu_giou(boxes1, boxes2, is_permuted=True)``: boxes (n, 4) of one shape (else ValueError),
  taken as fp32, transposed to the operator's (4, n) when ``is_permuted``, then
  ``torch_npu.npu_giou(..., trans=True, is_cross=False)``: GIoU of shape (n, 1);
- ``npu_diou(boxes1, boxes2, trans=True, is_cross=False, mode=0)`` and ``npu_ciou`` (same
  arguments): boxes (4, n) passed on to ``torch_npu.npu_diou`` / ``torch_npu.npu_ciou`` (the
  latter with ``atan_sub_flag=True``, keeping what its backward needs): shape (1, n).
Like torch_npu's, each front warns once per call site that it is deprecated.
"""

from __future__ import annotations

import warnings

import torch

import torch_npu
from ..._ops.iou import npu_iou as _iou_operator
from ..._ops.iou import npu_ptiou as _ptiou_operator
from ...utils._error_code import ErrCode, ops_error

__all__ = ["npu_ciou", "npu_diou", "npu_giou", "npu_iou", "npu_ptiou"]

_OPERATORS = {"iou": _iou_operator, "ptiou": _ptiou_operator}


def npu_iou(
    boxes1: torch.Tensor,
    boxes2: torch.Tensor,
    mode: str = "ptiou",
    is_normalized: bool = False,
    normalized_scale: float = 100.0,
) -> torch.Tensor:
    warnings.warn(
        "torch_npu.contrib.npu_iou is deprecated. Please use torch_npu.npu_iou or "
        "torch_npu.npu_ptiou as a replacement.",
        FutureWarning,
        stacklevel=2,
    )
    if mode not in _OPERATORS:
        raise ValueError(f"Expected mode in [iou, ptiou], got {mode!r}" + ops_error(ErrCode.VALUE))
    boxes1, boxes2 = boxes1.float(), boxes2.float()
    if is_normalized:
        boxes1, boxes2 = boxes1 * normalized_scale, boxes2 * normalized_scale
    return _OPERATORS[mode](boxes2, boxes1)


npu_ptiou = npu_iou


def _deprecated(front: str, name: str) -> None:
    """torch_npu's warning, which names the giou front ``torch_npu.contrib.npu_giou``."""
    warnings.warn(
        f"{front}.{name} is deprecated. Please use torch_npu.{name} as a replacement.",
        FutureWarning,
        stacklevel=3,
    )


def npu_giou(boxes1: torch.Tensor, boxes2: torch.Tensor, is_permuted: bool = True) -> torch.Tensor:
    _deprecated("torch_npu.contrib", "npu_giou")
    if boxes1.shape != boxes2.shape:
        raise ValueError(
            f"Expected boxes1.shape == boxes2.shape, got {tuple(boxes1.shape)} and "
            f"{tuple(boxes2.shape)}" + ops_error(ErrCode.VALUE)
        )
    boxes1, boxes2 = boxes1.float(), boxes2.float()
    if is_permuted:
        boxes1, boxes2 = boxes1.permute(1, 0), boxes2.permute(1, 0)
    return torch_npu.npu_giou(boxes1, boxes2, trans=True, is_cross=False)


def npu_diou(
    boxes1: torch.Tensor,
    boxes2: torch.Tensor,
    trans: bool = True,
    is_cross: bool = False,
    mode: int = 0,
) -> torch.Tensor:
    _deprecated("torch_npu.contrib.function", "npu_diou")
    return torch_npu.npu_diou(boxes1, boxes2, trans, is_cross, mode)


def npu_ciou(
    boxes1: torch.Tensor,
    boxes2: torch.Tensor,
    trans: bool = True,
    is_cross: bool = False,
    mode: int = 0,
) -> torch.Tensor:
    _deprecated("torch_npu.contrib.function", "npu_ciou")
    return torch_npu.npu_ciou(boxes1, boxes2, trans, is_cross, mode, True)
