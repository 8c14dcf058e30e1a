"""torch_npu.fast_gelu / npu_fast_gelu against FastGelu's formula
``x / (1 + exp(-1.702|x|)) * exp(0.851 (x - |x|))`` in plain torch (tolerances:
overlay_support.npu_op_checks)."""

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


def formula(x):
    return x / (1 + torch.exp(-1.702 * x.abs())) * torch.exp(0.851 * (x - x.abs()))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["fast_gelu", "npu_fast_gelu"])
def test_fast_gelu_forward_backward(dtype, name):
    check_against_formula(getattr(torch_npu, name), formula, [randn(5, 16, scale=3)], dtype)


def test_fast_gelu_matches_the_documented_example():
    out = torch_npu.fast_gelu(on_npu(torch.tensor([0.5991, 0.4094])))
    torch.testing.assert_close(out.cpu(), torch.tensor([0.4403, 0.2733]), rtol=0, atol=1e-4)


def test_fast_gelu_fp16_overflow_saturates():
    # |fast_gelu(x)| <= |x|, so only its gradient overflows: the derivative is about 1.13 at
    # x = 1.5, and 65000 * 1.13 exceeds 65504.
    x = on_npu(torch.full((4,), 1.5), torch.float16)
    check_grad_saturation(torch_npu.fast_gelu, x)


def test_fast_gelu_on_torch_namespace():
    assert torch.fast_gelu is torch_npu.fast_gelu
