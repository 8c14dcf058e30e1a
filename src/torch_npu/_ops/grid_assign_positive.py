"""``torch_npu.npu_grid_assign_positive(input, overlaps, box_responsible_flags, max_overlaps,
argmax_overlaps, gt_max_overlaps, gt_argmax_overlaps, num_gts, pos_iou_thr, min_pos_iou,
gt_max_assign_all)``: the positive assignment of mmdetection's ``GridAssigner`` (YOLOv3),
which it replaces on the NPU, on a copy of ``input`` (the assigned ground truth of each of the
``n`` boxes, 1-based): boxes in a responsible cell whose best overlap exceeds ``pos_iou_thr``
take ``argmax_overlaps + 1`` (torch_npu's own test); then, for each ground truth ``i`` (of the
``overlaps`` rows, at most ``num_gts``) whose best overlap exceeds ``min_pos_iou``, the
responsible boxes overlapping it that much (``gt_max_assign_all``), or its best box if
responsible, take ``i + 1``. Values in ``input``'s dtype; no backward."""

from __future__ import annotations

import torch

from ._no_derivative import without_derivative
from ._registry import operator


@operator
def npu_grid_assign_positive(
    input: torch.Tensor,
    overlaps: torch.Tensor,
    box_responsible_flags: torch.Tensor,
    max_overlaps: torch.Tensor,
    argmax_overlaps: torch.Tensor,
    gt_max_overlaps: torch.Tensor,
    gt_argmax_overlaps: torch.Tensor,
    num_gts: int,
    pos_iou_thr: float,
    min_pos_iou: float,
    gt_max_assign_all: bool,
) -> torch.Tensor:
    name = "npu_grid_assign_positive"
    n = input.shape[0] if input.dim() == 1 else -1
    if n < 0 or overlaps.dim() != 2 or overlaps.shape[1] != n:
        raise RuntimeError(
            f"{name}: input must be (n,) and overlaps (k, n), got "
            f"{tuple(input.shape)} and {tuple(overlaps.shape)}"
        )
    for what, t in (
        ("box_responsible_flags", box_responsible_flags),
        ("max_overlaps", max_overlaps),
        ("argmax_overlaps", argmax_overlaps),
    ):
        if tuple(t.shape) != (n,):
            raise RuntimeError(f"{name}: {what} must be ({n},), got {tuple(t.shape)}")
    k = overlaps.shape[0]
    if tuple(gt_max_overlaps.shape) != (k,) or tuple(gt_argmax_overlaps.shape) != (k,):
        raise RuntimeError(f"{name}: gt_max_overlaps and gt_argmax_overlaps must be ({k},)")
    responsible = box_responsible_flags.bool()

    def compute(assigned):
        out = assigned.clone()
        positive = (max_overlaps > pos_iou_thr) & responsible
        out[positive] = (argmax_overlaps.long()[positive] + 1).to(out.dtype)
        for i in range(min(int(num_gts), k)):
            if not bool(gt_max_overlaps[i] > min_pos_iou):
                continue
            if gt_max_assign_all:
                best = (overlaps[i] == gt_max_overlaps[i]) & responsible
                out[best] = float(i + 1)
            else:
                j = int(gt_argmax_overlaps[i])
                if bool(responsible[j]):
                    out[j] = float(i + 1)
        return out

    return without_derivative(name, compute, input)
