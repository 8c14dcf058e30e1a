"""torch_npu.npu_layer_norm_eval against ``(x - mean) / sqrt(var + eps) * w + b`` in plain torch
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


def formula(x, w=None, b=None, dims=1, eps=1e-5):
    axes = tuple(range(-dims, 0))
    mean = x.mean(axes, keepdim=True)
    var = ((x - mean) ** 2).mean(axes, keepdim=True)
    y = (x - mean) / torch.sqrt(var + eps)
    return y * (w if w is not None else 1) + (b if b is not None else 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_with_weight_and_bias(dtype):
    x, w, b = randn(6, 16, scale=3), randn(16, seed=2), randn(16, seed=3)
    check_against_formula(
        lambda x, w, b: torch_npu.npu_layer_norm_eval(x, [16], w, b),
        formula,
        [x, w, b],
        dtype,
        grads=(0, 1, 2),
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_two_normalized_dims_without_affine(dtype):
    check_against_formula(
        lambda x: torch_npu.npu_layer_norm_eval(x, (4, 5), eps=1e-3),
        lambda x: formula(x, dims=2, eps=1e-3),
        [randn(3, 4, 5)],
        dtype,
    )


def test_documented_example():
    x = torch.tensor([[0.1863, 0.3755, 0.1115, 0.7308], [0.6004, 0.6832, 0.8951, 0.2087]])
    out = torch_npu.npu_layer_norm_eval(
        on_npu(x), x.shape[1:], on_npu(torch.ones(4)), on_npu(torch.zeros(4)), 1e-5
    )
    want = torch.tensor([[-0.6879, 0.1022, -1.0002, 1.5859], [0.0143, 0.3474, 1.1999, -1.5616]])
    torch.testing.assert_close(out.cpu(), want, rtol=0, atol=2e-4)


def test_fp16_overflow_saturates():
    x = on_npu(randn(2, 8), torch.float16)
    w = on_npu(torch.full((8,), 60000.0), torch.float16)
    check_saturation(lambda x, w: torch_npu.npu_layer_norm_eval(x, [8], w), [x, w])
