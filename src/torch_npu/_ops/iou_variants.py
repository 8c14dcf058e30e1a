"""The IoU-based box losses of YOLO's ports: ``torch_npu.npu_giou(input, gtboxes, trans=False,
is_cross=False, mode=0)``, ``npu_diou(input, gtboxes, trans=False, is_cross=False, mode=0)`` and
``npu_ciou(input, gtboxes, trans=False, is_cross=True, mode=0, atan_sub_flag=False)``, with
their backward operators ``npu_giou_backward``, ``npu_diou_backward`` and
``npu_ciou_backward``, as the NPU's GIoU, DIoU and CIoU kernels compute them.

Boxes come as columns: ``input`` (predictions) is ``(4, n)``, ``gtboxes`` ``(4, m)``, the rows
``(x1, y1, x2, y2)``, or with ``trans`` ``(x, y, w, h)`` (centre and size). ``mode`` 1 divides
the intersection by the ground-truth box's area (IoF), any other value by the union (IoU).
Without ``is_cross`` box ``i`` meets ground truth ``i`` (``m == n``) and the result is
``(1, n)``; with it every box meets every ground truth, ``(m, n)``. ``npu_giou`` returns its
``(1, n)`` transposed, ``(n, 1)``, and like torch_npu takes only ``trans=True,
is_cross=False, mode=0``.

With ``w, h`` a box's size, ``c`` the smallest box enclosing both, ``rho`` the distance between
the centres:

- GIoU: ``iou - (area(c) - union) / area(c)``;
- DIoU: ``iou - rho^2 / (c_w^2 + c_h^2)``;
- CIoU: DIoU ``- alpha v`` with ``v = 4 / pi^2 (atan(w_gt / h_gt) - atan(w / h))^2`` (ratios
  capped at 10000) and ``alpha = v / (v - iou + 1)``.

The kernels' guards are kept (sizes and the diagonal plus 1e-16, heights 1e-9 in the CIoU
ratios), so empty boxes give finite values. Computed in fp32 and stored once in ``input``'s
dtype (``_precision``). The gradients are those of these formulas, for ``trans=True,
is_cross=False, mode=0`` only, as on the NPU (other settings raise on backward); CIoU's treats
``alpha`` as a constant, as its paper and the NPU's CIoUGrad do, and reads the
``atan(w_gt / h_gt) - atan(w / h)`` its forward computed.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional, Tuple

import torch

from . import _precision
from ._registry import operator

_EPS = 1e-16
_RATIO_EPS = 1e-9  # added to heights in CIoU's aspect ratios
_MAX_RATIO = 10000.0
_V_SCALE = 4.0 / math.pi**2
_IOF = 1


class _Boxes(NamedTuple):
    x1: torch.Tensor
    y1: torch.Tensor
    x2: torch.Tensor
    y2: torch.Tensor


def _corners(boxes: torch.Tensor, trans: bool) -> _Boxes:
    a, b, c, d = boxes.float().unbind(0)
    if not trans:
        return _Boxes(a, b, c, d)
    half_w, half_h = c * 0.5, d * 0.5
    return _Boxes(a - half_w, b - half_h, a + half_w, b + half_h)


def _paired(boxes: _Boxes, truth: _Boxes, is_cross: bool) -> Tuple[_Boxes, _Boxes]:
    """(n,) boxes against (n,) ground truths, or (1, n) against (m, 1) when crossing."""
    if not is_cross:
        return boxes, truth
    return (_Boxes(*(t[None, :] for t in boxes)), _Boxes(*(t[:, None] for t in truth)))


class _Terms(NamedTuple):
    overlap: torch.Tensor  # IoU or IoF
    denominator: torch.Tensor  # the union, or the ground truth's area
    enclosing: _Boxes


def _terms(b: _Boxes, g: _Boxes, mode: int, height_eps: float = 0.0) -> _Terms:
    area_b = (b.x2 - b.x1 + _EPS) * (b.y2 - b.y1 + height_eps + _EPS)
    area_g = (g.x2 - g.x1 + _EPS) * (g.y2 - g.y1 + height_eps + _EPS)
    inter = (torch.minimum(b.x2, g.x2) - torch.maximum(b.x1, g.x1)).clamp(min=0) * (
        torch.minimum(b.y2, g.y2) - torch.maximum(b.y1, g.y1)
    ).clamp(min=0)
    denominator = area_g if mode == _IOF else area_b + area_g - inter
    enclosing = _Boxes(
        torch.minimum(b.x1, g.x1),
        torch.minimum(b.y1, g.y1),
        torch.maximum(b.x2, g.x2),
        torch.maximum(b.y2, g.y2),
    )
    return _Terms(inter / denominator, denominator, enclosing)


def _distance_penalty(b: _Boxes, g: _Boxes, c: _Boxes) -> torch.Tensor:
    """rho^2 / diagonal^2: the squared centre distance over the enclosing box's diagonal."""
    rho2 = ((b.x1 + b.x2 - g.x1 - g.x2) ** 2 + (b.y1 + b.y2 - g.y1 - g.y2) ** 2) * 0.25
    return rho2 / ((c.x2 - c.x1) ** 2 + (c.y2 - c.y1) ** 2 + _EPS)


