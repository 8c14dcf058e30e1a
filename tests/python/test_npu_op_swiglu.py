"""torch_npu.npu_swiglu against ``silu(A) * B`` of the halves of the input in plain torch
(tolerances: overlay_support.npu_op_checks)."""

import pytest
import torch
import torch.nn.functional as F

from overlay_support.npu_op_checks import (
    DTYPES,
    check_against_formula,
    check_saturation,
    on_npu,
    randn,
    torch_npu,
)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_forward_backward(dtype, dim):
    def formula(x):
        a, b = x.chunk(2, dim=dim)
        return F.silu(a) * b

    check_against_formula(
        lambda x: torch_npu.npu_swiglu(x, dim=dim), formula, [randn(4, 6, 10, scale=3)], dtype
    )


def test_odd_dimension_is_refused():
    with pytest.raises(RuntimeError, match="not even"):
        torch_npu.npu_swiglu(on_npu(randn(3, 5)))


def test_fp16_overflow_saturates():
    x = on_npu(torch.tensor([[300.0, 300.0]]), torch.float16)
    check_saturation(torch_npu.npu_swiglu, [x])
