"""torch_npu.npu_roi_align / npu_roi_alignbk: op-plugin's and torch_npu's expected values, a
sample-by-sample reference of the NPU's RoIAlign written here from CANN's description (every
roi_end_mode, fixed and adaptive sampling, rois beyond the map or the batch, more rois than one
chunk), the backward as the forward's adjoint, fp16, errors, and the autograd Function Ascend's
detectron2 ports wrap the pair in."""

import math

import pytest
import torch

from overlay_support.npu_op_checks import check_no_derivative, FP16, on_npu, torch_npu

MAP = torch.arange(1, 37, dtype=torch.float32).view(1, 1, 6, 6)
ROI = torch.tensor([[0, -2.0, -2.0, 22.0, 22.0]])


def test_op_plugin_and_torch_npu_examples():
    x, rois = on_npu(MAP), on_npu(ROI)
    out = torch_npu.npu_roi_align(x, rois, 0.25, 3, 3, 2, 0)
    assert out.device == torch.device("npu:0") and out.shape == (1, 1, 3, 3)
    want = torch.tensor([[4.5, 6.5, 8.5], [16.5, 18.5, 20.5], [28.5, 30.5, 32.5]])
    assert torch.allclose(out.cpu()[0, 0], want, rtol=1e-4)
    # torch_npu's contrib ROIAlign(aligned=True) passes roi_end_mode 3.
    aligned = torch.tensor([[2.75, 4.5, 6.5], [13.25, 15.0, 17.0], [25.25, 27.0, 29.0]])
    assert torch.allclose(
        torch_npu.npu_roi_align(x, rois, 0.25, 3, 3, 2, 3).cpu()[0, 0], aligned, rtol=1e-4
    )
    # op-plugin's backward test: the forward's output as the gradient, roi_end_mode left to
    # the kernel's default (1).
    grad = torch_npu.npu_roi_alignbk(out, rois, x.size(), 3, 3, 0.25, 2)
    want_grad = torch.tensor(
        [
            [1.0786, 1.0557, 1.4942, 1.5248, 1.9226, 2.4709],
            [1.0557, 1.0332, 1.4625, 1.4924, 1.8817, 2.4183],
            [3.6872, 3.6087, 4.0380, 4.0679, 4.4572, 5.6097],
            [3.8708, 3.7884, 4.2177, 4.2476, 4.6369, 5.8324],
            [6.2575, 6.1243, 6.5536, 6.5835, 6.9729, 8.7269],
            [8.2847, 8.1084, 8.6403, 8.6774, 9.1598, 11.4575],
        ]
    )
    assert grad.shape == x.shape
    assert torch.allclose(grad.cpu()[0, 0], want_grad, rtol=1e-3, atol=1e-4)
    # torch_npu's contrib test: the gradient of out.sum() with modes 0 and 3.
    ones = torch.ones_like(out)
    assert torch.allclose(
        torch_npu.npu_roi_alignbk(ones, rois, x.size(), 3, 3, 0.25, 2, 0).cpu(),
        torch.full((1, 1, 6, 6), 0.25),
    )
    edge = torch.tensor([0.5625, 0.375, 0.375, 0.375, 0.375, 0.1875])
    inner = torch.tensor([0.375, 0.25, 0.25, 0.25, 0.25, 0.125])
    want_aligned = torch.stack([edge] + [inner] * 4 + [edge / 3])
    assert torch.allclose(
        torch_npu.npu_roi_alignbk(ones, rois, x.size(), 3, 3, 0.25, 2, 3).cpu()[0, 0], want_aligned
    )


def _sample_weights(y, x, height, width):
    """[(row, col, weight)] of one bilinear sample, or [] when it lies outside the map."""
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return []
    y, x = max(y, 0.0), max(x, 0.0)
    y_low, x_low = int(y), int(x)
    if y_low >= height - 1:
        y_low = y_high = height - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= width - 1:
        x_low = x_high = width - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    ly, lx = y - y_low, x - x_low
    return [
        (y_low, x_low, (1 - ly) * (1 - lx)),
        (y_low, x_high, (1 - ly) * lx),
        (y_high, x_low, ly * (1 - lx)),
        (y_high, x_high, ly * lx),
    ]


def _samples(roi, scale, pooled_h, pooled_w, sample_num, mode, height, width):
    """{(ph, pw): [(row, col, weight / count)]} of one roi, sample by sample."""
    x1, y1, x2, y2 = (float(v) * scale for v in roi[1:])
    if mode == 1:
        x2, y2 = x2 + scale, y2 + scale
    elif mode >= 2:
        x1, y1, x2, y2 = x1 - 0.5, y1 - 0.5, x2 - 0.5, y2 - 0.5
    roi_w, roi_h = x2 - x1, y2 - y1
    if mode < 2:
        roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
    bin_w, bin_h = roi_w / pooled_w, roi_h / pooled_h
    grid_h = sample_num if sample_num > 0 else math.ceil(bin_h)
    grid_w = sample_num if sample_num > 0 else math.ceil(bin_w)
    count = max(grid_h * grid_w, 1)
    found = {}
    for ph in range(pooled_h):
        for pw in range(pooled_w):
            taps = []
            for iy in range(grid_h):
                y = y1 + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                for ix in range(grid_w):
                    x = x1 + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                    taps += [(r, c, w / count) for r, c, w in _sample_weights(y, x, height, width)]
            found[(ph, pw)] = taps
    return found


