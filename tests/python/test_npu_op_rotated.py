"""torch_npu's rotated-box operators (npu_rotated_iou, npu_rotated_overlaps, npu_nms_rotated)
against an independent construction of the overlap (Sutherland-Hodgman clipping of one box's
polygon by the other's, in plain Python), and against the values a real NPU gives for
torch_npu's own test cases (boxes ``(x, y, w, h, angle in degrees)`` rows)."""

import math

import numpy as np
import pytest
import torch

from overlay_support.npu_op_checks import on_npu, torch_npu


def polygon(box):
    x, y, w, h, a = box
    c, s = math.cos(math.radians(a)), math.sin(math.radians(a))
    return [
        (x + dx * c - dy * s, y + dx * s + dy * c)
        for dx, dy in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))
    ]


def clipped_area(p, q):
    """Area of convex polygon p clipped by convex counter-clockwise polygon q."""

    def left(pt, a, b):
        return (b[0] - a[0]) * (pt[1] - a[1]) - (b[1] - a[1]) * (pt[0] - a[0]) >= 0

    def cut(u, v, a, b):
        d = (u[0] - v[0]) * (a[1] - b[1]) - (u[1] - v[1]) * (a[0] - b[0])
        t = ((u[0] - a[0]) * (a[1] - b[1]) - (u[1] - a[1]) * (a[0] - b[0])) / d
        return (u[0] + t * (v[0] - u[0]), u[1] + t * (v[1] - u[1]))

    out = p
    for i in range(len(q)):
        a, b = q[i], q[(i + 1) % len(q)]
        src, out = out, []
        for j in range(len(src)):
            u, v = src[j - 1], src[j]
            if left(v, a, b):
                if not left(u, a, b):
                    out.append(cut(u, v, a, b))
                out.append(v)
            elif left(u, a, b):
                out.append(cut(u, v, a, b))
        if not out:
            return 0.0
    return (
        abs(
            sum(
                out[i][0] * out[(i + 1) % len(out)][1] - out[(i + 1) % len(out)][0] * out[i][1]
                for i in range(len(out))
            )
        )
        / 2
    )


def random_boxes(n, seed):
    g = np.random.RandomState(seed)
    return torch.tensor(
        np.concatenate(
            [g.uniform(0, 20, (n, 2)), g.uniform(2, 12, (n, 2)), g.uniform(-180, 180, (n, 1))], 1
        ),
        dtype=torch.float32,
    )


@pytest.mark.parametrize("trans", [False, True])
def test_overlaps_and_iou_against_polygon_clipping(trans):
    a, b = random_boxes(5, 1), random_boxes(4, 2)
    area = torch.tensor(
        [[clipped_area(polygon(p), polygon(q)) for q in b.tolist()] for p in a.tolist()]
    )
    iou = area / (a[:, 2:3] * a[:, 3:4] + (b[:, 2] * b[:, 3])[None] - area)
    iof = area / (a[:, 2:3] * a[:, 3:4])

    def fmt(x):
        if not trans:
            return x
        return torch.cat([x[:, :2] - x[:, 2:4] / 2, x[:, :2] + x[:, 2:4] / 2, x[:, 4:]], 1)

    na, nb = on_npu(fmt(a)[None]), on_npu(fmt(b)[None])
    got = torch_npu.npu_rotated_overlaps(na, nb, trans=trans)
    torch.testing.assert_close(got.cpu()[0], area, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(
        torch_npu.npu_rotated_iou(na, nb, trans=trans).cpu()[0], iou, rtol=1e-4, atol=1e-4
    )
    torch.testing.assert_close(
        torch_npu.npu_rotated_iou(na, nb, trans=trans, mode=1).cpu()[0], iof, rtol=1e-4, atol=1e-4
    )
    pairs = torch_npu.npu_rotated_iou(na[:, :4], nb, trans=trans, is_cross=False)
    torch.testing.assert_close(pairs.cpu()[0], iou[:4].diagonal(), rtol=1e-4, atol=1e-4)


def test_iou_is_what_an_npu_gives_for_torch_npus_case():
    # torch_npu's own case: numpy seed 1234, centres in [20, 60), sizes 1-19, whole degrees;
    # the values its test records from an NPU.
    np.random.seed(1234)
    parts = []
    for n in (2, 3):
        parts.append(
            np.concatenate(
                [
                    np.random.uniform(20, 60, (4, n, 2)).astype(np.float32),
                    np.random.randint(1, 20, size=(4, n, 2)),
                    np.random.randint(-180, 180, size=(4, n, 1)),
                ],
                axis=-1,
            ).astype(np.float32)
        )
    got = torch_npu.npu_rotated_iou(
        on_npu(torch.from_numpy(parts[0])),
        on_npu(torch.from_numpy(parts[1])),
        False,
        0,
        True,
        0.0,
        0.0,
    )
    want = torch.zeros(4, 2, 3)
    want[0, 0, 1], want[2, 1, 0], want[2, 1, 1] = 0.00045966, 0.00600622, 0.10504241
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-5)


def test_nms_rotated_keeps_what_an_npu_keeps():
    # torch_npu's own case (mode 1: x1, y1, x2, y2, angle), and the selection it records.
    dets = torch.tensor(
        [
            [1038.2, 316.57, 1155.6, 443.03, 2.3674],
            [1150.3, 305.98, 1260.2, 434.56, 0.32729],
            [1150.8, 306.52, 1260.7, 434.72, 0.51713],
            [1151.8, 307.81, 1262.2, 434.48, 0.39718],
            [1174.8, 302.02, 1285.9, 439.15, 1.8112],
            [1171.1, 304.80, 1286.8, 435.51, 2.1171],
            [1167.3, 306.75, 1288.9, 431.94, 2.5968],
            [1274.1, 301.81, 1382.3, 430.36, 2.0379],
            [1274.1, 302.86, 1383.6, 429.40, 2.2072],
            [1273.3, 303.82, 1385.5, 428.46, 2.0921],
            [1293.5, 305.17, 1396.1, 431.37, 2.9583],
            [1407.6, 321.73, 1493.0, 427.14, 2.6099],
            [1409.7, 324.96, 1493.4, 426.51, 3.0967],
            [1409.7, 325.69, 1493.5, 426.32, 2.5553],
            [1027.9, 318.83, 1141.2, 446.46, 1.2030],
            [1027.5, 317.76, 1140.8, 446.41, 1.2732],
            [1028.9, 316.94, 1140.7, 445.10, 0.94897],
            [1037.2, 312.33, 1147.7, 445.21, 1.4125],
            [1037.0, 315.64, 1148.7, 443.17, 1.6109],
            [1036.7, 316.82, 1151.0, 440.20, 1.4112],
        ]
    )
    scores = torch.tensor(
        [
            0.9910,
            0.9854,
            0.9972,
            0.9930,
            0.4282,
            0.5092,
            0.6532,
            0.9965,
            0.9989,
            0.9976,
            0.3144,
            0.9874,
            0.9980,
            0.9967,
            0.9698,
            0.9824,
            0.9474,
            0.9856,
            0.9964,
            0.9926,
        ]
    )
    selected, count = torch_npu.npu_nms_rotated(on_npu(dets), on_npu(scores), 0.2, 0, -1, 1)
    assert selected.dtype == count.dtype == torch.int32
    assert selected.cpu().tolist() == [8, 12, 2, 18] and count.cpu().tolist() == [4]
    first, _ = torch_npu.npu_nms_rotated(on_npu(dets), on_npu(scores), 0.2, 0, 2, 1)
    assert first.cpu().tolist() == [8, 12]
