"""torch_npu.contrib.function's npu_fast_condition_index_put (mmdetection's max-IoU assigner in
Ascend's Cascade Mask R-CNN), the deprecated contrib npu_iou (Ascend's SSD port matches boxes
with priors through it) and the deprecated npu_giou / npu_diou / npu_ciou fronts of YOLO's box
losses (against their formulas), on the emulated NPU."""

import math
import warnings

import pytest
import torch

from overlay_support.npu_op_checks import on_npu, torch_npu
from torch_npu.contrib import function as nF
from torch_npu.contrib.function.index_op import npu_fast_condition_index_put


@pytest.mark.parametrize("value", [0, 1, 7, -2.5])
def test_condition_index_put_is_boolean_assignment_without_touching_x(value):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 32, generator=g)
    condition = x < 0.5
    want = x.clone()
    want[condition] = value
    original = on_npu(x)
    got = npu_fast_condition_index_put(original, on_npu(condition), value)
    assert got.device.type == "npu" and got.dtype == torch.float32
    assert torch.equal(got.cpu(), want)
    assert torch.equal(original.cpu(), x)  # a new tensor: x itself is left as it is


def test_condition_index_put_on_assigned_indices_as_the_assigner_uses_it():
    """max_iou_assigner: -1 everywhere, 0 where the best IoU is below the negative threshold,
    then i + 1 for the boxes whose best match is ground truth i."""
    assigned = on_npu(torch.full((6,), -1, dtype=torch.long))
    max_overlaps = on_npu(torch.tensor([0.1, 0.6, 0.35, 0.2, 0.9, 0.45]))
    assigned = npu_fast_condition_index_put(assigned, (max_overlaps >= 0) & (max_overlaps < 0.4), 0)
    assigned = npu_fast_condition_index_put(
        assigned, on_npu(torch.tensor([False, True, False, False, False, False])), 2
    )
    assert assigned.dtype == torch.long
    assert assigned.cpu().tolist() == [0, 2, 0, 0, -1, -1]


def test_condition_index_put_broadcasts_promotes_and_refuses_non_bool_conditions():
    x = on_npu(torch.arange(6).reshape(2, 3))
    got = npu_fast_condition_index_put(x, on_npu(torch.tensor([True, False, True])), 0.5)
    assert got.dtype == torch.float32  # a float value on an integer x, as torch_npu's
    assert got.cpu().tolist() == [[0.5, 1, 0.5], [0.5, 4, 0.5]]
    with pytest.raises(TypeError, match=r"condition.dtype in \[torch.bool\], got torch.uint8"):
        npu_fast_condition_index_put(x, on_npu(torch.ones(3, dtype=torch.uint8)), 0)


def _boxes(n, g):
    xy = torch.rand(n, 2, generator=g) * 0.7
    return torch.cat([xy, xy + 0.05 + torch.rand(n, 2, generator=g) * 0.25], 1)


def test_contrib_iou_is_the_operator_on_scaled_boxes_one_row_per_box():
    g = torch.Generator().manual_seed(3)
    objects, priors = _boxes(5, g), _boxes(40, g)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = nF.npu_iou(on_npu(objects), on_npu(priors), is_normalized=True)
    assert any(
        issubclass(w.category, FutureWarning) and "deprecated" in str(w.message) for w in caught
    )
    assert got.shape == (5, 40) and got.device.type == "npu"
    want = torch_npu.npu_ptiou(on_npu(priors * 100), on_npu(objects * 100))
    assert torch.equal(got.cpu(), want.cpu())
    # Against the overlap written out: each side widened by 0.01 in the areas (the operator's).
    inter = (
        (
            torch.min(objects[:, None, 2:], priors[None, :, 2:])
            - torch.max(objects[:, None, :2], priors[None, :, :2])
        )
        .mul(100)
        .clamp(min=0)
        .prod(2)
    )

    def area(b: torch.Tensor) -> torch.Tensor:
        return ((b[:, 2] - b[:, 0]) * 100 + 0.01) * ((b[:, 3] - b[:, 1]) * 100 + 0.01)

    reference = inter / (area(objects)[:, None] + area(priors)[None, :] - inter)
    assert torch.allclose(got.cpu(), reference, rtol=2e-3, atol=2e-3)
    # The SSD port takes each prior's best object from it.
    assert torch.equal(got.cpu().max(0).indices, reference.max(0).indices)


def test_contrib_iou_modes_dtypes_and_refusals():
    g = torch.Generator().manual_seed(4)
    a, b = _boxes(3, g) * 100, _boxes(4, g) * 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        iou = nF.npu_iou(on_npu(a.half()), on_npu(b.half()), mode="iou")
        assert iou.dtype == torch.float32  # both sides taken as fp32
        assert torch.equal(iou.cpu(), torch_npu.npu_iou(on_npu(b), on_npu(a)).cpu())
        assert nF.npu_ptiou is nF.npu_iou
        with pytest.raises(ValueError, match=r"Expected mode in \[iou, ptiou\], got 'giou'"):
            nF.npu_iou(on_npu(a), on_npu(b), mode="giou")


