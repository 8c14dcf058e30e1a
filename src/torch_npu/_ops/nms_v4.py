"""``torch_npu.npu_nms_v4(input, scores, max_output_size, iou_threshold, scores_threshold,
pad_to_max_output_size=False) -> (selected_indices, valid_outputs)``: TensorFlow's
NonMaxSuppressionV4 over ``(num_boxes, 4)`` boxes (two opposite corners, in either order): boxes
scoring above ``scores_threshold`` are taken by falling score (ties: lower index first) and
kept unless their IoU with a kept box exceeds ``iou_threshold``, at most ``max_output_size``;
``selected_indices`` int32 (padded with zeros to ``max_output_size`` when asked) and the number
of valid ones, a 0-D int32. IoU in fp32 (the NPU computes in fp16). No backward (indices)."""

from __future__ import annotations

from typing import Tuple, Union

import torch

from ._precision import upcast
from ._registry import operator


def _iou(box: torch.Tensor, others: torch.Tensor) -> torch.Tensor:
    y1 = torch.minimum(box[0], box[2])
    x1 = torch.minimum(box[1], box[3])
    y2 = torch.maximum(box[0], box[2])
    x2 = torch.maximum(box[1], box[3])
    oy1 = torch.minimum(others[:, 0], others[:, 2])
    ox1 = torch.minimum(others[:, 1], others[:, 3])
    oy2 = torch.maximum(others[:, 0], others[:, 2])
    ox2 = torch.maximum(others[:, 1], others[:, 3])
    inter = (torch.minimum(y2, oy2) - torch.maximum(y1, oy1)).clamp(min=0) * (
        torch.minimum(x2, ox2) - torch.maximum(x1, ox1)
    ).clamp(min=0)
    union = (y2 - y1) * (x2 - x1) + (oy2 - oy1) * (ox2 - ox1) - inter
    return torch.where(union > 0, inter / union.clamp(min=1e-30), torch.zeros_like(inter))


@operator
def npu_nms_v4(
    input: torch.Tensor,
    scores: torch.Tensor,
    max_output_size: Union[int, float],
    iou_threshold: torch.Tensor,
    scores_threshold: torch.Tensor,
    pad_to_max_output_size: bool = False,
) -> Tuple[torch.Tensor, torch.Tensor]:
    name = "npu_nms_v4"
    if input.dim() != 2 or input.shape[1] != 4:
        raise RuntimeError(f"{name}: boxes must be (num_boxes, 4), got {tuple(input.shape)}")
    if scores.dim() != 1 or scores.shape[0] != input.shape[0]:
        raise RuntimeError(f"{name}: scores must be ({input.shape[0]},), got {tuple(scores.shape)}")
    limit = int(max_output_size)
    if limit < 0:
        raise RuntimeError(f"{name}: max_output_size must not be negative, got {limit}")
    iou_t = float(iou_threshold)
    score_t = float(scores_threshold)
    boxes = upcast(input).detach().float()
    values = upcast(scores).detach().float()
    order = sorted(
        (i for i in range(values.shape[0]) if values[i] > score_t),
        key=lambda i: (-float(values[i]), i),
    )
    kept = []
    for i in order:
        if len(kept) == limit:
            break
        if kept and bool((_iou(boxes[i], boxes[kept]) > iou_t).any()):
            continue
        kept.append(i)
    count = len(kept)
    if pad_to_max_output_size:
        kept += [0] * (limit - count)
    device = input.device
    return (
        torch.tensor(kept, dtype=torch.int32, device=device),
        torch.tensor(count, dtype=torch.int32, device=device),
    )
