"""``torch_npu.npu_bounding_box_encode`` and ``npu_bounding_box_decode``: Faster R-CNN's box
deltas, as the NPU's BoundingBoxEncode/Decode compute them (mmdetection's legacy ``bbox2delta``
and ``delta2bbox``: a box ``(x1, y1, x2, y2)`` is ``x2 - x1 + 1`` wide).

- encode(anchors, ground truth, means0..3, stds0..3): ``((gx - px) / pw, (gy - py) / ph,
  log(gw / pw), log(gh / ph))``, less the means, over the stds, per box (``p``: the anchor's
  centre and size, ``g``: the ground truth's).
- decode(rois, deltas, means0..3, stds0..3, max_shape, wh_ratio_clip): the deltas, times the
  stds plus the means, applied to the rois; ``dw``/``dh`` are clipped to
  ``±|log(wh_ratio_clip)|``, and the corners to ``[0, max_shape[1] - 1]`` (x) and
  ``[0, max_shape[0] - 1]`` (y) (``max_shape`` is ``(height, width)``).

A negative size ratio (a ground-truth box given upside down) has no logarithm: Ascend 910 takes
it of the ratio's magnitude, Ascend 910B gives NaN (op-plugin's tests), so the emulator does as
its overflow mode's NPU does. Results come in the inputs' dtype. Encode computes every step in
fp16 even for fp32 boxes, as both chips do (torch_npu's contrib test of its box coder expects
those values: 4/3 as 1.3330 on a 910B, all 24 deltas of its 910A case to the fp16 step, where
fp32 arithmetic is up to 1.7e-3 off); decode computes in fp32 and rounds once. No gradient:
torch_npu defines none (a backward through them raises)."""

from __future__ import annotations

from typing import Sequence

import torch

from .._fp16 import overflow_mode
from . import _precision
from ._no_derivative import without_derivative
from ._registry import operator


def _check(name: str, what: str, boxes: torch.Tensor) -> None:
    if boxes.dim() != 2 or boxes.size(1) != 4:
        raise RuntimeError(f"{name}: {what} must be (N, 4) boxes, got shape {tuple(boxes.shape)}")


def _fp32(values: torch.Tensor) -> torch.Tensor:
    return values


def _fp16(values: torch.Tensor) -> torch.Tensor:
    """``values`` (fp32) rounded to fp16, as an fp16 unit's step leaves them."""
    return values.half().float()


def _centres_and_sizes(boxes: torch.Tensor, step=_fp32):
    x1, y1, x2, y2 = step(boxes.float()).unbind(-1)
    return (
        step(x1 + x2) * 0.5,
        step(y1 + y2) * 0.5,
        step(step(x2 - x1) + 1.0),
        step(step(y2 - y1) + 1.0),
    )


@operator
def npu_bounding_box_encode(
    anchor_box: torch.Tensor,
    ground_truth_box: torch.Tensor,
    means0: float,
    means1: float,
    means2: float,
    means3: float,
    stds0: float,
    stds1: float,
    stds2: float,
    stds3: float,
) -> torch.Tensor:
    name = "npu_bounding_box_encode"
    _check(name, "anchor_box", anchor_box)
    _check(name, "ground_truth_box", ground_truth_box)
    if anchor_box.size(0) != ground_truth_box.size(0):
        raise RuntimeError(
            f"{name}: anchor_box has {anchor_box.size(0)} boxes, "
            f"ground_truth_box {ground_truth_box.size(0)}"
        )
    means = (means0, means1, means2, means3)
    stds = (stds0, stds1, stds2, stds3)

    def encode(anchors: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
        # Every step in fp16, whatever the boxes' dtype (each fp32 result rounded to fp16).
        px, py, pw, ph = _centres_and_sizes(anchors, _fp16)
        gx, gy, gw, gh = _centres_and_sizes(truth, _fp16)
        ratios = torch.stack([_fp16(gw / pw), _fp16(gh / ph)], -1)
        if not overflow_mode.inf_nan():
            ratios = ratios.abs()
        offsets = [_fp16(_fp16(gx - px) / pw), _fp16(_fp16(gy - py) / ph)]
        deltas = torch.cat([torch.stack(offsets, -1), _fp16(torch.log(ratios))], -1)
        means_ = _fp16(deltas.new_tensor(means))
        stds_ = _fp16(deltas.new_tensor(stds))
        deltas = _fp16(_fp16(deltas - means_) / stds_)
        return _precision.store(deltas, anchors.dtype)

    return without_derivative(name, encode, anchor_box, ground_truth_box)


@operator
def npu_bounding_box_decode(
    rois: torch.Tensor,
    deltas: torch.Tensor,
    means0: float,
    means1: float,
    means2: float,
    means3: float,
    stds0: float,
    stds1: float,
    stds2: float,
    stds3: float,
    max_shape: Sequence[int],
    wh_ratio_clip: float,
) -> torch.Tensor:
    name = "npu_bounding_box_decode"
    _check(name, "rois", rois)
    _check(name, "deltas", deltas)
    if rois.size(0) != deltas.size(0):
        raise RuntimeError(f"{name}: rois has {rois.size(0)} boxes, deltas {deltas.size(0)}")
    if len(max_shape) != 2:
        raise RuntimeError(f"{name}: max_shape must be (height, width), got {list(max_shape)}")
    means = (means0, means1, means2, means3)
    stds = (stds0, stds1, stds2, stds3)
    height, width = (int(v) for v in max_shape)
    max_ratio = abs(torch.log(torch.tensor(float(wh_ratio_clip))).item())

    def decode(boxes: torch.Tensor, moves: torch.Tensor) -> torch.Tensor:
        moves = moves.float() * moves.new_tensor(stds, dtype=torch.float32) + moves.new_tensor(
            means, dtype=torch.float32
        )
        dx, dy, dw, dh = moves.unbind(-1)
        dw = dw.clamp(-max_ratio, max_ratio)
        dh = dh.clamp(-max_ratio, max_ratio)
        px, py, pw, ph = _centres_and_sizes(boxes)
        gw, gh = pw * torch.exp(dw), ph * torch.exp(dh)
        gx, gy = px + pw * dx, py + ph * dy
        decoded = torch.stack(
            [
                (gx - gw * 0.5 + 0.5).clamp(0, width - 1),
                (gy - gh * 0.5 + 0.5).clamp(0, height - 1),
                (gx + gw * 0.5 - 0.5).clamp(0, width - 1),
                (gy + gh * 0.5 - 0.5).clamp(0, height - 1),
            ],
            -1,
        )
        return _precision.store(decoded, boxes.dtype)

    return without_derivative(name, decode, rois, deltas)