def test_contrib_names_its_functions_and_modules_itself():
    import torch_npu.contrib as contrib

    assert contrib.npu_fast_condition_index_put is npu_fast_condition_index_put
    assert contrib.npu_iou is nF.npu_iou and contrib.ROIAlign is contrib.module.ROIAlign
    for name in contrib.__all__:  # `from torch_npu.contrib import *` finds every name
        assert getattr(contrib, name) is not None, name
    for name in (
        "npu_giou",
        "npu_diou",
        "npu_ciou",
        "fuse_add_softmax_dropout",
        "npu_fused_attention",
        "npu_fused_attention_with_layernorm",
    ):
        assert getattr(contrib, name) is getattr(nF, name), name


def _xywh_terms(boxes, truth):
    """Corners, IoU and the enclosing box of paired (4, n) xywh boxes, written out."""

    def corners(b):
        return b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2

    (ax1, ay1, ax2, ay2), (bx1, by1, bx2, by2) = corners(boxes), corners(truth)
    inter = (torch.min(ax2, bx2) - torch.max(ax1, bx1)).clamp(min=0) * (
        torch.min(ay2, by2) - torch.max(ay1, by1)
    ).clamp(min=0)
    union = boxes[2] * boxes[3] + truth[2] * truth[3] - inter
    cw, ch = torch.max(ax2, bx2) - torch.min(ax1, bx1), torch.max(ay2, by2) - torch.min(ay1, by1)
    return inter / union, union, cw, ch


def _xywh_pairs(n, seed):
    g = torch.Generator().manual_seed(seed)
    centres, sizes = torch.rand(2, n, generator=g) * 10, torch.rand(2, n, generator=g) * 6 + 1
    return torch.cat([centres, sizes])


def test_contrib_giou_takes_rows_of_boxes_and_gives_one_column():
    boxes, truth = _xywh_pairs(7, 5), _xywh_pairs(7, 6)
    iou, union, cw, ch = _xywh_terms(boxes, truth)
    want = (iou - (cw * ch - union) / (cw * ch))[:, None]
    rows = on_npu(boxes.t().contiguous(), grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = nF.npu_giou(rows, on_npu(truth.t().contiguous()))
    assert any("torch_npu.contrib.npu_giou is deprecated" in str(w.message) for w in caught)
    assert got.shape == (7, 1) and got.device.type == "npu"
    torch.testing.assert_close(got.detach().cpu(), want, rtol=1e-5, atol=1e-5)
    got.sum().backward()
    assert rows.grad.shape == (7, 4) and rows.grad.abs().sum() > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        columns = nF.npu_giou(on_npu(boxes), on_npu(truth), is_permuted=False)
        torch.testing.assert_close(columns.cpu(), want, rtol=1e-5, atol=1e-5)
        halves = nF.npu_giou(on_npu(boxes.t().half()), on_npu(truth.t().half()))
        assert halves.dtype == torch.float32  # taken as fp32, as torch_npu's front does
        with pytest.raises(ValueError, match="boxes1.shape == boxes2.shape"):
            nF.npu_giou(on_npu(boxes.t()), on_npu(truth.t()[:3]))


def test_contrib_diou_and_ciou_are_the_operators_on_columns_of_boxes():
    boxes, truth = _xywh_pairs(9, 7), _xywh_pairs(9, 8)
    iou, _, cw, ch = _xywh_terms(boxes, truth)
    rho2 = (boxes[0] - truth[0]) ** 2 + (boxes[1] - truth[1]) ** 2
    diou = iou - rho2 / (cw**2 + ch**2)
    v = 4 / math.pi**2 * (torch.atan(truth[2] / truth[3]) - torch.atan(boxes[2] / boxes[3])) ** 2
    ciou = diou - v / (v - iou + 1) * v
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        leaf = on_npu(boxes, grad=True)
        got_diou = nF.npu_diou(leaf, on_npu(truth))
        got_ciou = nF.npu_ciou(on_npu(boxes), on_npu(truth))
    texts = [str(w.message) for w in caught]
    assert any("contrib.function.npu_diou is deprecated" in t for t in texts), texts
    assert any("contrib.function.npu_ciou is deprecated" in t for t in texts), texts
    assert got_diou.shape == got_ciou.shape == (1, 9)
    torch.testing.assert_close(got_diou.detach().cpu(), diou[None], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got_ciou.cpu(), ciou[None], rtol=1e-5, atol=1e-5)
    got_diou.sum().backward()
    assert leaf.grad.shape == (4, 9) and leaf.grad.abs().sum() > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        crossed = nF.npu_diou(on_npu(boxes), on_npu(truth[:, :4]), True, True, 0)
    assert torch.equal(
        crossed.cpu(), torch_npu.npu_diou(on_npu(boxes), on_npu(truth[:, :4]), True, True).cpu()
    )
