"""torch_npu.npu_iou / npu_ptiou against op-plugin's expected values for Ascend 910 and 910B
(within the relative 1e-3 its test allows: the NPU rounds each fp16 step, the emulator once) and
against the formula (areas widened by eps = 0.01, the intersection not) on random boxes."""

import pytest
import torch

from overlay_support.npu_op_checks import check_no_derivative, on_npu, torch_npu

BOXES = torch.tensor([[0, 0, 10, 10], [10, 10, 20, 20], [32, 32, 38, 42]])
TRUTH = torch.tensor([[0, 0, 10, 20], [0, 10, 10, 10], [10, 10, 20, 20]])


@pytest.mark.parametrize("name", ["npu_iou", "npu_ptiou"])
def test_op_plugin_examples(name):
    # op-plugin's test_iou.py, fp16 boxes on Ascend 910A/910B.
    op = getattr(torch_npu, name)
    boxes, truth = on_npu(BOXES.half()), on_npu(TRUTH.half())
    iou = torch.tensor([[0.4985, 0, 0], [0, 0, 0], [0, 0.9961, 0]], dtype=torch.float16)
    iof = torch.tensor([[0.4990, 0, 0], [0, 0, 0], [0, 0.9980, 0]], dtype=torch.float16)
    for mode, want in ((0, iou), (1, iof)):
        got = op(boxes, truth, mode)
        assert got.dtype == torch.float16 and got.device == torch.device("npu:0")
        assert torch.allclose(got.cpu().float(), want.float(), rtol=1e-3, atol=0), (mode, got)
    small = on_npu(
        torch.tensor(
            [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]], dtype=torch.float16
        )
    )
    got = op(small, small[:2], 0)
    assert got.shape == (2, 4)
    assert torch.allclose(
        got.cpu().float(), torch.tensor([[0.9805, 0, 0, 0], [0, 0.9805, 0, 0]]), rtol=1e-3, atol=0
    )
    assert torch.allclose(
        op(small, small[:2], 1).cpu().float(),
        torch.tensor([[0.9902, 0, 0, 0], [0, 0.9902, 0, 0]]),
        rtol=1e-3,
        atol=0,
    )


def _reference(boxes, truth, mode):
    b, t = boxes.half().double(), truth.half().double()
    out = torch.zeros(len(t), len(b), dtype=torch.float64)
    for i in range(len(t)):
        for j in range(len(b)):
            w = max(0.0, min(b[j, 2], t[i, 2]) - max(b[j, 0], t[i, 0]))
            h = max(0.0, min(b[j, 3], t[i, 3]) - max(b[j, 1], t[i, 1]))
            area_b = (b[j, 2] - b[j, 0] + 0.01) * (b[j, 3] - b[j, 1] + 0.01)
            area_t = (t[i, 2] - t[i, 0] + 0.01) * (t[i, 3] - t[i, 1] + 0.01)
            out[i, j] = w * h / (area_b + area_t - w * h if mode == 0 else area_t)
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("mode", [0, 1])
def test_random_boxes_follow_the_formula(dtype, mode):
    g = torch.Generator().manual_seed(3)
    corner = torch.rand(7, 2, generator=g) * 50
    boxes = torch.cat([corner, corner + torch.rand(7, 2, generator=g) * 30], 1)
    corner = torch.rand(5, 2, generator=g) * 50
    truth = torch.cat([corner, corner + torch.rand(5, 2, generator=g) * 30], 1)
    got = torch_npu.npu_iou(on_npu(boxes.to(dtype)), on_npu(truth.to(dtype)), mode)
    assert got.dtype == dtype and got.shape == (5, 7)
    want = _reference(boxes, truth, mode)
    # One fp16 rounding of the fp32 value: within half an fp16 ulp (2^-12 below 1) plus fp32's.
    assert torch.allclose(got.cpu().double(), want, rtol=0, atol=2.0**-12 + 1e-6)
    assert (want > 0).sum() >= 5  # the boxes overlap, so the check is not all zeros


def test_bad_boxes_and_modes_are_refused():
    boxes = on_npu(BOXES.float())
    with pytest.raises(RuntimeError, match=r"gtboxes must be \(N, 4\) boxes"):
        torch_npu.npu_iou(boxes, boxes[:, :3])
    with pytest.raises(RuntimeError, match="mode must be 0"):
        torch_npu.npu_iou(boxes, boxes, 2)
    assert torch.npu_ptiou is torch_npu.npu_ptiou  # old scripts call it on torch


def test_no_gradient_as_torch_npu_defines_none():
    boxes = on_npu(BOXES.float(), grad=True)
    check_no_derivative("npu_iou", boxes, lambda b: torch_npu.npu_iou(b, b.detach()))
