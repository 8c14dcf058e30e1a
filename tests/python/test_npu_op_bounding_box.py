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
    want = _bbox2delta(anchors.float().double(), truth.float().double(), means, stds)
    assert torch.allclose(deltas.cpu().double(), want, rtol=1e-5, atol=1e-5)
    back = torch_npu.npu_bounding_box_decode(
        on_npu(anchors.float()), deltas, *means, *stds, (1000, 1000), 16 / 1000
    )
    assert torch.allclose(back.cpu().double(), truth.float().double(), rtol=0, atol=1e-3)


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
