"""``torch_npu.contrib.function.npu_multiclass_nms`` and ``npu_batched_multiclass_nms``:
mmdetection's ``multiclass_nms`` on the NPU, one ``npu_batch_nms`` (in fp16, as the NPU runs
it) over all classes at once.

- ``npu_multiclass_nms(multi_bboxes (n, #class, 4) or (n, 4), multi_scores (n, #class + 1),
  score_thr=0.05, nms_thr=0.45, max_num=50, score_factors=None)``: the last score column (the
  background) is dropped, the scores are multiplied by ``score_factors[:, None]`` if given;
  returns ``(bboxes (max_num, 5): the box and its score, labels (max_num,))``, 0-based labels,
  zero rows past the boxes kept (the NPU allocates ``max_num`` rows up front).
- ``npu_batched_multiclass_nms``: the same for a batch, ``(bs, n, ...)`` in, ``(bs, max_num,
  5)`` and ``(bs, max_num)`` out."""

from __future__ import annotations

from typing import Optional, Tuple

import torch

import torch_npu

__all__ = ["npu_batched_multiclass_nms", "npu_multiclass_nms"]


def _batched(
    bboxes: torch.Tensor,
    scores: torch.Tensor,
    score_thr: float,
    nms_thr: float,
    max_num: int,
    score_factors: Optional[torch.Tensor],
) -> Tuple[torch.Tensor, torch.Tensor]:
    # scores: (bs, n, classes + 1); bboxes: (bs, n, classes or 1, 4) in any equivalent layout.
    batch, num_boxes, classes = scores.size(0), scores.size(1), scores.size(2) - 1
    scores = scores[..., :-1]
    if score_factors is not None:
        scores = scores * score_factors[..., None]
    per_box = bboxes.numel() // (4 * num_boxes * batch)
    bboxes = bboxes.reshape(batch, num_boxes, per_box, 4)
    scores = scores.reshape(batch, num_boxes, classes)
    boxes, kept_scores, labels, _ = torch_npu.npu_batch_nms(
        bboxes.half(), scores.half(), score_thr, nms_thr, max_num, max_num
    )
    return torch.cat([boxes, kept_scores[..., None]], -1), labels


def npu_multiclass_nms(
    multi_bboxes: torch.Tensor,
    multi_scores: torch.Tensor,
    score_thr: float = 0.05,
    nms_thr: float = 0.45,
    max_num: int = 50,
    score_factors: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    dets, labels = _batched(
        multi_bboxes.unsqueeze(0),
        multi_scores.unsqueeze(0),
        score_thr,
        nms_thr,
        max_num,
        None if score_factors is None else score_factors.unsqueeze(0),
    )
    return dets[0], labels[0]


def npu_batched_multiclass_nms(
    multi_bboxes: torch.Tensor,
    multi_scores: torch.Tensor,
    score_thr: float = 0.05,
    nms_thr: float = 0.45,
    max_num: int = 50,
    score_factors: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    return _batched(multi_bboxes, multi_scores, score_thr, nms_thr, max_num, score_factors)
