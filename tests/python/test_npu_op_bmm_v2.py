"""torch_npu.npu_bmmV2 against ``torch.matmul`` in plain torch, with broadcast batches
(tolerances: overlay_support.npu_op_checks)."""

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
@pytest.mark.parametrize(
    "shapes",
    [
        ((10, 3, 4), (10, 4, 5)),
        ((2, 3, 4, 6), (2, 3, 6, 5)),
        ((2, 3, 4, 6), (6, 5)),
        ((2, 1, 4, 6), (3, 6, 2)),
    ],
)
def test_npu_bmmv2_forward_backward(dtype, shapes):
    a, b = randn(*shapes[0], seed=1), randn(*shapes[1], seed=2)
    check_against_formula(
        lambda a, b: torch_npu.npu_bmmV2(a, b, []), torch.matmul, [a, b], dtype, grads=(0, 1)
    )


def test_npu_bmmv2_output_sizes():
    a, b = on_npu(randn(2, 3, 4)), on_npu(randn(2, 4, 5))
    assert torch_npu.npu_bmmV2(a, b, [2, 3, 5]).shape == (2, 3, 5)
    assert torch_npu.npu_bmmV2(a, b, [6, 5]).shape == (6, 5)


def test_npu_bmmv2_fp16_overflow_saturates():
    a = on_npu(torch.full((2, 3, 8), 200.0), torch.float16)
    b = on_npu(torch.full((2, 8, 3), 200.0), torch.float16)
    check_saturation(lambda a, b: torch_npu.npu_bmmV2(a, b, []), [a, b])
