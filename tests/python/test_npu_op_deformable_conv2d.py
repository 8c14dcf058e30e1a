"""torch_npu.npu_deformable_conv2d / npu_deformable_conv2dbk: the forward against a tap-by-tap
reference of op-plugin's formula (x offsets, then y offsets, then masks; zero outside the map;
offset_out's layout), the gradients (weight and bias from offset_out, input by linearity, offsets
and masks by differences), fp16, errors, and the DCNv2 Function of Ascend's CenterNet and FairMOT
ports (mmcv's interleaved offsets reordered) training a layer."""

import math

import pytest
import torch

from overlay_support.npu_op_checks import FP16, on_npu, randn, torch_npu


def _bilinear(plane, y, x):
    height, width = plane.shape
    y0, x0 = math.floor(y), math.floor(x)
    total = 0.0
    for cy, cx, w in (
        (y0, x0, (y0 + 1 - y) * (x0 + 1 - x)),
        (y0, x0 + 1, (y0 + 1 - y) * (x - x0)),
        (y0 + 1, x0, (y - y0) * (x0 + 1 - x)),
        (y0 + 1, x0 + 1, (y - y0) * (x - x0)),
    ):
        if 0 <= cy < height and 0 <= cx < width:
            total += w * float(plane[cy, cx])
    return total


def _reference(x, weight, offset, bias, stride, pad, dilation, groups, dg, modulated=True):
    """(output, offset_out) in float64, tap by tap."""
    batch, channels, _, _ = x.shape
    out_ch, _, kh, kw = weight.shape
    out_h, out_w = offset.shape[2:]
    taps = kh * kw
    sampled = torch.zeros(batch, channels, out_h * kh, out_w * kw, dtype=torch.float64)
    for n in range(batch):
        for c in range(channels):
            g = c // (channels // dg)
            for i in range(kh):
                for j in range(kw):
                    t = g * taps + i * kw + j
                    for ho in range(out_h):
                        for wo in range(out_w):
                            y = (
                                ho * stride[0]
                                - pad[0]
                                + i * dilation[0]
                                + float(offset[n, dg * taps + t, ho, wo])
                            )
                            xx = (
                                wo * stride[1]
                                - pad[2]
                                + j * dilation[1]
                                + float(offset[n, t, ho, wo])
                            )
                            v = _bilinear(x[n, c].double(), y, xx)
                            if modulated:
                                v *= float(offset[n, 2 * dg * taps + t, ho, wo])
                            sampled[n, c, ho * kh + i, wo * kw + j] = v
    out = torch.nn.functional.conv2d(
        sampled,
        weight.double(),
        None if bias is None else bias.double(),
        stride=(kh, kw),
        groups=groups,
    )
    return out, sampled


