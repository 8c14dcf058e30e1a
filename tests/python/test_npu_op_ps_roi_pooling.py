"""torch_npu.npu_ps_roi_pooling / npu_ps_roi_pooling_backward: op-plugin's examples, a
bin-by-bin reference of the computation torch_npu's own test checks the NPU against (R-FCN's
Caffe layer: rounded roi corners, end + 1, trunc/floor/ceil bin edges clipped to the map, empty
bins 0), R-FCN's shapes, the backward as the forward's adjoint, autograd, fp16 and errors."""

import math

import pytest
import torch

from overlay_support.npu_op_checks import FP16, on_npu, randn, torch_npu


def _reference(features, rois, scale, group, output_dim):
    feats = features.double()
    batch, _, height, width = feats.shape
    flat = rois.double().transpose(1, 2).reshape(-1, 5)
    out = torch.zeros(len(flat), output_dim, group, group, dtype=torch.float64)
    for n, (b, x1, y1, x2, y2) in enumerate(flat.tolist()):
        b = int(b)
        start_w, start_h = round(x1) * scale, round(y1) * scale  # Python rounds half to even
        end_w, end_h = round(x2 + 1.0) * scale, round(y2 + 1.0) * scale
        bin_w, bin_h = max(end_w - start_w, 0.1) / group, max(end_h - start_h, 0.1) / group
        for ph in range(group):
            h0 = min(max(int(ph * bin_h + start_h), 0), height)
            h1 = min(max(math.ceil((ph + 1) * bin_h + start_h), 0), height)
            for pw in range(group):
                w0 = min(max(math.floor(pw * bin_w + start_w), 0), width)
                w1 = min(max(math.ceil((pw + 1) * bin_w + start_w), 0), width)
                if h1 <= h0 or w1 <= w0 or not 0 <= b < batch:
                    continue
                for ctop in range(output_dim):
                    c = (ctop * group + ph) * group + pw
                    out[n, ctop, ph, pw] = feats[b, c, h0:h1, w0:w1].mean()
    return out


def test_op_plugin_examples():
    rois = on_npu(
        torch.tensor([[[1], [2], [3], [4], [5]], [[6], [7], [8], [9], [10]]], dtype=torch.float16)
    )
    x = on_npu(torch.arange(1, 17, dtype=torch.float16).view(2, 8, 1, 1), grad=True)
    out = torch_npu.npu_ps_roi_pooling(x, rois, 0.5, 2, 2)
    assert out.shape == (2, 2, 2, 2) and out.dtype == torch.float16
    assert not out.detach().cpu().any()  # every roi lies beyond the 1x1 map
    out.backward(torch.ones_like(out))
    assert x.grad.shape == x.shape and not x.grad.cpu().any()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_a_bin_by_bin_reference(seed):
    g = torch.Generator().manual_seed(seed)
    group, output_dim = 3, 2
    x = torch.randn(2, output_dim * group * group, 13, 17, generator=g)
    corner = torch.rand(2, 4, 2, generator=g) * 50 - 5
    size = torch.rand(2, 4, 2, generator=g) * 40
    boxes = torch.cat([corner, corner + size], 2)  # (B, R, 4)
    index = torch.tensor([[0.0], [1.0]]).expand(2, 4).unsqueeze(2).clone()
    index[1, 3] = 5.0  # a batch index outside the batch: zeros
    rois = torch.cat([index, boxes], 2).transpose(1, 2).contiguous()  # (B, 5, R)
    rois[0, 1:, 0] = torch.tensor([4.5, 5.5, 10.5, 12.5])  # halves round to even
    got = torch_npu.npu_ps_roi_pooling(on_npu(x), on_npu(rois), 0.25, group, output_dim)
    want = _reference(x, rois, 0.25, group, output_dim)
    assert got.shape == (8, output_dim, group, group)
    torch.testing.assert_close(got.cpu().double(), want, rtol=1e-5, atol=1e-6)
    assert want.abs().sum() > 0 and want[7].abs().sum() == 0


