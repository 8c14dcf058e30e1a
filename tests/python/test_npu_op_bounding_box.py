"""torch_npu.npu_bounding_box_encode / decode against op-plugin's expected values (within the
relative 1e-3 its tests allow) and against mmdetection's legacy bbox2delta / delta2bbox written
here in float64, which they must invert."""

import math

import pytest
import torch

from overlay_support.npu_op_checks import check_no_derivative, on_npu, torch_npu
from torch_npu._fp16 import overflow_mode

ANCHORS = torch.tensor([[1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0]])
TRUTH = torch.tensor([[5.0, 6.0, 7.0, 8.0], [7.0, 8.0, 9.0, 6.0]])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("inf_nan", [False, True])
def test_encode_gives_op_plugins_values_for_either_npu(dtype, inf_nan):
    # op-plugin's test_bounding_box_encode.py: Ascend 910A, then 910B (a negative ratio's log).
    last = float("nan") if inf_nan else -5.4922
    want = torch.tensor([[13.3281, 13.3281, 0.0, 0.0], [13.3281, 6.6641, 0.0, last]])
    previous = overflow_mode.select(inf_nan)
    try:
        got = torch_npu.npu_bounding_box_encode(
            on_npu(ANCHORS, dtype), on_npu(TRUTH, dtype), 0, 0, 0, 0, 0.1, 0.1, 0.2, 0.2
        )
        assert got.dtype == dtype and got.device == torch.device("npu:0")
        # Read in the mode it was made in: a saturating NPU's copy stores NaN as 0.
        got = got.cpu().float()
    finally:
        overflow_mode.select(previous)
    assert torch.allclose(got, want, rtol=1e-3, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_decode_gives_op_plugins_values(dtype):
    got = torch_npu.npu_bounding_box_decode(
        on_npu(ANCHORS, dtype), on_npu(TRUTH, dtype), 0, 0, 0, 0, 1, 1, 1, 1, (10, 10), 0.1
    )
    want = torch.tensor([[2.5, 6.5, 9.0, 9.0], [9.0, 9.0, 9.0, 9.0]])
    assert got.dtype == dtype and torch.equal(got.cpu().float(), want)


def _boxes(g, n):
    corner = torch.rand(n, 2, generator=g, dtype=torch.float64) * 40
    size = 1 + torch.rand(n, 2, generator=g, dtype=torch.float64) * 30
    return torch.cat([corner, corner + size], 1)


def _bbox2delta(anchors, truth, means, stds):
    def centres(b):
        return (
            (b[:, 0] + b[:, 2]) / 2,
            (b[:, 1] + b[:, 3]) / 2,
            b[:, 2] - b[:, 0] + 1,
            b[:, 3] - b[:, 1] + 1,
        )

    px, py, pw, ph = centres(anchors)
    gx, gy, gw, gh = centres(truth)
    d = torch.stack([(gx - px) / pw, (gy - py) / ph, torch.log(gw / pw), torch.log(gh / ph)], 1)
    return (d - torch.tensor(means, dtype=d.dtype)) / torch.tensor(stds, dtype=d.dtype)


def test_encode_follows_bbox2delta_and_decode_inverts_it():
    g = torch.Generator().manual_seed(5)
    anchors, truth = _boxes(g, 16), _boxes(g, 16)
    means, stds = (0.1, -0.2, 0.05, 0.0), (0.1, 0.1, 0.2, 0.2)
    deltas = torch_npu.npu_bounding_box_encode(
        on_npu(anchors.float()), on_npu(truth.float()), *means, *stds
    )
    # Encode's steps are fp16's (below): centres of boxes up to 70 are 1/32 apart, a step the
    # offsets carry, over stds of 0.1.
    want = _bbox2delta(anchors.double(), truth.double(), means, stds)
    assert torch.allclose(deltas.cpu().double(), want, rtol=4e-3, atol=0.1)
    back = torch_npu.npu_bounding_box_decode(
        on_npu(anchors.float()), deltas, *means, *stds, (1000, 1000), 16 / 1000
    )
    assert torch.allclose(back.cpu().double(), truth.float().double(), rtol=0, atol=0.1)


def test_encode_computes_in_fp16_on_fp32_boxes():
    """torch_npu's contrib test of its box coder (test_bbox_coder.py), fp32 boxes: an Ascend
    910A's deltas of six random pairs are the fp16 steps' to the 4 digits printed (fp32
    arithmetic is up to 1.7e-3 off), and a 910B gives 4/3 as fp16's 1.3330."""
    anchors = torch.tensor(
        [
            [510, 365, 382, 322],
            [476, 98, 230, 17],
            [83, 106, 123, 57],
            [214, 225, 96, 113],
            [126, 47, 73, 32],
            [430, 224, 111, 409],
        ],
        dtype=torch.float32,
    )
    truth = torch.tensor(
        [
            [339, 334, 253, 420],
            [96, 208, 68, 305],
            [311, 451, 2, 340],
            [39, 322, 84, 47],
            [504, 445, 176, 135],
            [361, 99, 380, 348],
        ],
        dtype=torch.float32,
    )
    want = torch.tensor(
        [
            [1.1807, -0.7979, -0.4014, 0.7285],
            [1.1064, -2.4883, -2.2051, 0.2026],
            [1.3047, -6.5430, 2.0156, 0.8291],
            [0.7993, -0.1396, -0.9336, 0.9038],
            [-4.6250, -17.8906, 1.8389, 3.0938],
            [-0.3145, -0.5000, -2.7676, 0.2954],
        ]
    )
    previous = overflow_mode.select(False)  # the 910A's saturation mode: |ratio|'s log
    try:
        got = torch_npu.npu_bounding_box_encode(
            on_npu(anchors), on_npu(truth), 0, 0, 0, 0, 1, 1, 1, 1
        ).cpu()
    finally:
        overflow_mode.select(previous)
    assert got.dtype == torch.float32
    assert torch.allclose(got, want, rtol=1e-4, atol=1e-4)
    third = torch_npu.npu_bounding_box_encode(
        on_npu(ANCHORS), on_npu(TRUTH), 0, 0, 0, 0, 1, 1, 1, 1
    ).cpu()[0, 0]
    assert third.item() == torch.tensor(4.0 / 3.0).half().item()


def test_decode_clips_the_size_and_the_image():
    rois = on_npu(torch.tensor([[10.0, 20.0, 29.0, 59.0]]))  # 20 wide, 40 high
    deltas = on_npu(torch.tensor([[0.0, 0.0, 5.0, -5.0]]))
    ratio = 0.5  # sizes change by at most a factor of 2
    got = torch_npu.npu_bounding_box_decode(
        rois, deltas, 0, 0, 0, 0, 1, 1, 1, 1, (60, 30), ratio
    ).cpu()
    # Centre (19.5, 39.5); width 40, height 20; x clipped to [0, 29], y to [0, 59].
    assert torch.allclose(got, torch.tensor([[0.0, 30.0, 29.0, 49.0]]), atol=1e-4)
    assert math.isclose(abs(math.log(ratio)), math.log(2.0))


def test_bad_shapes_and_no_gradient():
    with pytest.raises(RuntimeError, match=r"ground_truth_box must be \(N, 4\) boxes"):
        torch_npu.npu_bounding_box_encode(
            on_npu(ANCHORS), on_npu(TRUTH[:, :2]), 0, 0, 0, 0, 1, 1, 1, 1
        )
    with pytest.raises(RuntimeError, match="rois has 2 boxes, deltas 1"):
        torch_npu.npu_bounding_box_decode(
            on_npu(ANCHORS), on_npu(TRUTH[:1]), 0, 0, 0, 0, 1, 1, 1, 1, (9, 9), 0.1
        )
    with pytest.raises(RuntimeError, match="max_shape must be"):
        torch_npu.npu_bounding_box_decode(
            on_npu(ANCHORS), on_npu(TRUTH), 0, 0, 0, 0, 1, 1, 1, 1, (9,), 0.1
        )
    check_no_derivative(
        "npu_bounding_box_encode",
        on_npu(ANCHORS, grad=True),
        lambda a: torch_npu.npu_bounding_box_encode(a, on_npu(TRUTH), 0, 0, 0, 0, 1, 1, 1, 1),
    )


def _yolo_targets(anchors, truth, stride):
    """mmdetection's YOLOBBoxCoder.encode, in float64."""
    eps = 1e-6
    a, t = anchors.double(), truth.double()
    s = stride.double()
    ax, ay = (a[:, 0] + a[:, 2]) / 2, (a[:, 1] + a[:, 3]) / 2
    tx, ty = (t[:, 0] + t[:, 2]) / 2, (t[:, 1] + t[:, 3]) / 2
    aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
    tw, th = t[:, 2] - t[:, 0], t[:, 3] - t[:, 1]
    return torch.stack(
        [
            ((tx - ax) / s + 0.5).clamp(eps, 1 - eps),
            ((ty - ay) / s + 0.5).clamp(eps, 1 - eps),
            torch.log((tw / aw).clamp(min=eps)),
            torch.log((th / ah).clamp(min=eps)),
        ],
        1,
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_yolo_encode_is_mmdetections_yolo_bbox_coder(dtype):
    g = torch.Generator().manual_seed(11)
    anchors, truth = _boxes(g, 32).to(dtype), _boxes(g, 32).to(dtype)
    truth[3] = torch.tensor([30.0, 30.0, 10.0, 10.0])  # upside down: a clamped log
    stride = torch.randint(4, 33, (32,), generator=g, dtype=torch.int32)
    got = torch_npu.npu_yolo_boxes_encode(on_npu(anchors), on_npu(truth), on_npu(stride))
    assert got.dtype == dtype and got.device.type == "npu" and got.shape == (32, 4)
    want = _yolo_targets(anchors, truth, stride)
    tol = 1e-6 if dtype == torch.float32 else 1e-3
    assert torch.allclose(got.cpu().double(), want, rtol=tol, atol=tol)
    assert got[3, 2].item() == pytest.approx(math.log(1e-6), rel=tol)
    # Offsets are clamped into (0, 1) (fp16 rounds 1 - 1e-6 to 1): centres off the anchor's cell.
    offsets = got[:, :2].cpu().float()
    assert 0 < offsets.min() and offsets.max() <= 1 and (offsets == offsets.max()).sum() > 1
    keyword = torch_npu.npu_yolo_boxes_encode(
        input=on_npu(anchors),
        gt_bboxes=on_npu(truth),
        stride=on_npu(stride),
        performance_mode=True,
    )
    assert torch.equal(keyword.cpu(), got.cpu())


def test_yolo_encode_refuses_what_the_npu_refuses():
    stride = on_npu(torch.tensor([8, 8], dtype=torch.int32))
    with pytest.raises(RuntimeError, match=r"gt_bboxes must be \(N, 4\) boxes"):
        torch_npu.npu_yolo_boxes_encode(on_npu(ANCHORS), on_npu(TRUTH[:, :3]), stride)
    with pytest.raises(RuntimeError, match="stride must be int32"):
        torch_npu.npu_yolo_boxes_encode(on_npu(ANCHORS), on_npu(TRUTH), stride.long())
    with pytest.raises(RuntimeError, match="the same N"):
        torch_npu.npu_yolo_boxes_encode(on_npu(ANCHORS), on_npu(TRUTH), stride[:1])
    with pytest.raises(RuntimeError, match="floats of one dtype"):
        torch_npu.npu_yolo_boxes_encode(on_npu(ANCHORS), on_npu(TRUTH).half(), stride)
    with pytest.raises(RuntimeError, match="at most 20480"):
        many = on_npu(torch.zeros(20481, 4))
        torch_npu.npu_yolo_boxes_encode(many, many, on_npu(torch.ones(20481, dtype=torch.int32)))
    check_no_derivative(
        "npu_yolo_boxes_encode",
        on_npu(ANCHORS, grad=True),
        lambda a: torch_npu.npu_yolo_boxes_encode(a, on_npu(TRUTH), stride),
    )