def _reference(features, rois, scale, pooled_h, pooled_w, sample_num, mode, grad=None):
    """(forward, backward of ``grad``) in float64, sample by sample."""
    feats = features.double()
    batch, channels, height, width = feats.shape
    out = torch.zeros(len(rois), channels, pooled_h, pooled_w, dtype=torch.float64)
    back = torch.zeros_like(feats)
    for n, roi in enumerate(rois.double()):
        b = int(roi[0])
        if b < 0 or b >= batch:
            continue
        for (ph, pw), taps in _samples(
            roi, scale, pooled_h, pooled_w, sample_num, mode, height, width
        ).items():
            for r, c, w in taps:
                out[n, :, ph, pw] += w * feats[b, :, r, c]
                if grad is not None:
                    back[b, :, r, c] += w * grad[n, :, ph, pw].double()
    return out, back


def _random_case(seed, count=9):
    g = torch.Generator().manual_seed(seed)
    features = torch.randn(3, 2, 11, 14, generator=g)
    corner = torch.rand(count, 2, generator=g) * 60 - 10
    size = torch.rand(count, 2, generator=g) * 50
    batch = torch.randint(0, 3, (count, 1), generator=g).float()
    rois = torch.cat([batch, corner, corner + size], 1)
    rois[0] = torch.tensor([1, 5.0, 5.0, 5.0, 5.0])  # empty roi
    rois[1] = torch.tensor([3, 0.0, 0.0, 20.0, 20.0])  # beyond the batch: zeros
    rois[2] = torch.tensor([0, -40.0, -30.0, 90.0, 80.0])  # larger than the map
    return features, rois


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
@pytest.mark.parametrize("sample_num", [2, 0, -1, 3])
def test_matches_a_sample_by_sample_reference(mode, sample_num):
    features, rois = _random_case(mode * 10 + sample_num + 1)
    grad = torch.randn(len(rois), 2, 4, 5, generator=torch.Generator().manual_seed(9))
    scale = 0.3
    want, want_back = _reference(features, rois, scale, 4, 5, sample_num, mode, grad)
    got = torch_npu.npu_roi_align(on_npu(features), on_npu(rois), scale, 4, 5, sample_num, mode)
    torch.testing.assert_close(got.cpu().double(), want, rtol=1e-5, atol=1e-5)
    back = torch_npu.npu_roi_alignbk(
        on_npu(grad), on_npu(rois), features.shape, 5, 4, scale, sample_num, mode
    )
    torch.testing.assert_close(back.cpu().double(), want_back, rtol=1e-5, atol=1e-5)
    assert want[2].abs().sum() > 0 and want[1].abs().sum() == 0


def test_more_rois_than_one_chunk_and_the_backward_is_the_adjoint():
    features, rois = _random_case(5, count=150)
    x, r = on_npu(features), on_npu(rois)
    out = torch_npu.npu_roi_align(x, r, 0.25, 7, 7, 0, 1)
    want, _ = _reference(features, rois, 0.25, 7, 7, 0, 1)
    torch.testing.assert_close(out.cpu().double(), want, rtol=1e-5, atol=1e-5)
    grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(2))
    back = torch_npu.npu_roi_alignbk(on_npu(grad), r, x.shape, 7, 7, 0.25, 0, 1)
    # <roi_align(x), g> == <x, roi_alignbk(g)>: the backward spreads exactly what the forward
    # gathered.
    lhs = (out.cpu().double() * grad.double()).sum()
    rhs = (features.double() * back.cpu().double()).sum()
    assert abs(lhs - rhs) <= 1e-6 * abs(lhs) + 1e-6, (lhs, rhs)


def test_fp16_computes_in_fp32_and_rounds_once():
    features, rois = _random_case(7)
    half = features.half()
    got = torch_npu.npu_roi_align(on_npu(half), on_npu(rois.half()), 0.5, 3, 3, 2, 0)
    assert got.dtype == torch.float16
    want, _ = _reference(half.float(), rois.half().float(), 0.5, 3, 3, 2, 0)
    torch.testing.assert_close(got.cpu().float(), want.half().float(), **FP16)
    grad = torch.randn(got.shape, generator=torch.Generator().manual_seed(4)).half()
    back = torch_npu.npu_roi_alignbk(
        on_npu(grad), on_npu(rois.half()), features.shape, 3, 3, 0.5, 2, 0
    )
    assert back.dtype == torch.float16
    _, want_back = _reference(half.float(), rois.half().float(), 0.5, 3, 3, 2, 0, grad.float())
    torch.testing.assert_close(back.cpu().float(), want_back.half().float(), **FP16)