def _case(
    seed,
    batch=2,
    channels=4,
    size=(6, 7),
    out_ch=6,
    k=(3, 3),
    stride=(1, 1),
    pad=(1, 1, 1, 1),
    dilation=(1, 1),
    groups=1,
    dg=1,
    modulated=True,
):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, channels, *size, generator=g)
    weight = torch.randn(out_ch, channels // groups, *k, generator=g) * 0.3
    bias = torch.randn(out_ch, generator=g)
    out_h = (size[0] + pad[0] + pad[1] - (k[0] - 1) * dilation[0] - 1) // stride[0] + 1
    out_w = (size[1] + pad[2] + pad[3] - (k[1] - 1) * dilation[1] - 1) // stride[1] + 1
    parts = 3 if modulated else 2
    offset = torch.randn(batch, parts * dg * k[0] * k[1], out_h, out_w, generator=g) * 1.5
    if modulated:
        offset[:, 2 * dg * k[0] * k[1] :] = torch.rand(
            batch, dg * k[0] * k[1], out_h, out_w, generator=g
        )
    args = dict(
        kernel_size=list(k),
        stride=[1, 1, *stride],
        padding=list(pad),
        dilation=[1, 1, *dilation],
        groups=groups,
        deformable_groups=dg,
        modulated=modulated,
    )
    return x, weight, offset, bias, args


CASES = {
    "3x3": {},
    "stride-2-dilated": dict(stride=(2, 2), dilation=(2, 1), pad=(2, 1, 0, 2)),
    "groups-and-deformable-groups": dict(channels=4, groups=2, dg=2, k=(2, 3)),
    "dcn-v1": dict(modulated=False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_matches_a_tap_by_tap_reference(name):
    x, weight, offset, bias, args = _case(3, **CASES[name])
    out, sampled = torch_npu.npu_deformable_conv2d(
        on_npu(x), on_npu(weight), on_npu(offset), on_npu(bias), **args
    )
    want, want_sampled = _reference(
        x,
        weight,
        offset,
        bias,
        args["stride"][2:],
        args["padding"],
        args["dilation"][2:],
        args["groups"],
        args["deformable_groups"],
        args["modulated"],
    )
    assert out.device.type == "npu" and sampled.device.type == "npu"
    torch.testing.assert_close(sampled.cpu().double(), want_sampled, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out.cpu().double(), want, rtol=1e-4, atol=1e-4)
    assert (want_sampled == 0).any() and (want_sampled != 0).float().mean() > 0.5


def test_zero_offsets_and_unit_masks_are_a_plain_convolution():
    x, weight, offset, bias, args = _case(5)
    offset[:, :18] = 0
    offset[:, 18:] = 1
    out, _ = torch_npu.npu_deformable_conv2d(
        on_npu(x), on_npu(weight), on_npu(offset), on_npu(bias), **args
    )
    want = torch.nn.functional.conv2d(x, weight, bias, padding=1)
    torch.testing.assert_close(out.cpu(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients(name):
    x, weight, offset, bias, args = _case(7, **CASES[name])
    out, sampled = torch_npu.npu_deformable_conv2d(
        on_npu(x), on_npu(weight), on_npu(offset), on_npu(bias), **args
    )
    grad = randn(*out.shape, seed=8)
    gx, gw, goff, gb = torch_npu.npu_deformable_conv2dbk(
        on_npu(x), on_npu(grad), sampled, on_npu(weight), on_npu(offset), **args
    )
    assert gx.shape == x.shape and gw.shape == weight.shape and goff.shape == offset.shape
    assert gb.shape == bias.shape
    k = tuple(args["kernel_size"])
    torch.testing.assert_close(
        gw.cpu(),
        torch.nn.grad.conv2d_weight(
            sampled.cpu(), weight.shape, grad, stride=k, groups=args["groups"]
        ),
        rtol=1e-4,
        atol=1e-4,
    )
    torch.testing.assert_close(gb.cpu(), grad.sum((0, 2, 3)), rtol=1e-5, atol=1e-5)

    def forward(inp, off):
        return (
            torch_npu.npu_deformable_conv2d(on_npu(inp), on_npu(weight), on_npu(off), None, **args)[
                0
            ]
            .cpu()
            .double()
        )

    # The output is linear in the input: <grad_input, v> = <grad, out(v)>.
    v = randn(*x.shape, seed=9)
    lhs = float((gx.cpu().double() * v.double()).sum())
    rhs = float((grad.double() * forward(v, offset)).sum())
    assert abs(lhs - rhs) <= 1e-4 * abs(rhs) + 1e-4, (lhs, rhs)
    # Offsets and masks: central differences on a few entries.
    g = torch.Generator().manual_seed(10)
    for flat in torch.randint(0, offset.numel(), (6,), generator=g).tolist():
        step = torch.zeros(offset.numel())
        step[flat] = 1e-2
        step = step.view_as(offset)
        slope = (
            float((grad.double() * (forward(x, offset + step) - forward(x, offset - step))).sum())
            / 2e-2
        )
        got = float(goff.reshape(-1)[flat])
        assert abs(got - slope) <= 2e-2 * abs(slope) + 2e-3, (flat, got, slope)


def test_the_forward_is_differentiable_through_the_backward_operator():
    x, weight, offset, bias, args = _case(11)
    leaves = [on_npu(t, grad=True) for t in (x, weight, offset, bias)]
    out, _ = torch_npu.npu_deformable_conv2d(*leaves, **args)
    grad = randn(*out.shape, seed=12)
    out.backward(on_npu(grad))
    sampled = torch_npu.npu_deformable_conv2d(*(t.detach() for t in leaves), **args)[1]
    want = torch_npu.npu_deformable_conv2dbk(
        leaves[0].detach(), on_npu(grad), sampled, leaves[1].detach(), leaves[2].detach(), **args
    )
    for leaf, w in zip(leaves, want):
        torch.testing.assert_close(leaf.grad.cpu(), w.cpu())


def test_fp16_computes_in_fp32_and_rounds_once():
    x, weight, offset, bias, args = _case(13)
    half = [t.half() for t in (x, weight, offset, bias)]
    out, sampled = torch_npu.npu_deformable_conv2d(*(on_npu(t) for t in half), **args)
    assert out.dtype == sampled.dtype == torch.float16
    want, want_sampled = _reference(*(t.float() for t in half), [1, 1], [1, 1, 1, 1], [1, 1], 1, 1)
    torch.testing.assert_close(sampled.cpu().float(), want_sampled.half().float(), **FP16)
    torch.testing.assert_close(out.cpu().float(), want.half().float(), rtol=2e-3, atol=1e-2)


class _ModulatedDeformConv2dFunction(torch.autograd.Function):
    """The DCNv2 Function of Ascend's CenterNet and FairMOT ports: mmcv's (y, x) interleaved
    offsets reordered to the NPU's x-then-y layout, the masks appended."""

    @staticmethod
    def forward(ctx, x, offset_mmcv, mask, weight, bias, fp_index, bp_index):
        offset = offset_mmcv.index_select(1, fp_index)
        offset_all = torch.cat([offset, mask], dim=1)
        out, offset_out = torch_npu.npu_deformable_conv2d(
            x,
            weight,
            offset_all,
            bias,
            kernel_size=[weight.shape[3], weight.shape[2]],
            stride=[1, 1, 1, 1],
            padding=[1, 1, 1, 1],
            dilation=[1, 1, 1, 1],
            groups=1,
            deformable_groups=1,
            modulated=True,
        )
        ctx.save_for_backward(x, weight, offset_out, offset_all, bp_index)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, offset_out, offset_all, bp_index = ctx.saved_tensors
        gx, gw, goff_all, gb = torch_npu.npu_deformable_conv2dbk(
            x,
            grad_output,
            offset_out,
            weight,
            offset_all,
            kernel_size=[weight.shape[3], weight.shape[2]],
            stride=[1, 1, 1, 1],
            padding=[1, 1, 1, 1],
            dilation=[1, 1, 1, 1],
            groups=1,
            deformable_groups=1,
            modulated=True,
        )
        goff = goff_all.index_select(1, bp_index)
        return gx, goff, goff_all[:, goff.shape[1] :], gw, gb, None, None


def test_the_dcn_function_of_ascends_ports_trains_a_layer():
    torch.manual_seed(0)
    split = 2 * 9
    fp = list(range(split))[1::2] + list(range(split))[::2]
    bp = [fp.index(i) for i in range(split)]
    fp_index, bp_index = torch.tensor(fp).npu(), torch.tensor(bp).npu()
    conv_offset = torch.nn.Conv2d(3, 27, 3, padding=1).npu()
    weight = torch.nn.Parameter(torch.randn(4, 3, 3, 3).npu() * 0.2)
    bias = torch.nn.Parameter(torch.zeros(4).npu())
    x = on_npu(randn(2, 3, 8, 8, seed=1))
    target = on_npu(randn(2, 4, 8, 8, seed=2))
    params = list(conv_offset.parameters()) + [weight, bias]
    opt = torch.optim.Adam(params, lr=0.03)
    losses = []
    for _ in range(40):
        opt.zero_grad()
        out = conv_offset(x)
        y = _ModulatedDeformConv2dFunction.apply(
            x, out[:, :split], torch.sigmoid(out[:, split:]), weight, bias, fp_index, bp_index
        )
        loss = torch.nn.functional.mse_loss(y, target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert conv_offset.weight.grad.abs().sum() > 0  # the offsets learn too
    assert losses[-1] < 0.7 * losses[0], losses


def test_bad_arguments():
    x, weight, offset, bias, args = _case(1)
    bad = dict(args, kernel_size=[3, 2])
    with pytest.raises(RuntimeError, match=r"kernel_size \[3, 2\] is not the weight's"):
        torch_npu.npu_deformable_conv2d(on_npu(x), on_npu(weight), on_npu(offset), None, **bad)
    with pytest.raises(RuntimeError, match="stride must be 4 positive ints"):
        torch_npu.npu_deformable_conv2d(
            on_npu(x), on_npu(weight), on_npu(offset), None, **dict(args, stride=[2, 2])
        )
    with pytest.raises(RuntimeError, match=r"offset must have shape \(N, 3 \* deformable_groups"):
        torch_npu.npu_deformable_conv2d(
            on_npu(x), on_npu(weight), on_npu(offset[:, :18]), None, **args
        )
    with pytest.raises(RuntimeError, match="groups 3 and deformable_groups 1 do not fit"):
        torch_npu.npu_deformable_conv2d(
            on_npu(x), on_npu(weight), on_npu(offset), None, **dict(args, groups=3)
        )
    with pytest.raises(RuntimeError, match="grad_output must have shape"):
        torch_npu.npu_deformable_conv2dbk(
            on_npu(x), on_npu(torch.zeros(1)), on_npu(x), on_npu(weight), on_npu(offset), **args
        )


def test_the_contrib_dcnv2_layer_is_the_ports_function():
    # torch_npu.contrib.module.DCNv2 on mmcv's offsets gives what the ports' Function gives.
    from torch_npu.contrib.module import DCNv2, ModulatedDeformConv

    assert DCNv2 is ModulatedDeformConv
    torch.manual_seed(0)
    layer = DCNv2(3, 4, 3, stride=1, padding=1).npu()
    assert sorted(layer.state_dict()) == [
        "bias",
        "conv_offset.bias",
        "conv_offset.weight",
        "weight",
    ]
    assert layer.conv_offset.weight.abs().sum() == 0  # offsets start at zero
    with torch.no_grad():
        layer.conv_offset.weight.normal_(0, 0.1)
        layer.bias.normal_()
    x = on_npu(randn(2, 3, 8, 8, seed=3), grad=True)
    out = layer(x)
    out.sum().backward()
    split = 18
    fp = list(range(split))[1::2] + list(range(split))[::2]
    bp = [fp.index(i) for i in range(split)]
    x2 = x.detach().clone().requires_grad_()
    predicted = layer.conv_offset(x2)
    want = _ModulatedDeformConv2dFunction.apply(
        x2,
        predicted[:, :split],
        torch.sigmoid(predicted[:, split:]),
        layer.weight,
        layer.bias,
        torch.tensor(fp).npu(),
        torch.tensor(bp).npu(),
    )
    want.sum().backward()
    torch.testing.assert_close(out.detach().cpu(), want.detach().cpu())
    torch.testing.assert_close(x.grad.cpu(), x2.grad.cpu())
    unbiased = DCNv2(3, 4, 3, padding=1, bias=False, pack=False).npu()
    assert "bias" not in unbiased.state_dict()
    offset = on_npu(randn(2, 18, 8, 8, seed=4))
    mask = on_npu(torch.rand(2, 9, 8, 8))
    assert unbiased((x.detach(), offset, mask)).shape == (2, 4, 8, 8)
