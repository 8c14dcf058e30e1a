"""torch_npu.npu_rms_norm against ``x / sqrt(mean(x^2) + eps) * gamma`` in plain torch, and its
rstd output (tolerances: overlay_support.npu_op_checks)."""

import pytest
import torch

from overlay_support.npu_op_checks import (
    DTYPES,
    assert_close,
    check_against_formula,
    check_saturation,
    on_npu,
    randn,
    torch_npu,
)


def formula(x, gamma, eps=1e-6, dims=1):
    axes = tuple(range(-dims, 0))
    return x / torch.sqrt((x * x).mean(axes, keepdim=True) + eps) * gamma


@pytest.mark.parametrize("dtype", DTYPES)
def test_forward_backward(dtype):
    x, gamma = randn(2, 5, 16, scale=3), randn(16, seed=2)
    check_against_formula(
        lambda x, g: torch_npu.npu_rms_norm(x, g)[0], formula, [x, gamma], dtype, grads=(0, 1)
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_two_dim_gamma_and_epsilon(dtype):
    x, gamma = randn(3, 4, 8), randn(4, 8, seed=2)
    check_against_formula(
        lambda x, g: torch_npu.npu_rms_norm(x, g, epsilon=1e-2)[0],
        lambda x, g: formula(x, g, 1e-2, dims=2),
        [x, gamma],
        dtype,
        grads=(0, 1),
    )


def test_rstd_output():
    x = randn(2, 3, 8)
    for dtype in (torch.float32, torch.float16):
        y, rstd = torch_npu.npu_rms_norm(on_npu(x, dtype), on_npu(torch.ones(8), dtype))
        assert rstd.dtype == torch.float32 and rstd.shape == (2, 3, 1)
        assert rstd.device.type == "npu" and not rstd.requires_grad
        xf = x.to(dtype).float()
        torch.testing.assert_close(
            rstd.cpu(), 1 / torch.sqrt((xf * xf).mean(-1, keepdim=True) + 1e-6)
        )
    _, rstd2 = torch_npu.npu_rms_norm(on_npu(x), on_npu(torch.ones(3, 8)))
    assert rstd2.shape == (2, 1, 1)


def test_fp16_gamma_in_fp32():
    # Ascend A2 accepts an fp16 input with an fp32 gamma: the output keeps the input's dtype.
    x, gamma = randn(4, 8), randn(8, seed=2)
    y, _ = torch_npu.npu_rms_norm(on_npu(x, torch.float16), on_npu(gamma))
    assert_close(y, formula(x.half().float(), gamma), torch.float16, "forward")


def test_fp16_overflow_saturates():
    x = on_npu(randn(2, 8), torch.float16)
    gamma = on_npu(torch.full((8,), 60000.0), torch.float16)
    check_saturation(lambda x, g: torch_npu.npu_rms_norm(x, g)[0], [x, gamma])