class _DetectronRoIAlign(torch.autograd.Function):
    """The autograd Function of Ascend's detectron2 and maskrcnn_benchmark ports: forward with
    roi_end_mode 0, backward with the kernel's default mode."""

    @staticmethod
    def forward(ctx, features, rois, output_size, spatial_scale, sampling_ratio):
        ctx.save_for_backward(rois)
        ctx.output_size, ctx.spatial_scale = output_size, spatial_scale
        ctx.sampling_ratio, ctx.input_shape = sampling_ratio, features.size()
        return torch_npu.npu_roi_align(
            features, rois, spatial_scale, output_size[0], output_size[1], sampling_ratio, 0
        )

    @staticmethod
    def backward(ctx, grad_output):
        (rois,) = ctx.saved_tensors
        grad = torch_npu.npu_roi_alignbk(
            grad_output,
            rois,
            ctx.input_shape,
            ctx.output_size[0],
            ctx.output_size[1],
            ctx.spatial_scale,
            ctx.sampling_ratio,
        )
        return grad, None, None, None, None


def test_the_autograd_function_of_ascends_detection_ports_trains_a_head():
    features, rois = _random_case(11, count=12)
    conv = torch.nn.Conv2d(2, 4, 3, padding=1).npu()
    head = torch.nn.Linear(4 * 7 * 7, 3).npu()
    opt = torch.optim.SGD(list(conv.parameters()) + list(head.parameters()), lr=0.5)
    x, r = on_npu(features), on_npu(rois)
    target = torch.randint(0, 3, (12,), generator=torch.Generator().manual_seed(0)).npu()
    losses = []
    for _ in range(50):
        opt.zero_grad()
        pooled = _DetectronRoIAlign.apply(conv(x), r, (7, 7), 0.25, 2)
        loss = torch.nn.functional.cross_entropy(head(pooled.flatten(1)), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert conv.weight.grad is not None and conv.weight.grad.abs().sum() > 0
    assert losses[-1] < 0.5 * losses[0], losses


def test_bad_arguments_and_no_gradient():
    x, rois = on_npu(MAP), on_npu(ROI)
    with pytest.raises(RuntimeError, match=r"rois must be \(K, 5\) rows"):
        torch_npu.npu_roi_align(x, rois[:, 1:], 0.25, 3, 3, 2, 0)
    with pytest.raises(RuntimeError, match="roi_end_mode must be 0, 1, 2 or 3, got 4"):
        torch_npu.npu_roi_align(x, rois, 0.25, 3, 3, 2, 4)
    with pytest.raises(RuntimeError, match="features must be NCHW"):
        torch_npu.npu_roi_align(x[0], rois, 0.25, 3, 3, 2, 0)
    with pytest.raises(RuntimeError, match="pooled_height and pooled_width must be positive"):
        torch_npu.npu_roi_align(x, rois, 0.25, 0, 3, 2, 0)
    with pytest.raises(RuntimeError, match=r"gradient must have shape .* = \(1, 1, 2, 3\)"):
        torch_npu.npu_roi_alignbk(on_npu(torch.ones(1, 1, 3, 2)), rois, x.size(), 3, 2, 0.25, 2)
    check_no_derivative(
        "npu_roi_align",
        on_npu(MAP, grad=True),
        lambda m: torch_npu.npu_roi_align(m, rois, 0.25, 3, 3, 2, 0),
    )


def test_features_and_rois_on_different_npus_are_refused():
    if torch.npu.device_count() < 2:
        pytest.skip("needs two emulated NPUs (APEXNPU_DEVICE_COUNT)")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch_npu.npu_roi_align(on_npu(MAP), ROI.to("npu:1"), 0.25, 3, 3, 2, 0)


@pytest.mark.parametrize("aligned", [False, True])
def test_the_contrib_roi_align_layer(aligned):
    # torch_npu's contrib test: output and input gradient of out.sum() for both alignments.
    from torch_npu.contrib.module import ROIAlign

    x = on_npu(MAP, grad=True)
    layer = ROIAlign((3, 3), 0.25, 2, aligned=aligned).npu()
    out = layer(x, on_npu(ROI))
    out.sum().backward()
    if aligned:
        want = [[2.75, 4.5, 6.5], [13.25, 15.0, 17.0], [25.25, 27.0, 29.0]]
        edge = [0.5625, 0.375, 0.375, 0.375, 0.375, 0.1875]
        inner = [0.375, 0.25, 0.25, 0.25, 0.25, 0.125]
        want_grad = torch.tensor([edge] + [inner] * 4 + [[v / 3 for v in edge]])
    else:
        want = [[4.5, 6.5, 8.5], [16.5, 18.5, 20.5], [28.5, 30.5, 32.5]]
        want_grad = torch.full((6, 6), 0.25)
    assert torch.allclose(out.detach().cpu()[0, 0], torch.tensor(want), rtol=1e-4)
    assert torch.allclose(x.grad.cpu()[0, 0], want_grad, rtol=1e-4)
    assert "aligned=" + str(aligned) in repr(layer)
    with pytest.raises(ValueError, match=r"rois must be \(K, 5\) rows"):
        layer(x, on_npu(ROI)[:, 1:])