def _giou(b: _Boxes, g: _Boxes, mode: int) -> torch.Tensor:
    t = _terms(b, g, mode)
    c = t.enclosing
    outer = (c.x2 - c.x1 + _EPS) * (c.y2 - c.y1 + _EPS)
    return t.overlap - (outer - t.denominator) / outer


def _diou(b: _Boxes, g: _Boxes, mode: int) -> torch.Tensor:
    t = _terms(b, g, mode)
    return t.overlap - _distance_penalty(b, g, t.enclosing)


def _atan_ratio(boxes: _Boxes) -> torch.Tensor:
    ratio = (boxes.x2 - boxes.x1) / (boxes.y2 - boxes.y1 + _RATIO_EPS)
    return torch.atan(ratio.clamp(max=_MAX_RATIO))


def _ciou(
    b: _Boxes, g: _Boxes, mode: int, atan_sub: Optional[torch.Tensor] = None
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(CIoU, atan_sub). For the gradient ``alpha`` is a constant and ``v``'s slope comes from
    ``atan_sub`` (the forward's, when given)."""
    t = _terms(b, g, mode, _RATIO_EPS)
    diff = _atan_ratio(g) - _atan_ratio(b)
    sub = diff.detach() if atan_sub is None else atan_sub.float().reshape(diff.shape)
    v_value = _V_SCALE * sub * sub
    # Equals v_value, with the slope 2 * 4 / pi^2 * sub * d(diff).
    v = v_value + _V_SCALE * 2.0 * sub * (diff - diff.detach())
    alpha = (v_value / (v_value - t.overlap.detach() + 1.0 + _EPS)).detach()
    return t.overlap - _distance_penalty(b, g, t.enclosing) - alpha * v, diff


def _check_shapes(op: str, boxes: torch.Tensor, gtboxes: torch.Tensor, is_cross: bool) -> None:
    for what, t in (("input", boxes), ("gtboxes", gtboxes)):
        if t.dim() != 2 or t.size(0) != 4:
            raise RuntimeError(f"{op}: {what} must be (4, n) boxes, got shape {tuple(t.shape)}")
    if not is_cross and boxes.size(1) != gtboxes.size(1):
        raise RuntimeError(
            f"{op}: without is_cross input and gtboxes must hold as many boxes, "
            f"got {boxes.size(1)} and {gtboxes.size(1)}"
        )


def _backward_supported(op: str, trans: bool, is_cross: bool, mode: int) -> None:
    if not (trans and not is_cross and mode == 0):
        raise RuntimeError(
            f"{op} only support trans==True, is_cross==False, mode==0('iou') "
            "current version if you need to back propagation, please ensure "
            "your parameter is correct!"
        )


def _gradients(
    kind: str,
    grad: torch.Tensor,
    bboxes: torch.Tensor,
    gtboxes: torch.Tensor,
    trans: bool,
    is_cross: bool,
    mode: int,
    atan_sub: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    op = f"{kind} backward"
    _backward_supported(op, trans, is_cross, mode)
    _check_shapes(op, bboxes, gtboxes, is_cross)
    with torch.enable_grad():
        b = _precision.upcast(bboxes).detach().float().requires_grad_(True)
        g = _precision.upcast(gtboxes).detach().float().requires_grad_(True)
        pb, pg = _corners(b, trans), _corners(g, trans)
        if kind == "ciou":
            value = _ciou(pb, pg, mode, atan_sub)[0]
        else:
            value = (_giou if kind == "giou" else _diou)(pb, pg, mode)
        weights = _precision.upcast(grad).float().reshape(value.shape)
        db, dg = torch.autograd.grad(value, (b, g), weights)
    return _precision.store(db, bboxes.dtype), _precision.store(dg, gtboxes.dtype)


@operator
def npu_giou_backward(
    grad: torch.Tensor,
    bboxes: torch.Tensor,
    gtboxes: torch.Tensor,
    trans: bool = False,
    is_cross: bool = False,
    mode: int = 0,
) -> Tuple[torch.Tensor, torch.Tensor]:
    return _gradients("giou", grad, bboxes, gtboxes, trans, is_cross, mode)


@operator
def npu_diou_backward(
    grad: torch.Tensor,
    bboxes: torch.Tensor,
    gtboxes: torch.Tensor,
    trans: bool = False,
    is_cross: bool = False,
    mode: int = 0,
) -> Tuple[torch.Tensor, torch.Tensor]:
    return _gradients("diou", grad, bboxes, gtboxes, trans, is_cross, mode)


@operator
def npu_ciou_backward(
    grad: torch.Tensor,
    bboxes: torch.Tensor,
    gtboxes: torch.Tensor,
    atan_sub: Optional[torch.Tensor],
    trans: bool = False,
    is_cross: bool = True,
    mode: int = 0,
) -> Tuple[torch.Tensor, torch.Tensor]:
    return _gradients("ciou", grad, bboxes, gtboxes, trans, is_cross, mode, atan_sub)


class _Overlap(torch.autograd.Function):
    """The forward in fp32 without a graph; the backward is the operator's backward."""

    @staticmethod
    def forward(ctx, kind, boxes, gtboxes, trans, is_cross, mode):  # noqa: D102
        ctx.args = (kind, trans, is_cross, mode)
        pb, pg = _paired(
            _corners(_precision.upcast(boxes), trans),
            _corners(_precision.upcast(gtboxes), trans),
            is_cross,
        )
        atan_sub = None
        if kind == "ciou":
            value, atan_sub = _ciou(pb, pg, mode)
        else:
            value = (_giou if kind == "giou" else _diou)(pb, pg, mode)
        ctx.save_for_backward(boxes, gtboxes, atan_sub)
        return _precision.store(value.reshape(-1, boxes.size(1)), boxes.dtype)

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        kind, trans, is_cross, mode = ctx.args
        boxes, gtboxes, atan_sub = ctx.saved_tensors
        db, dg = _gradients(kind, grad, boxes, gtboxes, trans, is_cross, mode, atan_sub)
        return None, db, dg, None, None, None


@operator
def npu_giou(
    input: torch.Tensor,
    gtboxes: torch.Tensor,  # noqa: A002 - torch_npu's name
    trans: bool = False,
    is_cross: bool = False,
    mode: int = 0,
) -> torch.Tensor:
    _backward_supported("giou backward", trans, is_cross, mode)
    if input.dim() < 2 or gtboxes.dim() < 2:
        raise RuntimeError("giou input dim must be >= 2")
    _check_shapes("npu_giou", input, gtboxes, is_cross)
    return _Overlap.apply("giou", input, gtboxes, trans, is_cross, mode).t()


@operator
def npu_diou(
    input: torch.Tensor,
    gtboxes: torch.Tensor,  # noqa: A002 - torch_npu's name
    trans: bool = False,
    is_cross: bool = False,
    mode: int = 0,
) -> torch.Tensor:
    _check_shapes("npu_diou", input, gtboxes, is_cross)
    return _Overlap.apply("diou", input, gtboxes, trans, is_cross, mode)


@operator
def npu_ciou(
    input: torch.Tensor,
    gtboxes: torch.Tensor,  # noqa: A002 - torch_npu's name
    trans: bool = False,
    is_cross: bool = True,
    mode: int = 0,
    atan_sub_flag: bool = False,
) -> torch.Tensor:
    """``atan_sub_flag`` tells the NPU's kernel to keep its ``atan`` difference for the
    backward; the emulator always keeps it."""
    _check_shapes("npu_ciou", input, gtboxes, is_cross)
    return _Overlap.apply("ciou", input, gtboxes, trans, is_cross, mode)
