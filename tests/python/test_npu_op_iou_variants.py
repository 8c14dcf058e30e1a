"""torch_npu.npu_giou / npu_diou / npu_ciou and their backward operators against the GIoU,
DIoU and CIoU formulas written here in plain torch (float64), box by box: fp32 within
rtol/atol 1e-5 (overlay_support.npu_op_checks.FP32), fp16 computed in fp32 and rounded once
(FP16). Gradients (trans=True, is_cross=False, mode=0, the one setting the NPU differentiates)
against autograd of the same formulas, CIoU's with alpha held constant as its paper and the
NPU's CIoUGrad do."""

import math

import pytest
import torch

from overlay_support.npu_op_checks import DTYPES, FP32, check_against_formula, on_npu, torch_npu


def corners(boxes, trans):
    """Rows (x1, y1, x2, y2) of (4, n) columns, from (x, y, w, h) when ``trans``."""
    a, b, c, d = boxes.unbind(0)
    if trans:
        return a - c / 2, b - d / 2, a + c / 2, b + d / 2
    return a, b, c, d


def metric(kind, p, g, mode=0):
    """GIoU/DIoU/CIoU of boxes ``p`` and ``g``, corner tuples of equal shapes."""
    px1, py1, px2, py2 = p
    gx1, gy1, gx2, gy2 = g
    inter = (torch.min(px2, gx2) - torch.max(px1, gx1)).clamp(min=0) * (
        torch.min(py2, gy2) - torch.max(py1, gy1)
    ).clamp(min=0)
    area_p, area_g = (px2 - px1) * (py2 - py1), (gx2 - gx1) * (gy2 - gy1)
    denominator = area_g if mode == 1 else area_p + area_g - inter
    overlap = inter / denominator
    cw = torch.max(px2, gx2) - torch.min(px1, gx1)
    ch = torch.max(py2, gy2) - torch.min(py1, gy1)
    if kind == "giou":
        return overlap - (cw * ch - denominator) / (cw * ch)
    rho2 = ((px1 + px2 - gx1 - gx2) ** 2 + (py1 + py2 - gy1 - gy2) ** 2) / 4
    diou = overlap - rho2 / (cw**2 + ch**2)
    if kind == "diou":
        return diou
    v = (
        4
        / math.pi**2
        * (torch.atan((gx2 - gx1) / (gy2 - gy1)) - torch.atan((px2 - px1) / (py2 - py1))) ** 2
    )
    alpha = (v / (v - overlap + 1)).detach()  # a constant to the gradient
    return diou - alpha * v


def formula(kind, boxes, gtboxes, trans=True, is_cross=False, mode=0):
    """The operator's result from the formula: (1, n), (m, n) when crossing, (n, 1) for
    GIoU."""
    p, g = corners(boxes.double(), trans), corners(gtboxes.double(), trans)
    if is_cross:
        p = tuple(t[None, :] for t in p)
        g = tuple(t[:, None] for t in g)
        return metric(kind, p, g, mode)
    out = metric(kind, p, g, mode)[None, :]
    return out.t() if kind == "giou" else out


def columns(n, seed, trans=True):
    g = torch.Generator().manual_seed(seed)
    if trans:  # centres in [0, 10), sizes in [0.5, 6)
        return torch.cat(
            [torch.rand(2, n, generator=g) * 10, torch.rand(2, n, generator=g) * 5.5 + 0.5]
        )
    corner = torch.rand(2, n, generator=g) * 10
    return torch.cat([corner, corner + torch.rand(2, n, generator=g) * 5.5 + 0.5])


OPS = {"giou": "npu_giou", "diou": "npu_diou", "ciou": "npu_ciou"}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", sorted(OPS))
def test_forward_and_gradients_match_the_formula(kind, dtype):
    op = getattr(torch_npu, OPS[kind])
    check_against_formula(
        lambda b, g: op(b, g, trans=True, is_cross=False, mode=0),
        lambda b, g: formula(kind, b, g).float(),
        [columns(40, 1), columns(40, 2)],
        dtype,
        grads=(0, 1),
    )


@pytest.mark.parametrize("kind", ["diou", "ciou"])
@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("trans", [False, True])
def test_crossed_boxes_and_iof(kind, mode, trans):
    boxes, truth = columns(7, 3, trans), columns(4, 4, trans)
    got = getattr(torch_npu, OPS[kind])(
        on_npu(boxes), on_npu(truth), trans=trans, is_cross=True, mode=mode
    )
    assert got.shape == (4, 7) and got.dtype == torch.float32
    want = formula(kind, boxes, truth, trans, True, mode)
    torch.testing.assert_close(got.cpu(), want.float(), **FP32)
    # Row j is ground truth j against every box: the pairs of the uncrossed operator.
    paired = getattr(torch_npu, OPS[kind])(
        on_npu(boxes[:, :4]), on_npu(truth), trans=trans, is_cross=False, mode=mode
    )
    torch.testing.assert_close(paired.cpu()[0], got.cpu().diagonal(), **FP32)


def test_defaults_are_torch_npus():
    boxes, truth = columns(5, 5, trans=False), columns(5, 6, trans=False)
    # npu_diou: xyxy, paired, IoU; npu_ciou crosses by default.
    torch.testing.assert_close(
        torch_npu.npu_diou(on_npu(boxes), on_npu(truth)).cpu(),
        formula("diou", boxes, truth, trans=False).float(),
        **FP32,
    )
    torch.testing.assert_close(
        torch_npu.npu_ciou(on_npu(boxes), on_npu(truth)).cpu(),
        formula("ciou", boxes, truth, False, True).float(),
        **FP32,
    )


