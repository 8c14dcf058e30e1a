"""torch_npu.npu_mish / npu_mish_backward against ``x * tanh(log(1 + exp(x)))`` and its
autograd gradient in plain torch (tolerances: overlay_support.npu_op_checks)."""

import pytest
import torch

from overlay_support.npu_op_checks import (
    DTYPES,
    assert_close,
    check_against_formula,
    check_grad_saturation,
    on_npu,
    randn,
    torch_npu,
)


def mish(x):
    return x * torch.tanh(torch.log1p(torch.exp(x)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_npu_mish_forward_backward(dtype):
    check_against_formula(torch_npu.npu_mish, mish, [randn(7, 9, scale=4)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_npu_mish_backward_is_the_derivative(dtype):
    x = randn(5, 6, scale=4).to(dtype)
    grad = randn(5, 6, seed=2).to(dtype)
    ref = x.float().requires_grad_()
    mish(ref).backward(grad.float())
    got = torch_npu.npu_mish_backward(on_npu(grad), on_npu(x))
    assert got.dtype == dtype
    assert_close(got, ref.grad, dtype, "npu_mish_backward")


def test_npu_mish_fp16_gradient_overflow_saturates():
    # The derivative peaks at about 1.09 near x = 1.2: a gradient of 65000 leaves fp16.
    check_grad_saturation(torch_npu.npu_mish, on_npu(torch.full((3,), 1.2), torch.float16))
