"""torch_npu's convolutions (npu_conv2d, npu_conv3d, npu_convolution, npu_conv_transpose2d,
npu_convolution_transpose) against torch.nn.functional's in fp32, forward and the gradients
of input, weight and bias (tolerances: overlay_support.npu_op_checks)."""

import pytest
import torch.nn.functional as F

from overlay_support.npu_op_checks import DTYPES, check_against_formula, on_npu, randn, torch_npu


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["npu_conv2d", "npu_convolution"])
def test_conv2d(dtype, name):
    op = getattr(torch_npu, name)
    check_against_formula(
        lambda x, w, b: op(x, w, b, [2, 1], [1, 0], [1, 2], 2),
        lambda x, w, b: F.conv2d(x, w, b, (2, 1), (1, 0), (1, 2), 2),
        [randn(2, 4, 7, 8, seed=1), randn(6, 2, 3, 3, seed=2, scale=0.3), randn(6, seed=3)],
        dtype,
        grads=(0, 1, 2),
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["npu_conv3d", "npu_convolution"])
def test_conv3d(dtype, name):
    op = getattr(torch_npu, name)
    check_against_formula(
        lambda x, w: op(x, w, None, [1, 1, 1], [1, 1, 1], [1, 1, 1], 1),
        lambda x, w: F.conv3d(x, w, None, 1, 1, 1, 1),
        [randn(1, 2, 4, 5, 5, seed=4), randn(3, 2, 3, 3, 3, seed=5, scale=0.3)],
        dtype,
        grads=(0, 1),
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["npu_conv_transpose2d", "npu_convolution_transpose"])
def test_conv_transpose2d(dtype, name):
    op = getattr(torch_npu, name)
    check_against_formula(
        lambda x, w, b: op(x, w, b, [1, 0], [1, 0], [2, 1], [1, 1], 1),
        lambda x, w, b: F.conv_transpose2d(x, w, b, (2, 1), (1, 0), (1, 0), 1, (1, 1)),
        [randn(2, 3, 5, 4, seed=6), randn(3, 4, 3, 3, seed=7, scale=0.3), randn(4, seed=8)],
        dtype,
        grads=(0, 1, 2),
    )


def test_shapes_are_checked():
    with pytest.raises(RuntimeError, match="4-D"):
        torch_npu.npu_conv2d(
            on_npu(randn(1, 2, 5)), on_npu(randn(1, 2, 3)), None, [1, 1], [0, 0], [1, 1], 1
        )
    with pytest.raises(RuntimeError, match="stride needs 2 values"):
        torch_npu.npu_conv2d(
            on_npu(randn(1, 2, 5, 5)), on_npu(randn(1, 2, 3, 3)), None, [1, 1, 1], [0, 0], [1, 1], 1
        )
