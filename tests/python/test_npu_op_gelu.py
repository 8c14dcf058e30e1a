"""torch_npu.npu_gelu (approximate 'none' and 'tanh') against the GELU formulas in plain torch
(tolerances: overlay_support.npu_op_checks)."""

import math

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


def erf_gelu(x):
    return x * 0.5 * (1 + torch.erf(x / math.sqrt(2)))


def tanh_gelu(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate,formula", [("none", erf_gelu), ("tanh", tanh_gelu)])
def test_npu_gelu_forward_backward(dtype, approximate, formula):
    check_against_formula(
        lambda x: torch_npu.npu_gelu(x, approximate=approximate),
        formula,
        [randn(4, 33, scale=3)],
        dtype,
    )


def test_npu_gelu_default_is_erf():
    x = on_npu(randn(50, scale=3))
    torch.testing.assert_close(torch_npu.npu_gelu(x).cpu(), erf_gelu(x.cpu()))


def test_npu_gelu_fp16_overflow_saturates():
    # |gelu(x)| <= |x|: the gradient overflows (derivative about 1.13 at x = 1.5).
    x = on_npu(torch.full((3,), 1.5), torch.float16)
    for approximate in ("none", "tanh"):
        check_grad_saturation(lambda x: torch_npu.npu_gelu(x, approximate=approximate), x)


def test_npu_gelu_rejects_unknown_approximation():
    with pytest.raises(RuntimeError, match="approximate"):
        torch_npu.npu_gelu(on_npu(randn(3)), approximate="sigmoid")
