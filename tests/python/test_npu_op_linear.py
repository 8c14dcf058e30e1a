"""torch_npu.npu_linear on the emulated NPU against ``x @ w.T + b`` in plain torch (tolerances:
overlay_support.npu_op_checks)."""

import pytest
import torch

from overlay_support.npu_op_checks import (
    DTYPES,
    check_against_formula,
    check_saturation,
    on_npu,
    randn,
    torch_npu,
)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("with_bias", [True, False])
def test_npu_linear_forward_backward(dtype, with_bias):
    x, w, b = randn(6, 10, seed=1), randn(4, 10, seed=2), randn(4, seed=3)
    if with_bias:
        check_against_formula(
            torch_npu.npu_linear, lambda x, w, b: x @ w.t() + b, [x, w, b], dtype, grads=(0, 1, 2)
        )
    else:
        check_against_formula(
            torch_npu.npu_linear, lambda x, w: x @ w.t(), [x, w], dtype, grads=(0, 1)
        )


def test_npu_linear_fp16_overflow_saturates():
    x = on_npu(torch.full((2, 8), 300.0), torch.float16)
    w = on_npu(torch.full((3, 8), 300.0), torch.float16)
    check_saturation(torch_npu.npu_linear, [x, w])


def test_npu_linear_is_exposed_where_scripts_call_it():
    assert torch.npu_linear is torch_npu.npu_linear
    x = on_npu(randn(2, 3))
    assert torch.npu_linear(x, on_npu(randn(5, 3, seed=4))).shape == (2, 5)


def test_npu_linear_refuses_non_2d_input():
    with pytest.raises(RuntimeError, match="2-D"):
        torch_npu.npu_linear(on_npu(randn(2, 3, 4)), on_npu(randn(5, 4)))
