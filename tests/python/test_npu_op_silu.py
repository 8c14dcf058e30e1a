"""torch_npu.npu_silu / npu_silu_ against ``x * sigmoid(x)`` in plain torch (tolerances:
overlay_support.npu_op_checks)."""

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


@pytest.mark.parametrize("dtype", DTYPES)
def test_npu_silu_forward_backward(dtype):
    check_against_formula(
        torch_npu.npu_silu, lambda x: x * torch.sigmoid(x), [randn(7, 9, scale=4)], dtype
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_npu_silu_in_place(dtype):
    x = randn(3, 5, scale=4).to(dtype)
    t = on_npu(x)
    out = torch_npu.npu_silu_(t)
    assert out is t
    assert_close(t, x.float() * torch.sigmoid(x.float()), dtype, "npu_silu_")


def test_npu_silu_in_place_under_autograd():
    leaf = on_npu(randn(6), grad=True)
    y = leaf * 1.0
    torch_npu.npu_silu_(y)
    y.sum().backward()
    ref = leaf.detach().cpu().clone().requires_grad_()
    (ref * torch.sigmoid(ref)).sum().backward()
    torch.testing.assert_close(leaf.grad.cpu(), ref.grad)


def test_npu_silu_fp16_overflow_saturates():
    # |silu(x)| <= |x|: the gradient overflows (derivative about 1.1 at x = 2.4).
    x = on_npu(torch.full((3,), 2.4), torch.float16)
    check_grad_saturation(torch_npu.npu_silu, x)
