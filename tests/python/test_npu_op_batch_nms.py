"""torch_npu.npu_batch_nms: a hand-made image whose answer is worked out below, and random
images against a plain-Python reference of per-class greedy NMS then the best of all classes."""

import random

import pytest
import torch

from overlay_support.npu_op_checks import check_no_derivative, on_npu, torch_npu

A, B, C = [0.0, 0.0, 10.0, 10.0], [1.0, 1.0, 11.0, 11.0], [20.0, 20.0, 30.0, 30.0]


def _one_image(dtype=torch.float32):
    boxes = torch.tensor([[A], [B], [C]]).unsqueeze(0)  # (1, 3, 1, 4): shared by the classes
    scores = torch.tensor([[[0.9, 0.2], [0.8, 0.85], [0.7, 0.1]]])  # (1, 3, 2)
    return on_npu(boxes, dtype), on_npu(scores, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_worked_example(dtype):
    # Class 0: A (0.9) kept; B overlaps A by 81/119 > 0.5, suppressed; C (0.7) kept.
    # Class 1: A (0.2) and C (0.1) are under the 0.3 threshold; B (0.85) kept.
    boxes, scores = _one_image(dtype)
    out = torch_npu.npu_batch_nms(boxes, scores, 0.3, 0.5, 3, 4)
    out_boxes, out_scores, out_classes, num = out
    assert [t.shape for t in (out_boxes, out_scores, out_classes, num)] == [
        (1, 4, 4),
        (1, 4),
        (1, 4),
        (1,),
    ]
    assert [t.dtype for t in out] == [dtype] * 3 + [torch.int32]
    assert all(t.device == torch.device("npu:0") for t in out)
    assert num.tolist() == [3]
    assert out_boxes[0].cpu().float().tolist() == [A, B, C, [0.0] * 4]
    assert torch.equal(out_scores.cpu(), torch.tensor([[0.9, 0.85, 0.7, 0.0]]).to(dtype))
    assert out_classes.cpu().float().tolist() == [[0.0, 1.0, 0.0, 0.0]]
    # At most one per class, then at most two in all.
    _, s, c, n = torch_npu.npu_batch_nms(boxes, scores, 0.3, 0.5, 1, 4)
    assert n.tolist() == [2] and c.cpu().float().tolist() == [[0.0, 1.0, 0.0, 0.0]]
    b, s, c, n = torch_npu.npu_batch_nms(boxes, scores, 0.3, 0.5, 3, 2)
    assert n.tolist() == [2] and b[0].cpu().float().tolist() == [A, B]
    # A looser IoU threshold keeps B in class 0 as well.
    _, s, c, n = torch_npu.npu_batch_nms(boxes, scores, 0.3, 0.7, 3, 4)
    assert n.tolist() == [4] and c.cpu().float().tolist() == [[0.0, 1.0, 0.0, 0.0]]
    assert torch.equal(s.cpu(), torch.tensor([[0.9, 0.85, 0.8, 0.7]]).to(dtype))


def _iou(p, q):
    lp = [min(p[0], p[2]), min(p[1], p[3])]
    hp = [max(p[0], p[2]), max(p[1], p[3])]
    lq = [min(q[0], q[2]), min(q[1], q[3])]
    hq = [max(q[0], q[2]), max(q[1], q[3])]
    ap = (hp[0] - lp[0]) * (hp[1] - lp[1])
    aq = (hq[0] - lq[0]) * (hq[1] - lq[1])
    if ap <= 0 or aq <= 0:
        return 0.0
    w = max(0.0, min(hp[0], hq[0]) - max(lp[0], lq[0]))
    h = max(0.0, min(hp[1], hq[1]) - max(lp[1], lq[1]))
    return w * h / (ap + aq - w * h)


def _reference(boxes, scores, score_thr, iou_thr, per_class, total):
    """Lists in, lists out: one image."""
    found = []
    for k in range(len(scores[0])):
        ranked = sorted(
            (i for i in range(len(scores)) if scores[i][k] > score_thr),
            key=lambda i: (-scores[i][k], i),
        )
        kept = []
        for i in ranked:
            box = boxes[i][0 if len(boxes[i]) == 1 else k]
            if all(_iou(box, other) <= iou_thr for other in kept):
                kept.append(box)
                found.append((-scores[i][k], k, len(kept), box))
            if len(kept) == per_class:
                break
    found.sort(key=lambda f: f[:3])
    return [(-s, k, box) for s, k, _, box in found[:total]]


@pytest.mark.parametrize("shared", [True, False])
def test_random_images_match_the_reference(shared):
    rng = random.Random(7)
    batch, n, classes = 3, 40, 4
    boxes = torch.zeros(batch, n, 1 if shared else classes, 4)
    for index in boxes.view(-1, 4):
        x, y = rng.uniform(0, 60), rng.uniform(0, 60)
        index.copy_(torch.tensor([x, y, x + rng.uniform(2, 25), y + rng.uniform(2, 25)]))
    scores = torch.rand(batch, n, classes, generator=torch.Generator().manual_seed(9))
    got = torch_npu.npu_batch_nms(on_npu(boxes), on_npu(scores), 0.25, 0.4, 6, 15)
    got_boxes, got_scores, got_classes, num = (t.cpu() for t in got)
    for b in range(batch):
        want = _reference(boxes[b].tolist(), scores[b].tolist(), 0.25, 0.4, 6, 15)
        assert int(num[b]) == len(want) > 6  # more than one class's worth kept
        for row, (score, klass, box) in enumerate(want):
            assert float(got_scores[b, row]) == pytest.approx(score, abs=1e-7)
            assert int(got_classes[b, row]) == klass
            assert got_boxes[b, row].tolist() == pytest.approx(box, abs=1e-5)
        assert not got_scores[b, len(want) :].any() and not got_boxes[b, len(want) :].any()


def test_bad_inputs_are_refused_and_there_is_no_gradient():
    boxes, scores = _one_image()
    with pytest.raises(RuntimeError, match=r"expected boxes \(batch, N, q, 4\)"):
        torch_npu.npu_batch_nms(boxes[..., :3], scores, 0.3, 0.5, 3, 4)
    with pytest.raises(RuntimeError, match="empty tensor"):
        torch_npu.npu_batch_nms(boxes[:, :0], scores[:, :0], 0.3, 0.5, 3, 4)
    with pytest.raises(NotImplementedError, match="transpose_box"):
        torch_npu.npu_batch_nms(boxes, scores, 0.3, 0.5, 3, 4, transpose_box=True)
    check_no_derivative(
        "npu_batch_nms",
        scores.detach().requires_grad_(True),
        lambda s: torch_npu.npu_batch_nms(boxes, s, 0.3, 0.5, 3, 4)[1],
    )
