"""torch_npu.npu_nms_v4 against TensorFlow's NonMaxSuppressionV4 written in plain torch, and
npu_anchor_response_flags against mmdetection's YOLO responsible flags, from their
definitions (integers: exact)."""

import pytest
import torch

from overlay_support.npu_op_checks import on_npu, torch_npu


def boxes(n, seed):
    g = torch.Generator().manual_seed(seed)
    corner = torch.rand(n, 2, generator=g) * 50
    return torch.cat([corner, corner + torch.rand(n, 2, generator=g) * 20 + 1], 1)


def nms_reference(b, s, limit, iou_t, score_t):
    def iou(p, q):
        inter = (min(p[2], q[2]) - max(p[0], q[0])).clamp(min=0) * (
            min(p[3], q[3]) - max(p[1], q[1])
        ).clamp(min=0)
        union = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - inter
        return inter / union

    kept = []
    for i in sorted(range(len(s)), key=lambda i: (-float(s[i]), i)):
        if float(s[i]) <= score_t or len(kept) == limit:
            continue
        if all(float(iou(b[i], b[k])) <= iou_t for k in kept):
            kept.append(i)
    return kept


@pytest.mark.parametrize("pad", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_nms_v4(pad, dtype):
    b = boxes(30, 1)
    s = torch.rand(30, generator=torch.Generator().manual_seed(2))
    b16, s16 = b.to(dtype), s.to(dtype)
    selected, valid = torch_npu.npu_nms_v4(
        on_npu(b16),
        on_npu(s16),
        12,
        on_npu(torch.tensor(0.3)),
        on_npu(torch.tensor(0.2)),
        pad_to_max_output_size=pad,
    )
    want = nms_reference(b16.float(), s16.float(), 12, 0.3, 0.2)
    assert selected.dtype == valid.dtype == torch.int32 and valid.dim() == 0
    assert int(valid) == len(want)
    assert selected.cpu().tolist() == want + ([0] * (12 - len(want)) if pad else [])


def test_anchor_response_flags():
    gts = torch.tensor([[0.0, 0.0, 4.0, 6.0], [10.0, 2.0, 14.0, 3.0], [23.0, 11.0, 23.5, 11.5]])
    flags = torch_npu.npu_anchor_response_flags(on_npu(gts), [6, 12], [2, 2], 3)
    assert flags.dtype == torch.uint8 and flags.shape == (6 * 12 * 3,)
    want = torch.zeros(6, 12, dtype=torch.uint8)
    for x1, y1, x2, y2 in gts.tolist():
        want[int((y1 + y2) / 2 // 2), int((x1 + x2) / 2 // 2)] = 1
    assert torch.equal(flags.cpu(), want.reshape(-1, 1).expand(-1, 3).reshape(-1))
    with pytest.raises(RuntimeError, match="outside"):
        torch_npu.npu_anchor_response_flags(on_npu(gts * 10), [6, 12], [2, 2], 3)


@pytest.mark.parametrize("assign_all", [True, False])
def test_grid_assign_positive(assign_all):
    # mmdetection's GridAssigner positive step, written from its definition.
    g = torch.Generator().manual_seed(5)
    overlaps = torch.rand(3, 8, generator=g)
    overlaps[1, 2] = overlaps[1].max()  # a tie with the best box of ground truth 1
    flags = torch.tensor([1, 1, 1, 0, 1, 1, 0, 1], dtype=torch.uint8)
    max_overlaps, argmax = overlaps.max(0)
    gt_max, gt_argmax = overlaps.max(1)
    assigned = torch.full((8,), -1.0)
    want = assigned.clone()
    pos = (max_overlaps > 0.5) & flags.bool()
    want[pos] = argmax[pos].float() + 1
    for i in range(3):
        if gt_max[i] > 0.1:
            if assign_all:
                want[(overlaps[i] == gt_max[i]) & flags.bool()] = i + 1
            elif flags[gt_argmax[i]]:
                want[gt_argmax[i]] = i + 1
    got = torch_npu.npu_grid_assign_positive(
        on_npu(assigned),
        on_npu(overlaps),
        on_npu(flags),
        on_npu(max_overlaps),
        on_npu(argmax.int()),
        on_npu(gt_max),
        on_npu(gt_argmax.int()),
        3,
        0.5,
        0.1,
        assign_all,
    )
    assert torch.equal(got.cpu(), want)