@pytest.mark.parametrize("kind", sorted(OPS))
def test_a_box_on_itself_scores_one(kind):
    boxes = columns(6, 7)
    got = getattr(torch_npu, OPS[kind])(
        on_npu(boxes), on_npu(boxes), trans=True, is_cross=False, mode=0
    )
    torch.testing.assert_close(got.cpu(), torch.ones_like(got.cpu()), rtol=0, atol=1e-6)


def test_giou_is_n_by_1_and_takes_only_what_the_npu_differentiates():
    boxes, truth = on_npu(columns(9, 8)), on_npu(columns(9, 9))
    assert torch_npu.npu_giou(boxes, truth, True, False, 0).shape == (9, 1)
    for bad in (dict(trans=False), dict(is_cross=True), dict(mode=1)):
        args = {**dict(trans=True, is_cross=False, mode=0), **bad}
        with pytest.raises(
            RuntimeError,
            match=r"giou backward only support trans==True, "
            r"is_cross==False, mode==0\('iou'\)",
        ):
            torch_npu.npu_giou(boxes, truth, **args)


def test_ciou_caps_ratios_and_keeps_empty_boxes_finite():
    # Box 0 is 20000 wide and 1 high around the centre of a 2x2 ground truth: its w/h ratio is
    # capped at 10000 (its atan moves by 5e-5 from the uncapped one's). Box 1 is empty: finite.
    boxes = torch.tensor([[0.0, 5.0], [0.0, 5.0], [20000.0, 0.0], [1.0, 0.0]])
    truth = torch.tensor([[0.0, 5.0], [0.0, 5.0], [2.0, 2.0], [2.0, 2.0]])
    got = torch_npu.npu_ciou(on_npu(boxes), on_npu(truth), True, False, 0).cpu()
    assert torch.isfinite(got).all()
    iou = 2 / 20002  # the truth's 2x1 middle; the centres coincide (no distance term)
    v = 4 / math.pi**2 * (math.atan(1.0) - math.atan(10000.0)) ** 2
    assert abs(float(got[0, 0]) - (iou - v * v / (v - iou + 1))) <= 2e-6


@pytest.mark.parametrize("kind", sorted(OPS))
def test_backward_operators_give_the_autograd_gradients(kind):
    boxes, truth = columns(12, 10), columns(12, 11)
    grad = torch.randn(12, generator=torch.Generator().manual_seed(12))
    grad = grad[:, None] if kind == "giou" else grad[None, :]
    op = getattr(torch_npu, f"npu_{kind}_backward")
    args = (on_npu(grad), on_npu(boxes), on_npu(truth))
    if kind == "ciou":
        args += (None,)
    db, dg = op(*args, True, False, 0)
    leaves = [boxes.double().requires_grad_(), truth.double().requires_grad_()]
    want = torch.autograd.grad(formula(kind, *leaves), leaves, grad.double())
    torch.testing.assert_close(db.cpu(), want[0].float(), **FP32)
    torch.testing.assert_close(dg.cpu(), want[1].float(), **FP32)


def test_ciou_backward_reads_the_forwards_atan_difference():
    boxes, truth = columns(5, 13), columns(5, 14)
    grad = on_npu(torch.ones(1, 5))
    b, g = on_npu(boxes), on_npu(truth)
    plain = torch_npu.npu_ciou_backward(grad, b, g, None, True, False, 0)
    p, t = corners(boxes.double(), True), corners(truth.double(), True)
    sub = torch.atan((t[2] - t[0]) / (t[3] - t[1])) - torch.atan((p[2] - p[0]) / (p[3] - p[1]))
    same = torch_npu.npu_ciou_backward(grad, b, g, on_npu(sub.float()[None]), True, False, 0)
    for x, y in zip(plain, same):
        torch.testing.assert_close(x.cpu(), y.cpu(), **FP32)
    # A zero difference takes v (and its slope) away: DIoU's gradient remains.
    flat = torch_npu.npu_ciou_backward(grad, b, g, on_npu(torch.zeros(1, 5)), True, False, 0)
    diou = torch_npu.npu_diou_backward(grad, b, g, True, False, 0)
    for x, y in zip(flat, diou):
        torch.testing.assert_close(x.cpu(), y.cpu(), **FP32)


@pytest.mark.parametrize("kind", ["diou", "ciou"])
def test_backward_of_an_undifferentiated_setting_raises(kind):
    boxes = on_npu(columns(4, 15), grad=True)
    out = getattr(torch_npu, OPS[kind])(
        boxes, on_npu(columns(4, 16)), trans=True, is_cross=True, mode=0
    )
    with pytest.raises(RuntimeError, match="only support trans==True, is_cross==False"):
        out.sum().backward()


def test_shapes_are_checked():
    with pytest.raises(RuntimeError, match=r"\(4, n\) boxes"):
        torch_npu.npu_diou(on_npu(torch.zeros(5, 4)), on_npu(torch.zeros(5, 4)))
    with pytest.raises(RuntimeError, match="as many boxes"):
        torch_npu.npu_diou(on_npu(torch.zeros(4, 5)), on_npu(torch.zeros(4, 3)))


def test_fp16_boxes_give_fp16():
    got = torch_npu.npu_ciou(
        on_npu(columns(8, 17), torch.float16), on_npu(columns(8, 18), torch.float16), True, False, 0
    )
    assert got.dtype == torch.float16 and got.shape == (1, 8)
