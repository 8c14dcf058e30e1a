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


def _responsible_flags(featmap_size, gt_bboxes, stride, num_base_anchors):
    """mmdetection's YOLOAnchorGenerator.single_level_responsible_flags, on the host."""
    feat_h, feat_w = featmap_size
    cx = (gt_bboxes[:, 0] + gt_bboxes[:, 2]) * 0.5
    cy = (gt_bboxes[:, 1] + gt_bboxes[:, 3]) * 0.5
    index = torch.floor(cy / stride[1]).long() * feat_w + torch.floor(cx / stride[0]).long()
    grid = torch.zeros(feat_h * feat_w, dtype=torch.uint8)
    grid[index] = 1
    return grid[:, None].expand(feat_h * feat_w, num_base_anchors).reshape(-1)


@pytest.mark.parametrize("dtype", [torch.int64, torch.float32, torch.float16])
def test_single_level_responsible_flags_is_mmdetections(dtype):
    g = torch.Generator().manual_seed(3)
    gt = torch.randint(0, 100, (64, 4), generator=g).to(dtype)
    for size, stride in (([10, 10], [32, 32]), ([20, 20], [16, 16]), ([7, 13], [8, 16])):
        got = nF.npu_single_level_responsible_flags(size, on_npu(gt), stride, 3)
        assert got.device.type == "npu" and got.dtype == torch.uint8
        assert torch.equal(got.cpu(), _responsible_flags(size, gt.float(), stride, 3))


def _scores_and_boxes(batch, seed):
    g = torch.Generator().manual_seed(seed)
    corner = torch.rand(batch, 40, 1, 2, generator=g) * 50
    boxes = torch.cat([corner, corner + 5 + torch.rand(batch, 40, 1, 2, generator=g) * 20], -1)
    return boxes.expand(batch, 40, 3, 4).contiguous(), torch.randn(batch, 40, 4, generator=g)


def test_multiclass_nms_is_one_batch_nms_without_the_background_column():
    boxes, scores = _scores_and_boxes(2, 8)
    factors = torch.rand(2, 40, generator=torch.Generator().manual_seed(9)) + 0.5
    for factor in (None, factors):
        kept = scores[..., :3] if factor is None else scores[..., :3] * factor[..., None]
        want = torch_npu.npu_batch_nms(on_npu(boxes).half(), on_npu(kept).half(), 0.3, 0.5, 5, 5)
        dets, labels = nF.npu_batched_multiclass_nms(
            on_npu(boxes),
            on_npu(scores),
            score_thr=0.3,
            nms_thr=0.5,
            max_num=5,
            score_factors=None if factor is None else on_npu(factor),
        )
        assert dets.shape == (2, 5, 5) and labels.shape == (2, 5) and dets.dtype == torch.half
        assert torch.equal(dets[..., :4].cpu(), want[0].cpu())
        assert torch.equal(dets[..., 4].cpu(), want[1].cpu())
        assert torch.equal(labels.cpu(), want[2].cpu())
        one, one_labels = nF.npu_multiclass_nms(
            on_npu(boxes[1]),
            on_npu(scores[1]),
            score_thr=0.3,
            nms_thr=0.5,
            max_num=5,
            score_factors=None if factor is None else on_npu(factor[1]),
        )
        assert torch.equal(one.cpu(), dets[1].cpu())
        assert torch.equal(one_labels.cpu(), labels[1].cpu())
    # A box shared by the classes, (n, 4), is the same as the box repeated per class.
    shared, _ = nF.npu_multiclass_nms(on_npu(boxes[0, :, 0]), on_npu(scores[0]), 0.3, 0.5, 5)
    per_class, _ = nF.npu_multiclass_nms(on_npu(boxes[0]), on_npu(scores[0]), 0.3, 0.5, 5)
    assert torch.equal(shared.cpu(), per_class.cpu())


def test_bbox_coders_are_the_box_operators():
    g = torch.Generator().manual_seed(4)
    bboxes = torch.randint(0, 512, (6, 4), generator=g)
    gt = torch.randint(0, 512, (6, 4), generator=g)
    stride = torch.randint(1, 32, (6,), generator=g)
    yolo = nF.npu_bbox_coder_encode_yolo(on_npu(bboxes), on_npu(gt), on_npu(stride))
    want = torch_npu.npu_yolo_boxes_encode(
        on_npu(bboxes.float()), on_npu(gt.float()), on_npu(stride.int())
    )
    assert torch.equal(yolo.cpu(), want.cpu())
    means, stds = [0.1, 0.0, -0.1, 0.2], [0.1, 0.1, 0.2, 0.2]
    plain = nF.npu_bbox_coder_encode_xyxy2xywh(on_npu(bboxes), on_npu(gt), means, stds)
    want = torch_npu.npu_bounding_box_encode(
        on_npu(bboxes.float()), on_npu(gt.float()), *means, *stds
    )
    assert plain.dtype == torch.float32 and torch.equal(plain.cpu(), want.cpu())
    scaled = nF.npu_bbox_coder_encode_xyxy2xywh(
        on_npu(bboxes / 512.0), on_npu(gt / 512.0), means, stds, True, 512.0
    )
    assert torch.equal(scaled.cpu(), want.cpu())
    deltas = torch.randn(6, 4, generator=g)
    decoded = nF.npu_bbox_coder_decode_xywh2xyxy(
        on_npu(bboxes), on_npu(deltas), means, stds, max_shape=(300, 400)
    )
    want = torch_npu.npu_bounding_box_decode(
        on_npu(bboxes.float()), on_npu(deltas), *means, *stds, [300, 400], 16 / 1000
    )
    assert torch.equal(decoded.cpu(), want.cpu())
    unclipped = nF.npu_bbox_coder_decode_xywh2xyxy(on_npu(bboxes), on_npu(deltas))
    assert float(unclipped.cpu().max()) > 400  # 9999 by default
    with pytest.raises(ValueError, match=r"bboxes.size\(0\) == gt_bboxes.size\(0\)"):
        nF.npu_bbox_coder_encode_yolo(on_npu(bboxes), on_npu(gt[:2]), on_npu(stride))
    with pytest.raises(ValueError, match=r"size\(-1\) == 4"):
        nF.npu_bbox_coder_decode_xywh2xyxy(on_npu(bboxes), on_npu(deltas[:, :2]))


def test_roll_is_swins_cyclic_shift_of_rows_and_columns():
    x = torch.randn(2, 7, 6, 3, generator=torch.Generator().manual_seed(6))
    leaf = on_npu(x, grad=True)
    got = nF.roll(leaf, shifts=(-3, -3), dims=(1, 2))
    assert got.device.type == "npu"
    assert torch.equal(got.detach().cpu(), torch.roll(x, shifts=(-3, -3), dims=(1, 2)))
    grad = torch.randn(2, 7, 6, 3, generator=torch.Generator().manual_seed(7))
    got.backward(on_npu(grad))
    assert torch.equal(leaf.grad.cpu(), torch.roll(grad, shifts=(3, 3), dims=(1, 2)))
    # Ascend's function rolls H and W whatever dims names.
    other = nF.roll(on_npu(x), shifts=(1, 2), dims=(2, 3)).cpu()
    assert torch.equal(other, torch.roll(x, shifts=(1, 2), dims=(1, 2)))
    with pytest.raises(ValueError, match=r"x.dim\(\) == 4"):
        nF.roll(on_npu(x[0]), shifts=(1, 1), dims=(1, 2))
    with pytest.raises(ValueError, match=r"len\(shifts\) == 2"):
        nF.roll(on_npu(x), shifts=(1,), dims=(1, 2))
