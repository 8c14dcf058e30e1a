"""torch_npu's rotated-box overlaps, as CANN's RotatedIou/RotatedOverlaps kernels compute them
(torch_npu's and mx_driving's tests: boxes as rows ``(x, y, w, h, angle)``, or with ``trans``
``(x1, y1, x2, y2, angle)``, the angle in degrees, counter-clockwise):

- ``npu_rotated_overlaps(input, query_boxes, trans=False)``: the intersection areas of
  ``input`` ``(B, N, 5)`` with ``query_boxes`` ``(B, K, 5)``, ``(B, N, K)``;
- ``npu_rotated_iou(input, query_boxes, trans=False, mode=0, is_cross=True, v_threshold=0.0,
  e_threshold=0.0)``: ``inter / (area_a + area_b - inter)`` (mode 0) or ``inter / area_a``
  (mode 1, over ``input``'s boxes, as mmcv's "iof" calls it), ``(B, N, K)``, or with
  ``is_cross=False`` box ``i`` against query ``i``, ``(B, N)``; ``v_threshold`` widens the
  point-in-box test (``e_threshold`` changes nothing here);
- ``npu_nms_rotated(input, scores, iou_threshold, scores_threshold=0, max_output_size=-1,
  mode=0)``: non-maximum suppression of ``(num, 5)`` rotated boxes ``input`` (``mode`` 0:
  xywh+angle, 1: x1y1x2y2+angle) by falling score (ties: lower index), a box dropped when its
  rotated IoU with a kept one exceeds the threshold; ``(selected int32, count int32 (1,))``.

The intersection is the polygon of both boxes' edge crossings and each box's corners inside
the other, ordered by angle around its centroid (the kernels' construction). Computed in fp32,
results in the boxes' dtype; no backward."""

from __future__ import annotations

import math
from typing import Tuple

import torch

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator


def _xywha(boxes: torch.Tensor, trans: bool) -> torch.Tensor:
    if not trans:
        return boxes
    x1, y1, x2, y2, angle = boxes.unbind(-1)
    return torch.stack(((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1, angle), -1)


def _corners(boxes: torch.Tensor) -> torch.Tensor:
    """(..., 5) xywh+angle (degrees) -> (..., 4, 2) corners, counter-clockwise."""
    x, y, w, h, angle = boxes.unbind(-1)
    rad = angle * (math.pi / 180)
    cos, sin = torch.cos(rad), torch.sin(rad)
    dx = torch.stack((-w, w, w, -w), -1) / 2
    dy = torch.stack((-h, -h, h, h), -1) / 2
    return torch.stack(
        (
            x[..., None] + dx * cos[..., None] - dy * sin[..., None],
            y[..., None] + dx * sin[..., None] + dy * cos[..., None],
        ),
        -1,
    )


def _inside(points: torch.Tensor, boxes: torch.Tensor, margin: float) -> torch.Tensor:
    """(P, 4, 2) points in (P, 5) boxes."""
    rad = -boxes[:, 4:5] * (math.pi / 180)
    cos, sin = torch.cos(rad), torch.sin(rad)
    px, py = points[..., 0] - boxes[:, 0:1], points[..., 1] - boxes[:, 1:2]
    rx, ry = px * cos - py * sin, px * sin + py * cos
    return (rx.abs() < boxes[:, 2:3] / 2 + margin) & (ry.abs() < boxes[:, 3:4] / 2 + margin)


def _intersection(a: torch.Tensor, b: torch.Tensor, margin: float = 1e-5) -> torch.Tensor:
    """Intersection areas of the box pairs (P, 5), (P, 5) (xywh+angle, fp32)."""
    ca, cb = _corners(a), _corners(b)
    pa, qa = ca, ca.roll(-1, dims=1)  # edges of a: (P, 4, 2)
    pb, qb = cb, cb.roll(-1, dims=1)
    r = (qa - pa)[:, :, None, :]  # (P, 4, 1, 2)
    s = (qb - pb)[:, None, :, :]  # (P, 1, 4, 2)
    diff = pb[:, None, :, :] - pa[:, :, None, :]
    denom = r[..., 0] * s[..., 1] - r[..., 1] * s[..., 0]
    safe = torch.where(denom == 0, torch.ones_like(denom), denom)
    t = (diff[..., 0] * s[..., 1] - diff[..., 1] * s[..., 0]) / safe
    u = (diff[..., 0] * r[..., 1] - diff[..., 1] * r[..., 0]) / safe
    crossing = (denom != 0) & (t > 0) & (t < 1) & (u > 0) & (u < 1)
    hits = (pa[:, :, None, :] + t[..., None] * r).reshape(-1, 16, 2)
    points = torch.cat((hits, cb, ca), 1)  # (P, 24, 2)
    valid = torch.cat((crossing.reshape(-1, 16), _inside(cb, a, margin), _inside(ca, b, margin)), 1)
    count = valid.sum(1, keepdim=True).clamp(min=1)
    centre = (points * valid[..., None]).sum(1) / count
    angle = torch.atan2(points[..., 1] - centre[:, None, 1], points[..., 0] - centre[:, None, 0])
    angle = torch.where(valid, angle, torch.full_like(angle, float("inf")))
    order = angle.argsort(dim=1)
    points = points.gather(1, order[..., None].expand(-1, -1, 2))
    valid = valid.gather(1, order)
    v = points - points[:, :1]
    cross = v[:, :-1, 0] * v[:, 1:, 1] - v[:, :-1, 1] * v[:, 1:, 0]
    return (cross * valid[:, 1:]).sum(1).abs() / 2


def _check(name: str, boxes: torch.Tensor, query: torch.Tensor) -> None:
    if (
        boxes.dim() != 3
        or query.dim() != 3
        or boxes.shape[2] != 5
        or query.shape[2] != 5
        or boxes.shape[0] != query.shape[0]
    ):
        raise RuntimeError(
            f"{name}: boxes must be (B, N, 5) and query_boxes (B, K, 5), got "
            f"{tuple(boxes.shape)} and {tuple(query.shape)}"
        )


def _pairs(boxes, query, trans, cross):
    a = _xywha(upcast(boxes).float(), trans)
    b = _xywha(upcast(query).float(), trans)
    if cross:
        n, k = a.shape[1], b.shape[1]
        a = a[:, :, None, :].expand(-1, n, k, 5)
        b = b[:, None, :, :].expand(-1, n, k, 5)
    return a, b


@operator
def npu_rotated_overlaps(
    input: torch.Tensor, query_boxes: torch.Tensor, trans: bool = False
) -> torch.Tensor:
    _check("npu_rotated_overlaps", input, query_boxes)

    def compute(boxes, query):
        a, b = _pairs(boxes, query, trans, True)
        area = _intersection(a.reshape(-1, 5), b.reshape(-1, 5)).reshape(a.shape[:-1])
        return store(area, boxes.dtype)

    return without_derivative("npu_rotated_overlaps", compute, input, query_boxes)


@operator
def npu_rotated_iou(
    input: torch.Tensor,
    query_boxes: torch.Tensor,
    trans: bool = False,
    mode: int = 0,
    is_cross: bool = True,
    v_threshold: float = 0.0,
    e_threshold: float = 0.0,
) -> torch.Tensor:
    name = "npu_rotated_iou"
    _check(name, input, query_boxes)
    if mode not in (0, 1):
        raise RuntimeError(f"{name}: mode must be 0 (IoU) or 1 (IoF), got {mode}")
    if not is_cross and input.shape[1] != query_boxes.shape[1]:
        raise RuntimeError(
            f"{name}: is_cross=False pairs box i with query i: N and K must be "
            f"equal, got {input.shape[1]} and {query_boxes.shape[1]}"
        )

    def compute(boxes, query):
        a, b = _pairs(boxes, query, trans, is_cross)
        inter = _intersection(
            a.reshape(-1, 5), b.reshape(-1, 5), 1e-5 + float(v_threshold)
        ).reshape(a.shape[:-1])
        area_a, area_b = a[..., 2] * a[..., 3], b[..., 2] * b[..., 3]
        denom = area_a if mode == 1 else area_a + area_b - inter
        iou = torch.where(denom > 0, inter / denom.clamp(min=1e-30), torch.zeros_like(inter))
        return store(iou, boxes.dtype)

    return without_derivative(name, compute, input, query_boxes)


@operator
def npu_nms_rotated(
    input: torch.Tensor,
    scores: torch.Tensor,
    iou_threshold: float,
    scores_threshold: float = 0,
    max_output_size: int = -1,
    mode: int = 0,
) -> Tuple[torch.Tensor, torch.Tensor]:
    name = "npu_nms_rotated"
    dets = input
    if dets.dim() != 2 or dets.shape[1] != 5:
        raise RuntimeError(f"{name}: dets must be (num_boxes, 5), got {tuple(dets.shape)}")
    if scores.dim() != 1 or scores.shape[0] != dets.shape[0]:
        raise RuntimeError(f"{name}: scores must be ({dets.shape[0]},), got {tuple(scores.shape)}")
    if mode not in (0, 1):
        raise RuntimeError(
            f"{name}: mode must be 0 (x, y, w, h, angle) or 1 (x1, y1, x2, y2, angle), got {mode}"
        )
    boxes = _xywha(upcast(dets).detach().float(), mode == 1)
    values = upcast(scores).detach().float()
    order = sorted(
        (i for i in range(boxes.shape[0]) if values[i] > scores_threshold),
        key=lambda i: (-float(values[i]), i),
    )
    limit = len(order) if max_output_size < 0 else int(max_output_size)
    kept = []
    for i in order:
        if len(kept) == limit:
            break
        if kept:
            a = boxes[i].expand(len(kept), 5)
            b = boxes[kept]
            inter = _intersection(a, b)
            union = a[:, 2] * a[:, 3] + b[:, 2] * b[:, 3] - inter
            if bool((inter > float(iou_threshold) * union).any()):
                continue
        kept.append(i)
    device = dets.device
    return (
        torch.tensor(kept, dtype=torch.int32, device=device),
        torch.tensor([len(kept)], dtype=torch.int32, device=device),
    )
