"""``torch_npu.npu_batch_nms(input, scores, score_threshold, iou_threshold, max_size_per_class,
max_total_size, change_coordinate_frame=False, transpose_box=False)``: per image, per class,
greedy non-maximum suppression, then the best boxes of all classes, as the NPU's
BatchMultiClassNonMaxSuppression (TensorFlow's combined NMS without a clip window).

``input`` holds boxes ``(batch, N, q, 4)`` with ``q`` 1 (shared by the classes) or the number of
classes, ``scores`` ``(batch, N, classes)``. For each class, the boxes scoring above
``score_threshold`` are taken by falling score (the lower index first on a tie), each kept
unless its IoU with a box kept before exceeds ``iou_threshold``, at most ``max_size_per_class``;
then the kept boxes of all classes by falling score (on a tie the lower class, then the order
kept), at most ``max_total_size``. Returns ``(nmsed_boxes (batch, max_total_size, 4),
nmsed_scores, nmsed_classes (batch, max_total_size), nmsed_num (batch,) int32)``, in the boxes'
dtype, the rows past ``nmsed_num`` zero (scripts that read all ``max_total_size`` rows see the
zeros the NPU writes). IoU is TensorFlow's: corners taken in either order, no +1, a box of no
area overlaps nothing. The emulator compares in fp32 (the NPU in fp16), so a score or an IoU
within an fp16 step of a threshold may fall the other way. ``change_coordinate_frame`` and
``transpose_box`` (torch_npu's documentation does not give the transposed layout) are not
emulated. No gradient: torch_npu defines none (torch's autograd fallback decides, see
_no_derivative)."""

from __future__ import annotations

from typing import List, Tuple

import torch

from ._boxes import intersection
from ._no_derivative import without_derivative
from ._registry import operator

NAME = "npu_batch_nms"


@operator
def npu_batch_nms(
    input: torch.Tensor,
    scores: torch.Tensor,
    score_threshold: float,
    iou_threshold: float,
    max_size_per_class: int,
    max_total_size: int,
    change_coordinate_frame: bool = False,
    transpose_box: bool = False,
) -> Tuple[torch.Tensor, ...]:
    if change_coordinate_frame or transpose_box:
        raise NotImplementedError(
            f"{NAME}: change_coordinate_frame and transpose_box are not "
            "emulated (only their defaults, False)"
        )
    if input.numel() == 0:
        raise RuntimeError(f"{NAME}: The input tensor [self] is an empty tensor.")
    if (
        input.dim() != 4
        or input.size(3) != 4
        or scores.dim() != 3
        or scores.shape[:2] != input.shape[:2]
        or input.size(2) not in (1, scores.size(2))
    ):
        raise RuntimeError(
            f"{NAME}: expected boxes (batch, N, q, 4) with q 1 or the number of "
            f"classes and scores (batch, N, classes), got boxes "
            f"{tuple(input.shape)} and scores {tuple(scores.shape)}"
        )
    if max_size_per_class < 0 or max_total_size < 0:
        raise RuntimeError(
            f"{NAME}: max_size_per_class and max_total_size must be >= 0, got "
            f"{max_size_per_class} and {max_total_size}"
        )

    def suppress(boxes: torch.Tensor, box_scores: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        device, dtype = boxes.device, boxes.dtype
        host_boxes = boxes.detach().cpu().float()
        host_scores = box_scores.detach().cpu().float()
        batch = boxes.size(0)
        out_boxes = torch.zeros(batch, max_total_size, 4)
        out_scores = torch.zeros(batch, max_total_size)
        out_classes = torch.zeros(batch, max_total_size)
        counts = torch.zeros(batch, dtype=torch.int32)
        for b in range(batch):
            kept = _image(
                host_boxes[b],
                host_scores[b],
                float(score_threshold),
                float(iou_threshold),
                max_size_per_class,
            )[:max_total_size]
            for row, (score, klass, box) in enumerate(kept):
                out_scores[b, row] = score
                out_classes[b, row] = klass
                out_boxes[b, row] = box
            counts[b] = len(kept)
        return (
            out_boxes.to(device=device, dtype=dtype),
            out_scores.to(device=device, dtype=dtype),
            out_classes.to(device=device, dtype=dtype),
            counts.to(device),
        )

    return without_derivative(NAME, suppress, input, scores)


def _image(
    boxes: torch.Tensor,
    scores: torch.Tensor,
    score_threshold: float,
    iou_threshold: float,
    per_class: int,
) -> List[Tuple[float, int, torch.Tensor]]:
    """The kept (score, class, box) of one image, best first."""
    kept: List[Tuple[float, int, int, torch.Tensor]] = []
    shared = boxes.size(1) == 1
    for klass in range(scores.size(1)):
        class_boxes = boxes[:, 0 if shared else klass]
        class_scores = scores[:, klass]
        candidates = torch.nonzero(class_scores > score_threshold).flatten()
        if candidates.numel() == 0 or per_class == 0:
            continue
        order = torch.sort(class_scores[candidates], descending=True, stable=True).indices
        candidates = candidates[order]
        overlaps = (_iou(class_boxes[candidates]) > iou_threshold).tolist()
        suppressed = [False] * len(overlaps)
        taken = 0
        for i, row in enumerate(overlaps):
            if suppressed[i]:
                continue
            index = int(candidates[i])
            kept.append((float(class_scores[index]), klass, taken, class_boxes[index]))
            taken += 1
            if taken == per_class:
                break
            for j in range(i + 1, len(row)):
                if row[j]:
                    suppressed[j] = True
    kept.sort(key=lambda k: (-k[0], k[1], k[2]))
    return [(score, klass, box) for score, klass, _, box in kept]


def _iou(boxes: torch.Tensor) -> torch.Tensor:
    """TensorFlow's pairwise IoU of ``boxes`` (K, 4): corners in either order, no +1."""
    low = torch.minimum(boxes[:, :2], boxes[:, 2:])
    high = torch.maximum(boxes[:, :2], boxes[:, 2:])
    area = (high - low).prod(1)
    corners = torch.cat([low, high], 1)
    inter = intersection(corners, corners)
    union = area[:, None] + area[None] - inter
    iou = inter / union
    return torch.where((area[:, None] > 0) & (area[None] > 0), iou, torch.zeros_like(iou))