def test_torch_npus_own_configuration_and_the_adjoint():
    # torch_npu's test: 961 = 31 * 31 channels, group 31, output_dim 1 (a smaller map here).
    x = randn(2, 961, 23, 23, seed=3).abs()
    rois = torch.tensor([[[0], [3], [2], [9], [9]], [[1], [1], [4], [9], [9]]], dtype=torch.float32)
    got = torch_npu.npu_ps_roi_pooling(on_npu(x), on_npu(rois), 0.25, 31, 1)
    torch.testing.assert_close(
        got.cpu().double(), _reference(x, rois, 0.25, 31, 1), rtol=1e-5, atol=1e-6
    )
    grad = randn(*got.shape, seed=4)
    back = torch_npu.npu_ps_roi_pooling_backward(on_npu(grad), on_npu(rois), 0.25, 31, 1, [23, 23])
    assert back.shape == x.shape
    # <pool(x), g> == <x, pool_backward(g)>: the gradient spreads what the bins averaged.
    lhs = float((got.cpu().double() * grad.double()).sum())
    rhs = float((x.double() * back.cpu().double()).sum())
    assert abs(lhs - rhs) <= 1e-5 * abs(lhs) + 1e-6, (lhs, rhs)


def test_r_fcn_shapes_train_through_autograd():
    # R-FCN pools 7x7 position-sensitive maps of 21 classes from a stride-16 feature map.
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(8, 21 * 49, 1).npu()
    feats = on_npu(randn(1, 8, 20, 30, seed=5))
    corner = torch.rand(1, 6, 2) * 300
    boxes = torch.cat([torch.zeros(1, 6, 1), corner, corner + 100], 2)
    rois = on_npu(boxes.transpose(1, 2).contiguous())
    target = on_npu(torch.randint(0, 21, (6,)))
    opt = torch.optim.Adam(conv.parameters(), lr=0.05)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        pooled = torch_npu.npu_ps_roi_pooling(conv(feats), rois, 1 / 16, 7, 21)
        loss = torch.nn.functional.cross_entropy(pooled.mean((2, 3)), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses


def test_fp16_computes_in_fp32_and_rounds_once():
    x = randn(1, 8, 9, 9, seed=6).half()
    rois = torch.tensor([[[0.0, 0.0], [1.0, 0.0], [2.0, 6.0], [30.0, 20.0], [25.0, 33.0]]])
    got = torch_npu.npu_ps_roi_pooling(on_npu(x), on_npu(rois.half()), 0.25, 2, 2)
    assert got.dtype == torch.float16
    want = _reference(x.float(), rois.half().float(), 0.25, 2, 2)
    torch.testing.assert_close(got.cpu().float(), want.half().float(), **FP16)


def test_bad_arguments():
    x = on_npu(torch.zeros(1, 8, 4, 4))
    with pytest.raises(RuntimeError, match=r"rois must be \(B, 5, R\)"):
        torch_npu.npu_ps_roi_pooling(x, on_npu(torch.zeros(3, 5)), 0.5, 2, 2)
    with pytest.raises(RuntimeError, match="need output_dim \\* group_size \\*\\* 2 = 18"):
        torch_npu.npu_ps_roi_pooling(x, on_npu(torch.zeros(1, 5, 2)), 0.5, 3, 2)
    with pytest.raises(RuntimeError, match="output_grad must have shape"):
        torch_npu.npu_ps_roi_pooling_backward(
            on_npu(torch.zeros(1, 2, 2, 2)), on_npu(torch.zeros(1, 5, 2)), 0.5, 2, 2, [4, 4]
        )


def test_the_contrib_psroipool_layer():
    from torch_npu.contrib.module import PSROIPool

    layer = PSROIPool(3, 3, 0.25, 3, 2)
    assert "group_size=3" in repr(layer)
    x = randn(1, 18, 10, 10, seed=7)
    rois = torch.tensor([[[0.0], [4.0], [4.0], [30.0], [25.0]]])
    torch.testing.assert_close(
        layer(on_npu(x), on_npu(rois)).cpu(),
        torch_npu.npu_ps_roi_pooling(on_npu(x), on_npu(rois), 0.25, 3, 2).cpu(),
    )
    with pytest.raises(ValueError, match="must be equal"):
        PSROIPool(7, 5, 0.25, 7, 2)
