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
