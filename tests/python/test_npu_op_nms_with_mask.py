"""torch_npu.npu_nms_with_mask: op-plugin's example, NMS in input order with the score unread
(as CANN's NMSWithMask on Ascend), the kernel's strict comparison, a plain greedy reference on
random boxes, fp16, errors, and the call of Ascend's detectron2 ports."""

import pytest
import torch

from overlay_support.npu_op_checks import check_no_derivative, on_npu, torch_npu


def _run(rows, threshold, dtype=torch.float32):
    boxes, idx, mask = torch_npu.npu_nms_with_mask(on_npu(torch.tensor(rows), dtype), threshold)
    assert boxes.device.type == idx.device.type == mask.device.type == "npu"
    assert idx.dtype == torch.int32 and mask.dtype == torch.uint8
    return boxes.cpu(), idx.cpu(), mask.cpu()


def test_op_plugin_example():
    rows = [[0.0, 1.0, 2.0, 3.0, 0.6], [6.0, 7.0, 8.0, 9.0, 0.4]]
    boxes, idx, mask = _run(rows, 0.5)
    assert torch.equal(boxes, torch.tensor(rows))
    assert idx.tolist() == [0, 1] and mask.tolist() == [1, 1]


def test_boxes_are_taken_in_input_order_whatever_their_scores():
    a = [0.0, 0.0, 10.0, 10.0]
    b = [1.0, 1.0, 11.0, 11.0]  # IoU with a: 81 / 119 = 0.68
    c = [4.0, 4.0, 14.0, 14.0]  # IoU with b: 49 / 151 = 0.32, with a: 36 / 164 = 0.22
    # The low-scoring a comes first and so suppresses b; c overlaps only b, which is gone.
    _, idx, mask = _run([a + [0.1], b + [0.9], c + [0.5]], 0.3)
    assert idx.tolist() == [0, 1, 2] and mask.tolist() == [1, 0, 1]
    # With b first, b is kept and suppresses both a and c.
    _, _, mask = _run([b + [0.9], a + [0.1], c + [0.5]], 0.3)
    assert mask.tolist() == [1, 0, 0]
    _, _, mask = _run([b + [0.9], a + [0.1], c + [0.5]], 0.7)
    assert mask.tolist() == [1, 1, 1]


def test_an_overlap_equal_to_the_threshold_is_kept():
    # IoU exactly 0.5 (intersection 2, areas 3 and 3): the kernel suppresses only above it.
    _, _, mask = _run([[0.0, 0.0, 3.0, 1.0, 1.0], [1.0, 0.0, 4.0, 1.0, 1.0]], 0.5)
    assert mask.tolist() == [1, 1]
    _, _, mask = _run([[0.0, 0.0, 3.0, 1.0, 1.0], [1.0, 0.0, 4.0, 1.0, 1.0]], 0.49)
    assert mask.tolist() == [1, 0]


def _greedy(rows, threshold):
    kept = []
    for i, (x1, y1, x2, y2, _) in enumerate(rows):
        keep = True
        for j in kept:
            u1, v1, u2, v2, _ = rows[j]
            inter = max(0.0, min(x2, u2) - max(x1, u1)) * max(0.0, min(y2, v2) - max(y1, v1))
            union = (x2 - x1) * (y2 - y1) + (u2 - u1) * (v2 - v1) - inter
            if inter / union > threshold:
                keep = False
                break
        if keep:
            kept.append(i)
    return [1 if i in kept else 0 for i in range(len(rows))]


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.7])
def test_random_boxes_follow_greedy_nms(threshold):
    g = torch.Generator().manual_seed(int(threshold * 10))
    corner = torch.rand(300, 2, generator=g) * 100
    size = torch.rand(300, 2, generator=g) * 30 + 1
    rows = torch.cat([corner, corner + size, torch.rand(300, 1, generator=g)], 1).tolist()
    _, idx, mask = _run(rows, threshold)
    want = _greedy(rows, threshold)
    assert idx.tolist() == list(range(300))
    assert mask.tolist() == want
    assert 50 < sum(want) < 300  # some boxes suppressed, most of them not


def test_fp16_rows_come_back_as_given():
    rows = [[0.0, 0.0, 10.0, 10.0, 0.9], [1.0, 1.0, 11.0, 11.0, 0.8], [20.0, 20, 30, 30, 0.7]]
    boxes, _, mask = _run(rows, 0.5, torch.float16)
    assert boxes.dtype == torch.float16 and torch.equal(boxes, torch.tensor(rows).half())
    assert mask.tolist() == [1, 0, 1]


def test_bad_input_and_no_gradient():
    with pytest.raises(RuntimeError, match=r"input must be \(N, 5\) rows"):
        torch_npu.npu_nms_with_mask(on_npu(torch.zeros(3, 4)), 0.5)
    with pytest.raises(RuntimeError, match=r"with N >= 1, got shape \(0, 5\)"):
        torch_npu.npu_nms_with_mask(on_npu(torch.zeros(0, 5)), 0.5)
    with pytest.raises(RuntimeError, match="must be a floating tensor"):
        torch_npu.npu_nms_with_mask(on_npu(torch.zeros(3, 5, dtype=torch.int32)), 0.5)
    rows = on_npu(torch.tensor([[0.0, 0.0, 1.0, 1.0, 1.0]]), grad=True)
    check_no_derivative("npu_nms_with_mask", rows, lambda r: torch_npu.npu_nms_with_mask(r, 0.5)[0])


def test_the_call_of_ascends_detectron2_ports():
    # detectron2/layers/nms.py (batched_nms_npu): the keep mask of boxes and scores joined.
    g = torch.Generator().manual_seed(1)
    corner = torch.rand(40, 2, generator=g) * 50
    boxes = on_npu(torch.cat([corner, corner + 20], 1))
    scores = on_npu(torch.rand(40, generator=g))
    _, _, keep_mask = torch_npu.npu_nms_with_mask(
        torch.cat([boxes.float(), scores[..., None]], 1), 0.5
    )
    kept = boxes[keep_mask.bool()]
    assert 0 < len(kept) < 40
    assert kept.device.type == "npu"
