"""torch_npu.npu_scaled_masked_softmax against ``softmax(masked_fill(x * scale, mask, -10000))``
in plain torch (tolerances: overlay_support.npu_op_checks)."""

import pytest
import torch

from overlay_support.npu_op_checks import (
    DTYPES,
    check_against_formula,
    check_grad_saturation,
    on_npu,
    randn,
    torch_npu,
)


def formula(x, mask, scale):
    return torch.softmax((x * scale).masked_fill(mask, -10000.0), dim=-1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mask_shape", [(2, 3, 32, 32), (2, 1, 32, 32), (32, 32)])
def test_forward_backward(dtype, mask_shape):
    g = torch.Generator().manual_seed(5)
    mask = torch.rand(*mask_shape, generator=g) < 0.3
    scale = 0.125
    check_against_formula(
        lambda x, m: torch_npu.npu_scaled_masked_softmax(x, m, scale),
        lambda x, m: formula(x, m, scale),
        [randn(2, 3, 32, 32, scale=5), mask],
        dtype,
    )


def test_default_scale_and_causal_mask():
    x = on_npu(randn(1, 2, 32, 32))
    causal = torch.ones(32, 32, dtype=torch.bool).triu(1)
    want = formula(x.cpu(), causal, 1.0)
    got = torch_npu.npu_scaled_masked_softmax(x, on_npu(causal))
    torch.testing.assert_close(got.cpu(), want)
    fixed = torch_npu.npu_scaled_masked_softmax(
        x, on_npu(torch.zeros(32, 32, dtype=torch.bool)), fixed_triu_mask=True
    )
    torch.testing.assert_close(fixed.cpu(), want)


def test_fp16_gradient_overflow_saturates():
    # d softmax / dx scaled by scale = 1000: a gradient of 65000 overflows.
    x = on_npu(torch.zeros(1, 1, 32, 32), torch.float16)
    mask = on_npu(torch.zeros(32, 32, dtype=torch.bool))

    def op(x):
        return torch_npu.npu_scaled_masked_softmax(x, mask, 1000.0)[..., 0]

    check_grad_saturation(op, x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("five_d", [True, False])
def test_masked_softmax_with_rel_pos_bias_is_swins_window_softmax(dtype, five_d):
    """softmax(scale * x + mask per window + bias per head), x (B, W, N, S1, S2) or
    (B * W, N, S1, S2), the mask (W, 1, S1, S2), the bias (N, S1, S2)."""
    b, w, n, s = 2, 3, 4, 5
    x = randn(b, w, n, s, s, seed=40, scale=2)
    mask = torch.where(randn(w, 1, s, s, seed=41) > 0.8, -100.0, 0.0)
    bias = randn(n, s, s, seed=42)

    def formula(x, mask, bias):
        y = x.reshape(b, w, n, s, s) * 0.5 + mask.reshape(1, w, 1, s, s) + bias
        return torch.softmax(y, -1).reshape(x.shape)

    def op(x, mask, bias):
        return torch_npu.npu_masked_softmax_with_rel_pos_bias(x, mask, bias, scale_value=0.5)

    inputs = [x if five_d else x.reshape(b * w, n, s, s), mask, bias]
    (got,) = check_against_formula(op, formula, inputs, dtype, grads=())
    assert got.shape == inputs[0].shape and got.dtype == dtype


def test_masked_softmax_with_rel_pos_bias_without_mask_and_refusals():
    x, bias = randn(1, 2, 3, 4, 4, seed=43), randn(1, 1, 3, 4, 4, seed=44)
    got = torch_npu.npu_masked_softmax_with_rel_pos_bias(on_npu(x), None, on_npu(bias))
    assert torch.allclose(got.cpu(), torch.softmax(x + bias, -1), atol=1e-6)
    with pytest.raises(RuntimeError, match="relative_pos_bias must be"):
        torch_npu.npu_masked_softmax_with_rel_pos_bias(on_npu(x), None, on_npu(bias[..., :3]))
    with pytest.raises(RuntimeError, match="atten_mask must be"):
        torch_npu.npu_masked_softmax_with_rel_pos_bias(
            on_npu(x), on_npu(randn(2, 2, 4, 4)), on_npu(bias)
        )
    with pytest.raises(RuntimeError, match="x has 2 windows, atten_mask 3"):
        torch_npu.npu_masked_softmax_with_rel_pos_bias(
            on_npu(x), on_npu(randn(3, 4, 4)), on_npu(bias)
        )
    with pytest.raises(RuntimeError, match="must agree"):
        torch_npu.npu_masked_softmax_with_rel_pos_bias(on_npu(x), None, on_npu(bias).half())
